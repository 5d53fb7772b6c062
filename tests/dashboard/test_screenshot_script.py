"""scripts/dashboard-screenshot.py against a running dashboard (headless Chromium; skipped without it)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


@pytest.mark.skipif(not (shutil.which("chromium") and shutil.which("chromedriver")),
                    reason="chromium and chromedriver are not installed (make system-packages)")
def test_the_script_pictures_the_whole_page_and_quotes_its_text(dashboard_process, tmp_path):
    url = dashboard_process("--plan-log", str(DATA / "plan-log.jsonl"))
    out = tmp_path / "page.png"
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "dashboard-screenshot.py"), url, str(out),
                          "--wait", "2"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == ""
    assert "trends-1-1763949990" in run.stderr   # the page's text, quoted
    picture = out.read_bytes()
    assert picture[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(picture[16:20], "big"), int.from_bytes(picture[20:24], "big")
    assert width == 1400 and height >= 900
