#!/usr/bin/env python3
"""A screenshot of a dashboard page in headless Chromium, the page's whole height.

    .venv/bin/python scripts/dashboard-screenshot.py http://127.0.0.1:8090/topology?id=<id> docs/dashboard-demo.png

Needs Debian's ``chromium`` and ``chromedriver`` (``make system-packages``) and Selenium (the ``test``
extra). It waits ``--wait`` seconds for the page's first refresh, then prints the page's text to standard
error, so that what the picture shows can be quoted.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("out")
    parser.add_argument("--wait", type=float, default=10.0, help="seconds before the picture (default 10)")
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args()
    binary, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (binary and driver_path):
        parser.error("chromium and chromedriver are not installed (make system-packages)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={args.width},1200"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        driver.get(args.url)
        time.sleep(args.wait)
        height = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(args.width, min(max(height + 40, 900), 6000))
        time.sleep(1.0)   # the charts redraw at the new size
        driver.save_screenshot(args.out)
        print(driver.find_element("tag name", "body").text, file=sys.stderr)
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
