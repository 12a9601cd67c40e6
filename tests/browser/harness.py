"""What tests/test_browser.py drives: a JupyterLab server on a free local port, and headless Debian
Chromium through Playwright, with the few JupyterLab and nbgrader gestures the test needs.

Whether the test runs is decided by ``AAG_BROWSER_TEST``:

- ``require`` (CI: ``.ci/run`` sets it; also the default when ``CI`` is set): a missing Chromium or
  Playwright is a failure, never a skip;
- ``auto`` (the default): run when both are here, otherwise skip, saying what is missing and how to
  get it (``./aag test`` installs Chromium itself as root on Debian);
- ``off``: skip.

``AAG_CHROMIUM`` names the browser executable (default: ``chromium`` on PATH, Debian's package).
Playwright's own browser downloads are never used (``playwright install`` needs a network the course
cannot count on); Playwright launches the system's Chromium through ``executable_path``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbgrader_helpers

MODE_ENV = "AAG_BROWSER_TEST"
CHROMIUM_ENV = "AAG_CHROMIUM"

# Text the widget frontend leaves in an output when a widget did not render.
PLACEHOLDERS = ("Loading widget", "Error displaying widget")

# JupyterLab settings for the test's server (a private settings directory, so a learner's own
# settings neither change the test nor get changed by it): no news or update pop-ups over the page.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}


def mode(env=os.environ) -> str:
    return nbgrader_helpers.run_mode(MODE_ENV, env)


def find_chromium(env=os.environ) -> str | None:
    named = env.get(CHROMIUM_ENV)
    if named:
        return named if os.access(named, os.X_OK) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable_reason(env=os.environ) -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    if mode(env) == "off":
        return f"{MODE_ENV}=off"
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("Playwright (`pip install playwright`; it is in the dev extras, so "
                       "./aag installs it)")
    if find_chromium(env) is None:
        if env.get(CHROMIUM_ENV):
            missing.append(f"Chromium: {CHROMIUM_ENV}={env[CHROMIUM_ENV]} is not an executable")
        else:
            missing.append("Chromium (no `chromium` on PATH: ./aag test installs Debian's package "
                           "when run as root on Debian; elsewhere install Chromium and set "
                           f"{CHROMIUM_ENV} to it)")
    if not missing:
        return None
    return "the browser test needs " + " and ".join(missing)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """``jupyter lab`` run the way ``aag lab`` runs it (the course's Python, cwd = the workspace),
    on a free port with a random token, in ``root`` (a throwaway workspace), logging to a file."""

    def __init__(self, root: Path, state: Path):
        self.root, self.state = Path(root), Path(state)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.log_path = self.state / "jupyterlab.log"
        self.proc: subprocess.Popen | None = None
        self.started_in: float | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        """The notebook in a JupyterLab workspace (layout) of its own: pages opened one after the
        other must not restore each other's tabs."""
        layout = "".join(c if c.isalnum() else "-" for c in notebook)
        return f"{self.base}/lab/workspaces/{layout}/tree/{notebook}?token={self.token}"

    def _env(self) -> dict:
        env = dict(os.environ)
        for name, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                          ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                          ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
            env[name] = str(self.state / sub)
            (self.state / sub).mkdir(parents=True, exist_ok=True)
        for rel, values in LAB_SETTINGS.items():
            path = self.state / "settings" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        return env

    def start(self, timeout: float = 120) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--ServerApp.allow_root=True")      # CI runs as root
        t0 = time.monotonic()
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=self._env(), stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        log.close()
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode} before it "
                                   f"answered; log {self.log_path}:\n{self.log_tail()}")
            try:
                self.api("status")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"jupyter lab did not answer on port {self.port} within "
                                   f"{timeout:.0f} s; log {self.log_path}:\n{self.log_tail()}")
            time.sleep(0.25)
        self.started_in = time.monotonic() - t0

    def api(self, path: str, method: str = "GET", timeout: float = 10):
        request = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 40) -> str:
        return nbgrader_helpers.log_tail(self.log_path, lines)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        # Kernels run in sessions of their own: shut them down through the server first.
        try:
            for kernel in self.api("kernels"):
                self.api(f"kernels/{kernel['id']}", method="DELETE")
        except Exception:
            pass
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


# --- JupyterLab gestures (a Playwright Page showing one notebook) -------------------------------

PANEL = ".jp-NotebookPanel:visible"

_STATUS = """() => {
  const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent);
  const status = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
  return status ? status.dataset.status : null;
}"""

