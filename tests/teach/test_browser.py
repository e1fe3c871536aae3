"""A real browser drives every explorer of the notebooks (FDR vs SPR in 03; GAE vs TB-GAE and the per-turn
rewards in 04): JupyterLab headless on loopback, Debian's Chromium through Playwright, the notebook run, a slider
of each widget moved, the plotted values read back, and a screenshot of each widget before and after (under
$RSI_LITE_SCREENSHOTS when set: the docs show them, docs/img/).  Run: pytest tests/teach/test_browser.py

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

from ..conftest import REPO

CHROMIUM = "/usr/bin/chromium"
WIDGETS = {  # notebook: [(screenshot name, which plot, which slider, key, presses, which trace, how it must move)]
    "03_reward_shaping.ipynb": [("03_reward_shaping", 0, 0, "ArrowRight", 6, 0, "fdr")],  # D_f 5 -> 11: FDR pays less
    "04_tb_gae.ipynb": [
        ("04_tb_gae", 0, 0, "ArrowLeft", 10, 1, "gae"),  # gamma per token .95 -> .85: token-level GAE decays more
        ("04_tb_gae-turns", 1, 5, "ArrowLeft", 10, 0, "turns"),  # lambda per turn .95 -> .45: less blame flows back
    ],
}
"""Sliders are counted over the page (the 04 GAE explorer has five, so the per-turn explorer's first is the sixth),
plots over the notebook's plotly outputs, in order."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=sorted(WIDGETS))
def lab(tmp_path, request):
    NOTEBOOK = request.param
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
    for _ in range(360):  # a loaded machine (CI beside other work) starts it slowly
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
    yield base, token, tmp_path, NOTEBOOK
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


PLOTS = "document.querySelectorAll('.jp-OutputArea .js-plotly-plot')"


def _plot_values(page, plot: int, trace: int) -> list:
    return page.evaluate(f"([n, i]) => {{ const p = {PLOTS}[n]; return p && p.data && p.data[i] ? p.data[i].y : null; }}",
                         [plot, trace])


def test_moving_a_slider_changes_the_plotted_values(lab):
    from playwright.sync_api import sync_playwright

    base, token, tmp, notebook = lab
    shots = Path(os.environ.get("RSI_LITE_SCREENSHOTS") or tmp)
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            moved = _drive(page, base, token, notebook, shots)
        except Exception:
            page.screenshot(path=str(tmp / "failure.png"), full_page=True)
            print(f"screenshot: {tmp / 'failure.png'}; JupyterLab log tail:\n{(tmp / 'lab.log').read_text()[-3000:]}")
            raise
        finally:
            browser.close()
    for (name, *_, how), (before, after) in zip(WIDGETS[notebook], moved):
        assert before and after and len(before) == len(after), name
        if how == "fdr":  # FDR = P / D_f: a larger divisor pays every failure less
            assert after[-1] < before[-1] and after[0] == before[0] == 0
        elif how == "gae":  # token-level GAE at a lower gamma: the first action token's advantage falls, the last stays
            assert after[0] < before[0] and after[-1] == pytest.approx(before[-1])
        else:  # the final reward, critic 0.5: turn 1's share of turn 3's blame is lambda^2, turn 3's own stays -0.5
            assert after[0] > before[0] and after[-1] == pytest.approx(before[-1]) == pytest.approx(-0.5)
        for when in ("before", "after"):
            assert (shots / f"{name}-{when}.png").stat().st_size > 10_000


def _drive(page, base: str, token: str, notebook: str, shots: Path) -> list:
    page.goto(f"{base}/lab/tree/{notebook}?token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=180_000)
    try:  # a fresh JupyterLab may ask which kernel to start: the notebook's own (Python 3)
        page.wait_for_selector(".jp-Dialog button.jp-mod-accept", timeout=15_000)
        page.click(".jp-Dialog button.jp-mod-accept")
    except Exception:  # noqa: BLE001 - no dialog: the kernel started on its own
        pass
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=300_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    last_plot = max(spec[1] for spec in WIDGETS[notebook])
    page.wait_for_function(f"(n) => {{ const p = {PLOTS}[n]; return p && p.data && p.data.length > 0; }}",
                           arg=last_plot, timeout=600_000)
    # the widget redraws in the kernel: wait until the cells after it (a few episodes in 03) have run, or a slider
    # move queues behind them (a loaded machine's CI run timed out so, the slider at 18 and the plot at 12)
    page.wait_for_function("() => ![...document.querySelectorAll('.jp-InputPrompt')].some(e => e.textContent.includes('*'))"
                           " && document.querySelector(\".jp-Notebook-ExecutionIndicator[data-status='idle']\")",
                           timeout=900_000)
    moved = []
    for name, plot, slider, key, presses, trace, _ in WIDGETS[notebook]:
        widget = page.locator(".jp-OutputArea-output:has(.js-plotly-plot)").nth(plot)
        widget.scroll_into_view_if_needed()
        before = _plot_values(page, plot, trace)
        widget.screenshot(path=str(shots / f"{name}-before.png"))
        handle = page.locator(".widget-slider .noUi-handle").nth(slider)
        handle.click()
        for _ in range(presses):
            handle.press(key)
        page.wait_for_function(
            f"([b, n, i]) => {{ const p = {PLOTS}[n]; return p && p.data && JSON.stringify(p.data[i].y) !== JSON.stringify(b); }}",
            arg=[before, plot, trace], timeout=120_000)
        page.wait_for_timeout(500)  # the redraw settles before the picture
        widget.screenshot(path=str(shots / f"{name}-after.png"))
        moved.append((before, _plot_values(page, plot, trace)))
    return moved
