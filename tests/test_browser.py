"""Chapter 1 in a real browser: JupyterLab on a free local port, headless Chromium (Debian's
package) driven by Playwright. Run All on the worked solution of chapter 1, then check that no cell
errored, that every visual aid named in EXPECTED_AIDS rendered (a visible `.aag-visual-<name>`
element, not a "Loading widget" placeholder), and that nbgrader's Validate button passes; screenshots
of the notebook and of each aid go to a temporary directory, and to docs/screenshots/ with
AAG_SCREENSHOTS=docs/screenshots.

The same machinery is first proven on tests/browser/demo.ipynb, which also holds broken aids the
checks must reject and a failing nbgrader test cell that the error check must see and Validate
must fail.

A third test opens a one-cell notebook calling ``ag.reveal(...)`` beside a learner's chapter 3: the
cell refuses before a self-grade and shows the model answer once a passing one is recorded.

Where Chromium or Playwright is missing these tests skip, saying why; with AAG_BROWSER_TEST=require
(CI: .ci/run sets it, and so does CI=...) they fail instead. See tests/browser/harness.py.
"""

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from autograder import cli
from browser import harness

# The visual aids chapter 1 must show, by their contract names (`aag-visual-<name>`). An aid listed
# here that chapter 1 does not display fails the chapter's test, named in its message.
EXPECTED_AIDS = ("grid-explorer", "access-picture", "roofline", "code-viewer", "hints")

CHAPTER = "ch01_introduction"
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "browser"
SCREENSHOTS_ENV = "AAG_SCREENSHOTS"



# --- when the test runs ---------------------------------------------------------------------------

def test_mode_is_require_in_ci_and_auto_elsewhere():
    assert harness.mode({}) == "auto"
    assert harness.mode({"CI": "true"}) == "require"
    assert harness.mode({"CI": "true", "AAG_BROWSER_TEST": "off"}) == "off"
    assert harness.mode({"AAG_BROWSER_TEST": "Require"}) == "require"
    with pytest.raises(ValueError, match="AAG_BROWSER_TEST"):
        harness.mode({"AAG_BROWSER_TEST": "yes"})


def test_unavailable_reason_names_what_is_missing(tmp_path, monkeypatch):
    assert harness.unavailable_reason({"AAG_BROWSER_TEST": "off"}) == "AAG_BROWSER_TEST=off"
    missing = str(tmp_path / "no-chromium")
    reason = harness.unavailable_reason({"AAG_CHROMIUM": missing})
    assert reason and f"AAG_CHROMIUM={missing} is not an executable" in reason
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert harness.find_chromium({"AAG_CHROMIUM": str(fake)}) == str(fake)
    assert harness.find_chromium({"AAG_CHROMIUM": missing}) is None
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)       # import fails
    reason = harness.unavailable_reason({"AAG_CHROMIUM": str(fake)})
    assert reason and reason.startswith("the browser test needs Playwright")


@pytest.fixture
def apt_runs(monkeypatch):
    """cli's Chromium install with apt-get recorded instead of run, and no Chromium on PATH."""
    import subprocess
    runs = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: runs.append(cmd) or
                        subprocess.CompletedProcess(cmd, 0))
    monkeypatch.setattr(cli.shutil, "which", lambda name: None)
    for name in ("AAG_CHROMIUM", "AAG_BROWSER_TEST"):
        monkeypatch.delenv(name, raising=False)
    return runs


def outside_pytest(monkeypatch):
    """cli never installs from inside a test (PYTEST_CURRENT_TEST, set by pytest for each test
    phase); these tests are the exception."""
    monkeypatch.delenv("PYTEST_CURRENT_TEST")