# Set window.aagRunStarted once any cell of the notebook shows "[*]" (queued or running): a short
# notebook can run through between two polls, so a watcher records it instead.
_WATCH_QUEUE = """() => {
  window.aagRunStarted = false;
  const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent);
  const seen = () => [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
    .some(e => e.textContent.includes('*'));
  const observer = new MutationObserver(() => {
    if (seen()) { window.aagRunStarted = true; observer.disconnect(); }
  });
  observer.observe(panel, {subtree: true, childList: true, characterData: true});
}"""

# Run All is over when no cell waits or runs ("[*]") and the kernel is idle, or when the kernel
# died. (A Run All that an error stopped leaves the rest unrun: the caller reads which from the
# saved notebook.)
_RUN_FINISHED = """() => {
  const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent);
  const status = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
  if (status && status.dataset.status === 'dead') return true;
  if (!status || status.dataset.status !== 'idle') return false;
  return ![...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
    .some(e => e.textContent.includes('*'));
}"""


def open_notebook(page, lab: Lab, path: str, timeout_s: float = 180) -> None:
    """Open the notebook ``path`` (relative to the server's root) and wait for its kernel: started
    on the server, idle, and the page connected to it. (The page's indicator says "idle" before
    any kernel exists; a Run All clicked then starts a second kernel and loses cells.)"""
    page.goto(lab.url(path), timeout=timeout_s * 1000)
    page.locator(f"{PANEL} .jp-Notebook-cell").first.wait_for(timeout=timeout_s * 1000)
    # Fold the file browser away: the notebook (and its screenshots) get the page's width.
    sidebar_tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
    if sidebar_tab.count():
        sidebar_tab.first.click()
    deadline = time.monotonic() + timeout_s
    steady, last = 0, None
    while steady < 3:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the kernel of {path} was not ready within {timeout_s:.0f} s "
                               f"(server sessions {last}, page status {page.evaluate(_STATUS)})")
        try:
            sessions = [(s["kernel"]["id"], s["kernel"]["execution_state"])
                        for s in lab.api("sessions") if s.get("path") == path]
        except Exception as exc:              # the server is busy starting the kernel
            sessions = [("?", str(exc))]
        ready = (len(sessions) == 1 and sessions[0][1] == "idle"
                 and page.evaluate(_STATUS) == "idle")
        steady = steady + 1 if ready and sessions == last else 0
        last = sessions
        page.wait_for_timeout(500)


def run_all(page, timeout_s: float = 600) -> float:
    """Run > Run All Cells from the menu bar; wait until it finished. Returns the seconds taken."""
    t0 = time.monotonic()
    page.evaluate(_WATCH_QUEUE)
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
    page.wait_for_function("() => window.aagRunStarted", timeout=60_000)
    page.wait_for_function(_RUN_FINISHED, timeout=timeout_s * 1000, polling=500)
    page.wait_for_timeout(1000)          # late outputs (widget views) settle
    page.wait_for_function(_RUN_FINISHED, timeout=timeout_s * 1000, polling=500)
    return time.monotonic() - t0


def save(page, timeout_s: float = 60) -> None:
    """File > Save Notebook, then wait until the tab no longer shows unsaved changes."""
    page.locator(".lm-MenuBar-item", has_text="File").first.click()
    page.locator('.lm-Menu-item[data-command="docmanager:save"]').click()
    page.wait_for_function(
        "() => !document.querySelector('.jp-mod-current.jp-mod-dirty, .jp-mod-dirty.lm-mod-current')",
        timeout=timeout_s * 1000)


def saved_problems(path: Path) -> tuple[list[str], list[int]]:
    """From a notebook saved by the browser: (each error output, as "cell N: Name: message"; the
    1-based positions of code cells that never ran). Errors are read from the file, not the page:
    JupyterLab renders an error and text on stderr alike (application/vnd.jupyter.stderr)."""
    cells = json.loads(Path(path).read_text())["cells"]
    errors, unrun = [], []
    for n, cell in enumerate(cells, 1):
        if cell["cell_type"] != "code":
            continue
        if cell.get("execution_count") is None:
            unrun.append(n)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append(f"cell {n}: {out.get('ename')}: {out.get('evalue')}")
    return errors, unrun


def placeholders(page) -> list[str]:
    """Outputs showing a widget that did not render ("Loading widget...", "Error displaying ...")."""
    found = []
    for text in page.locator(f"{PANEL} .jp-OutputArea-output").all_inner_texts():
        for line in text.splitlines():
            if any(p in line for p in PLACEHOLDERS):
                found.append(line.strip())
    return found


