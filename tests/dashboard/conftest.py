"""Browser fixtures: the dashboard as a real process (the CLI a user runs) and headless Chromium
driven by Selenium through Debian's chromium-driver. Screenshots and the browser console go under
``test-artifacts/dashboard/`` (gitignored) so a failure in CI can be looked at."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts")) / "dashboard"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, process: subprocess.Popen | None = None, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"dashboard exited with {process.returncode}: {process.stderr.read()}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout_s} s")


@pytest.fixture
def dashboard_process():
    """Factory: ``dashboard_process(*cli_args)`` → base URL of a running ``storm-planner dashboard``."""
    started = []

    def start(*args: str) -> str:
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "storm_planner", "dashboard", "--port", str(port), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(process)
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/api/health", process)
        return url

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _chromium() -> tuple[str, str] | None:
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    return (binary, driver) if binary and driver else None


@pytest.fixture
def browser(request):
    """Headless Chromium (Selenium); its console is collected for the no-errors check and, with a
    screenshot, written to the artifacts directory when the test ends."""
    found = _chromium()
    if found is None:
        pytest.skip("chromium and chromedriver are not installed (make system-packages)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,2200"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(found[1]))
    driver.set_page_load_timeout(30)
    yield driver
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.replace("/", "_")
    try:
        driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    finally:
        driver.quit()


@pytest.fixture
def wordcount_project() -> Path:
    """The cluster tests' tiny streamparse project (tests/cluster/fixtures/wordcount)."""
    return Path(__file__).resolve().parents[1] / "cluster" / "fixtures" / "wordcount"