def test_aag_test_installs_chromium_as_root_on_debian(apt_runs, monkeypatch):
    outside_pytest(monkeypatch)
    monkeypatch.setattr(cli, "_debian_root", lambda: None)
    cli._prepare_browser_test([])
    assert apt_runs == [["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium",
                         "fonts-liberation"]]
    apt_runs.clear()
    cli._prepare_browser_test(["tests/test_browser.py::test_chapter1_in_the_browser"])
    assert len(apt_runs) == 1
    apt_runs.clear()
    cli._prepare_browser_test(["tests/test_cli.py"])                         # not selected
    monkeypatch.setattr(cli.shutil, "which", lambda name: f"/usr/bin/{name}")
    cli._prepare_browser_test([])                                        # already there
    monkeypatch.setattr(cli.shutil, "which", lambda name: None)
    monkeypatch.setenv("AAG_BROWSER_TEST", "off")
    cli._prepare_browser_test([])
    assert apt_runs == []


def test_aag_test_elsewhere_installs_nothing_and_says_why(apt_runs, monkeypatch, capsys):
    outside_pytest(monkeypatch)
    monkeypatch.setattr(cli, "_debian_root", lambda: "installing Debian packages needs root")
    cli._prepare_browser_test([])
    assert apt_runs == []
    assert "needs root: it will skip" in capsys.readouterr().out
    assert cli._debian_root() is None or isinstance(cli._debian_root(), str)


# --- fixtures: one JupyterLab and one Chromium for the module -------------------------------------

@pytest.fixture(scope="module")
def browser_available():
    reason = harness.unavailable_reason()
    if reason:
        if harness.mode() == "require":
            pytest.fail(f"{reason}. {harness.MODE_ENV}=require (as in CI): the browser test must "
                        f"run, not skip")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("browser-screenshots")


@pytest.fixture(scope="module")
def lab(browser_available, tmp_path_factory):
    """A throwaway learner workspace (never the repository's course/): chapter 1's worked solution,
    so every cell succeeds, and the fixture notebooks."""
    base = tmp_path_factory.mktemp("browser-lab")
    workspace = base / "workspace"
    (workspace / CHAPTER).mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / CHAPTER / f"{CHAPTER}.ipynb", workspace / CHAPTER)
    shutil.copytree(FIXTURES, workspace / "fixtures", ignore=shutil.ignore_patterns("*.py", "__*"))
    server = harness.Lab(workspace, base / "jupyter")
    server.start(timeout=180)
    print(f"browser test: JupyterLab answered after {server.started_in:.1f} s; log {server.log_path}")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def chromium(lab):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=harness.find_chromium(), headless=True)
        yield browser
        browser.close()


class Notebook:
    """One notebook open in its own page; ``explain`` adds a screenshot and the server's log to a
    failure message."""

    def __init__(self, chromium, lab, shots, path):
        self.lab, self.shots, self.path = lab, shots, path
        self.context = chromium.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.times = {}

    def open(self):
        t0 = time.monotonic()
        try:
            harness.open_notebook(self.page, self.lab, self.path, timeout_s=180)
        except Exception as exc:
            pytest.fail(self.explain(f"opening {self.path}: {exc}"))
        self.times["open"] = time.monotonic() - t0

    def run_all(self, timeout_s):
        try:
            self.times["run all"] = harness.run_all(self.page, timeout_s=timeout_s)
        except Exception as exc:
            pytest.fail(self.explain(f"Run All Cells on {self.path} did not finish: {exc}"))

    def saved_problems(self):
        """Errors and unrun cells, read from the notebook as the browser saves it."""
        harness.save(self.page)
        return harness.saved_problems(self.lab.root / self.path)

    def explain(self, message):
        name = "failure-" + "".join(c if c.isalnum() else "-" for c in message[:40]) + ".png"
        try:
            self.page.screenshot(path=str(self.shots / name), timeout=30_000)
            shot = f"screenshot {self.shots / name}"
        except Exception as exc:
            shot = f"no screenshot ({exc})"
        return f"{message}\n  {shot}\n  JupyterLab log {self.lab.log_path}"

    def close(self):
        self.context.close()


# --- the machinery, proven on a fixture notebook --------------------------------------------------
# Two browser tests, each whole: xdist may run them on two workers, each with its own JupyterLab.

