"""A real browser drives the FDR vs SPR explorer: JupyterLab headless on loopback, Debian's Chromium through
Playwright, the notebook run, a slider moved, the plotted values read back.  Run: pytest tests/test_browser.py

Needs /usr/bin/chromium (`apt-get install chromium`; never `playwright install`) and the playwright package.
"""

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .conftest import REPO

CHROMIUM = "/usr/bin/chromium"
NOTEBOOK = "03_reward_shaping.ipynb"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"{CHROMIUM} missing (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api")
    work = tmp_path / "lab"
    work.mkdir()
    shutil.copy(REPO / "notebooks" / NOTEBOOK, work / NOTEBOOK)
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "RSI_LITE_BUDGET": "small", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(REPO), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}", "--ServerApp.open_browser=False"],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "lab.log", "w"), env=env, cwd=work)
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
    yield base, token, tmp_path
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def _plot_values(page) -> list:
    return page.evaluate("() => { const p = document.querySelector('.jp-OutputArea .js-plotly-plot');"
                         " return p && p.data ? p.data[0].y : null; }")


def test_moving_the_divisor_slider_changes_the_plotted_rewards(lab):
    from playwright.sync_api import sync_playwright

    base, token, tmp = lab
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            before, after = _drive(page, base, token)
        except Exception:
            page.screenshot(path=str(tmp / "failure.png"), full_page=True)
            print(f"screenshot: {tmp / 'failure.png'}; JupyterLab log tail:\n{(tmp / 'lab.log').read_text()[-3000:]}")
            raise
        finally:
            browser.close()
    assert before and after and len(before) == len(after)
    # FDR = P / D_f: a larger divisor pays every failure less
    assert after[-1] < before[-1] and after[0] == before[0] == 0


def _drive(page, base: str, token: str):
    page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    try:  # a fresh JupyterLab may ask which kernel to start: the notebook's own (Python 3)
        page.wait_for_selector(".jp-Dialog button.jp-mod-accept", timeout=15_000)
        page.click(".jp-Dialog button.jp-mod-accept")
    except Exception:  # noqa: BLE001 - no dialog: the kernel started on its own
        pass
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    page.wait_for_function("() => { const p = document.querySelector('.jp-OutputArea .js-plotly-plot');"
                           " return p && p.data && p.data.length > 0; }", timeout=240_000)
    before = _plot_values(page)
    handle = page.locator(".widget-slider .noUi-handle").first
    handle.click()
    for _ in range(6):
        handle.press("ArrowRight")  # D_f 12 -> 18
    page.wait_for_function(
        "(b) => { const p = document.querySelector('.jp-OutputArea .js-plotly-plot');"
        " return p && p.data && JSON.stringify(p.data[0].y) !== JSON.stringify(b); }", arg=before, timeout=60_000)
    return before, _plot_values(page)