def aid_problem(page, name: str) -> str | None:
    """None when the visual aid ``name`` rendered by the contract (a visible element with classes
    ``aag-visual aag-visual-<name>``, of non-zero size, not a widget placeholder); else what is
    wrong."""
    elements = page.locator(f"{PANEL} .aag-visual-{name}")
    count = elements.count()
    if count == 0:
        return (f"no element with class aag-visual-{name} in the notebook: the aid is not "
                f"displayed, or its widget never rendered")
    problems = []
    for i in range(count):
        element = elements.nth(i)
        classes = (element.get_attribute("class") or "").split()
        if "aag-visual" not in classes:
            problems.append(f"#{i + 1} lacks the class aag-visual")
            continue
        # Scroll it on screen (the notebook may skip painting cells out of view); a JS scroll,
        # since Playwright's own waits for the element to be visible first.
        element.evaluate("e => e.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(200)
        box = element.bounding_box()
        if not element.is_visible() or not box or box["width"] < 1 or box["height"] < 1:
            problems.append(f"#{i + 1} has no visible area ({box})")
            continue
        text = element.inner_text()
        shown = [p for p in PLACEHOLDERS if p in text]
        if shown:
            problems.append(f"#{i + 1} shows {shown[0]!r} (its widget did not render)")
            continue
        return None                      # one rendered instance is enough
    return f"aag-visual-{name}: " + "; ".join(problems)


def screenshot_aid(page, name: str, path: Path, max_height: int = 6000) -> Path:
    """One aid, whole: the viewport grows to the aid's height first (the notebook scrolls inside
    the page, so an aid taller than the window would be cut to what is visible)."""
    element = page.locator(f"{PANEL} .aag-visual.aag-visual-{name}").first
    viewport = page.viewport_size
    box = element.bounding_box() or {"height": 0}
    page.set_viewport_size({"width": viewport["width"],
                            "height": int(min(max(viewport["height"], box["height"] + 400),
                                              max_height))})
    try:
        page.wait_for_timeout(300)
        element.scroll_into_view_if_needed(timeout=30_000)
        element.screenshot(path=str(path), timeout=30_000)
    finally:
        page.set_viewport_size(viewport)
    return path


_NOTEBOOK_EXTENT = """() => {
  const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent);
  const scroller = panel.querySelector('.jp-WindowedPanel-outer');
  scroller.scrollTop = 0;
  const top = scroller.getBoundingClientRect().top;
  const bottoms = [...panel.querySelectorAll('.jp-Notebook-cell')]
    .map(c => c.getBoundingClientRect().bottom - top);
  return {content: Math.max(0, ...bottoms) + 24, visible: scroller.clientHeight};
}"""


def screenshot_notebook(page, path: Path, max_height: int = 15000) -> Path:
    """The whole notebook in one picture: the viewport is stretched to the notebook's height (the
    notebook scrolls inside the page, so a full-page screenshot alone shows one screen of it)."""
    viewport = page.viewport_size
    extent = page.evaluate(_NOTEBOOK_EXTENT)
    height = viewport["height"] - extent["visible"] + extent["content"]
    page.set_viewport_size({"width": viewport["width"],
                            "height": int(min(max(height, viewport["height"]), max_height))})
    try:
        page.wait_for_timeout(500)
        page.evaluate(_NOTEBOOK_EXTENT)       # back to the top after the resize
        page.locator(PANEL).first.screenshot(path=str(path), timeout=60_000)
    finally:
        page.set_viewport_size(viewport)
    return path


def validate(page, timeout_s: float = 600) -> tuple[bool, str]:
    """Press nbgrader's Validate toolbar button and read its dialog: (passed, the dialog's text).

    The nbgrader lab extension (0.9.x) saves the notebook, runs the validator on the server, and
    shows a dialog whose ``#validation-message`` has the class ``validation-success`` only when
    every test cell passed; other outcomes ("Validation failed", "Version Mismatch", failed or
    changed cells) are dialogs without it."""
    page.locator(f"{PANEL} .jp-NotebookPanel-toolbar .validate-button").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=timeout_s * 1000)
    text = dialog.inner_text()
    passed = page.locator(".jp-Dialog #validation-message.validation-success").count() > 0
    dialog.locator(".jp-Dialog-button.jp-mod-accept").first.click()
    dialog.wait_for(state="detached", timeout=30_000)
    return passed, text.strip()