@pytest.mark.slow
def test_machinery_on_the_fixture_notebook(chromium, lab, shots):
    demo = Notebook(chromium, lab, shots, "fixtures/demo.ipynb")
    try:
        demo.open()
        demo.run_all(timeout_s=180)
        page = demo.page
        errors, unrun = demo.saved_problems()
        assert len(errors) == 1 and "AssertionError: deliberate error" in errors[0], demo.explain(
            f"errors: {errors}")
        assert unrun == [], demo.explain(f"cells left unrun: {unrun}")
        # The widget rendered (its classes exist only on a rendered view), so did the static aid.
        problem = harness.aid_problem(page, "demo")
        assert problem is None, demo.explain(problem)
        assert harness.aid_problem(page, "demo-html") is None, demo.explain("static aid")
        assert page.locator(".aag-visual-demo .widget-slider").count() == 1, demo.explain("slider")
        # Broken aids: each rejected, for the right reason.
        assert "Loading widget" in harness.aid_problem(page, "placeholder")
        assert "no visible area" in harness.aid_problem(page, "hidden")
        assert "lacks the class aag-visual" in harness.aid_problem(page, "unclassed")
        assert "no element with class aag-visual-missing" in harness.aid_problem(page, "missing")
        assert harness.placeholders(page) == ["Loading widget..."]
        # Screenshots: one aid, and the whole notebook.
        for png in (harness.screenshot_aid(page, "demo", shots / "demo.png"),
                    harness.screenshot_notebook(page, shots / "demo-notebook.png")):
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # nbgrader's Validate fails the failing test cell (chapter 1's test sees it pass).
        passed, text = harness.validate(page)
        assert not passed, demo.explain(f"Validate passed a failing test cell: {text}")
        assert "failed" in text and "fails on purpose" in text, demo.explain(text)
    finally:
        demo.close()
    print(f"browser test: fixture notebook: {demo.times}")


# --- chapter 1 --------------------------------------------------------------------------------------

def copy_to_docs(pngs):
    """With AAG_SCREENSHOTS=docs/screenshots (relative to the repository, or absolute), each aid's
    screenshot is copied there as <name>.png."""
    target = os.environ.get(SCREENSHOTS_ENV)
    if not target or not pngs:
        return
    target = Path(target) if Path(target).is_absolute() else ROOT / target
    target.mkdir(parents=True, exist_ok=True)
    for png in pngs:
        shutil.copy(png, target / png.name)


def test_screenshots_reach_docs_only_when_asked(tmp_path, monkeypatch):
    png = tmp_path / "shots" / "roofline.png"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG\r\n\x1a\n")
    monkeypatch.delenv(SCREENSHOTS_ENV, raising=False)
    copy_to_docs([png])
    assert not (tmp_path / "docs").exists()
    monkeypatch.setenv(SCREENSHOTS_ENV, str(tmp_path / "docs" / "screenshots"))
    copy_to_docs([png])
    assert (tmp_path / "docs" / "screenshots" / "roofline.png").read_bytes() == png.read_bytes()


@pytest.mark.slow
def test_chapter1_in_the_browser(chromium, lab, shots):
    """Run All on chapter 1's solution; every problem found is listed, not only the first."""
    nb = Notebook(chromium, lab, shots, f"{CHAPTER}/{CHAPTER}.ipynb")
    try:
        nb.open()
        nb.run_all(timeout_s=600)
        page, problems = nb.page, []
        errors, unrun = nb.saved_problems()
        problems += [f"a cell raised: {e}" for e in errors]
        if unrun:
            problems.append(f"code cells that never ran (positions among all cells): {unrun}")
        problems += [f"a widget did not render: {p}" for p in harness.placeholders(page)]
        harness.screenshot_notebook(page, shots / f"{CHAPTER}.png")
        rendered = []
        for name in EXPECTED_AIDS:
            problem = harness.aid_problem(page, name)
            if problem:
                problems.append(f"visual aid {name!r}: {problem}")
            else:
                rendered.append(harness.screenshot_aid(page, name, shots / f"{name}.png"))
        copy_to_docs(rendered)
        t0 = time.monotonic()
        passed, text = harness.validate(page)
        nb.times["validate"] = time.monotonic() - t0
        if not (passed and "passes all the tests" in text):
            problems.append(f"nbgrader Validate did not pass: {text}")
        print(f"browser test: chapter 1: {nb.times}; screenshots in {shots}")
        assert not problems, nb.explain("chapter 1 in JupyterLab:\n  - " + "\n  - ".join(problems))
    finally:
        nb.close()


# --- a written answer's model answer, revealed after a self-grade ----------------------------------

REVEAL_CHAPTER, REVEAL_ID = "ch03_multidimensional", "image_gap_answer"


def _plain_sentences(markdown: str) -> list[str]:
    """The model answer's sentences that Markdown renders as they are written (no emphasis or
    code marks), with their line breaks made spaces, as the rendered page shows them."""
    text = " ".join(markdown.split())
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 40 and not set(s) & set("*`_[")]


@pytest.mark.slow
def test_reveal_in_the_browser(chromium, lab, shots):
    """A learner's cell ``ag.reveal(...)`` in JupyterLab: before a self-grade of the chapter it
    refuses, saying why; once a passing self-grade is recorded beside the notebook (as ``aag
    grade`` records it), the same cell run again shows the model answer, rendered as Markdown."""
    import nbformat

    from autograder.grading.judge import grade_cells
    from autograder.learner import answers

    folder = lab.root / REVEAL_CHAPTER
    folder.mkdir(exist_ok=True)
    path = f"{REVEAL_CHAPTER}/reveal.ipynb"
    release = nbformat.read(str(ROOT / "course" / REVEAL_CHAPTER / f"{REVEAL_CHAPTER}.ipynb"),
                            as_version=4)
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": release.metadata.kernelspec})
    nb.cells = [nbformat.v4.new_code_cell(f'import autograder as ag\nag.reveal("{REVEAL_ID}")')]
    nbformat.write(nb, str(lab.root / path))
    chapter, model = answers.model_answer(REVEAL_ID)
    sentences = _plain_sentences(model)
    assert chapter == REVEAL_CHAPTER and sentences, (chapter, model[:200])

    def outputs(page):
        texts = page.locator(f"{harness.PANEL} .jp-OutputArea-output").all_inner_texts()
        return " ".join(" ".join(texts).split())

    page_nb = Notebook(chromium, lab, shots, path)
    try:
        page_nb.open()
        page_nb.run_all(timeout_s=180)
        before = outputs(page_nb.page)
        assert "Not yet" in before and "no self-grade of it found" in before, page_nb.explain(
            f"before a self-grade, ag.reveal showed: {before[:500]!r}")
        assert not any(s in before for s in sentences), page_nb.explain("revealed too early")

        # The self-grade as `aag grade` records it: every graded cell of the release passed.
        answers.record_self_grade(folder, chapter, {g: True for _, g, _ in grade_cells(release)})
        page_nb.run_all(timeout_s=180)
        after = outputs(page_nb.page)
        assert "Not yet" not in after, page_nb.explain(f"still refused: {after[:500]!r}")
        missing = [s for s in sentences if s not in after]
        assert not missing, page_nb.explain(f"model answer not shown; missing {missing[:1]}; "
                                            f"the output: {after[:500]!r}")
        # Rendered as Markdown (its emphasis an <em>), not shown as a Python object's repr.
        emphasis = page_nb.page.locator(f"{harness.PANEL} .jp-OutputArea .jp-RenderedMarkdown em",
                                        has_text="Model answer")
        assert emphasis.count() == 1, page_nb.explain("the model answer is not rendered Markdown")
        harness.screenshot_notebook(page_nb.page, shots / "reveal.png")
    finally:
        page_nb.close()
    print(f"browser test: reveal: {page_nb.times}")
