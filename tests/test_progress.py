"""Does progress show as a widget in a notebook, one rewritten line in a terminal, few whole lines
in a log, and nothing when it is off or the work is quick?"""

import io
import sys

import pytest

from autograder import progress
from autograder.progress import Progress, detect_mode, track


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


class FakeHandle:
    def __init__(self, bundle):
        self.bundles = [bundle]

    def update(self, bundle, raw=False):
        assert raw
        self.bundles.append(bundle)


@pytest.fixture
def shown(monkeypatch):
    """What the notebook rendering displays: a list of handles, one per display() call."""
    handles = []

    def display(bundle):
        handles.append(FakeHandle(bundle))
        return handles[-1]
    monkeypatch.setattr(progress, "_display", display)
    monkeypatch.setattr(progress, "REDRAW_SECONDS", 0.0)
    return handles


# ---- choosing the rendering --------------------------------------------------------------------

def test_mode_follows_the_environment(monkeypatch):
    """Is it log without a TTY, terminal on one, and whatever AAG_PROGRESS says when set?"""
    monkeypatch.delenv("AAG_PROGRESS", raising=False)
    assert detect_mode(io.StringIO()) == "log"
    assert detect_mode(FakeTTY()) == "terminal"
    monkeypatch.setenv("AAG_PROGRESS", "off")
    assert detect_mode(FakeTTY()) == "off"
    monkeypatch.setenv("AAG_PROGRESS", "notebook")
    assert detect_mode(io.StringIO()) == "notebook"
    with pytest.raises(ValueError, match="progress mode"):
        Progress(3, mode="fancy")


def test_a_log_function_means_log_lines_unless_progress_is_off(monkeypatch):
    """Given a logger (nbgrader's), does it write lines there, and nothing when turned off?"""
    monkeypatch.delenv("AAG_PROGRESS", raising=False)
    lines = []
    with Progress(2, "judging alice", log=lines.append, delay=0, interval=0,
                  stream=FakeTTY()) as bar:
        bar.begin("saxpy_test")
        bar.begin("thread_ids_test")
    assert lines[0].startswith("judging alice: 0/2") and "saxpy_test" in lines[0]
    assert lines[-1].startswith("judging alice: 2/2 in ")
    monkeypatch.setenv("AAG_PROGRESS", "off")
    quiet = []
    with Progress(2, "x", log=quiet.append, delay=0) as bar:
        bar.update(2)
    assert quiet == []


# ---- terminal ------------------------------------------------------------------------------------

def test_terminal_rewrites_one_line_and_ends_it_once():
    """Is every redraw a carriage return on the same line, with one newline at the very end?"""
    out = FakeTTY()
    with Progress(3, "bench", mode="terminal", delay=0, stream=out) as bar:
        for name in ("saxpy", "blur", "tiled_matmul"):
            bar.begin(name)
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")
    assert text.count("\r") >= 2
    final = text.rsplit("\r", 1)[1]
    assert final.startswith("bench: 3/3 in ") and bar.done == 3


def test_terminal_write_keeps_the_bar_below_the_line(capsys):
    """Does a line printed during the work clear the bar, print, and draw the bar again?"""
    out = FakeTTY()
    with Progress(2, "bench", mode="terminal", delay=0, stream=out) as bar:
        bar.begin("saxpy")
        before = out.getvalue()
        bar.write('{"problem": "saxpy"}')
        after = out.getvalue()[len(before):]
    assert capsys.readouterr().out == '{"problem": "saxpy"}\n'
    assert after.startswith("\r\x1b[K") and "bench" in after


def test_quick_work_shows_nothing():
    """Work that ends before the delay leaves no trace, in any mode."""
    for mode in ("terminal", "log"):
        out = FakeTTY()
        with Progress(5, "quick", mode=mode, delay=60, stream=out) as bar:
            bar.update(5)
        assert out.getvalue() == "", mode


def test_failed_work_says_where_it_stopped():
    out = FakeTTY()
    with pytest.raises(RuntimeError):
        with Progress(4, "grading", mode="terminal", delay=0, stream=out) as bar:
            bar.update(1)
            raise RuntimeError("boom")
    assert "grading: stopped at 1/4 after" in out.getvalue()


# ---- logs and CI ---------------------------------------------------------------------------------

def test_log_mode_writes_whole_lines_at_most_every_interval():
    """Without a TTY: no carriage returns, one line per step with interval 0, and with a long
    interval only the first line and the summary."""
    out = io.StringIO()
    with Progress(4, "cases", mode="log", delay=0, interval=0, stream=out) as bar:
        for i in range(4):
            bar.begin(f"case {i}")
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) == 5
    assert [line.split(",")[0] for line in lines[:4]] == [f"cases: {i}/4 ({i / 4:.0%})"
                                                          for i in range(4)]
    out = io.StringIO()
    with Progress(100, "cases", mode="log", delay=0, interval=1000, stream=out) as bar:
        for i in range(100):
            bar.update(1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[-1].startswith("cases: 100/100 in ")


def test_off_is_silent(shown, capsys):
    out = FakeTTY()
    with Progress(3, "x", mode="off", delay=0, stream=out) as bar:
        bar.update(3, "working")
        bar.write("a line")
    assert out.getvalue() == "" and shown == []
    assert capsys.readouterr().out == "a line\n"   # the work's own output still comes through


# ---- notebook ----------------------------------------------------------------------------------

def test_notebook_widget_advances_and_becomes_a_static_summary(shown):
    """Is a widget with the course's classes displayed, does its bar advance, and is it replaced
    by a static line (and the widgets closed) at the end?"""
    with Progress(4, "saxpy: checking", mode="notebook", delay=0) as bar:
        bar.begin("n = 1025")
        assert len(shown) == 1
        first = shown[0].bundles[0]
        assert "application/vnd.jupyter.widget-view+json" in first
        assert first["text/plain"].startswith("saxpy: checking: 0/4")  # nbconvert's fallback
        view = bar._view
        assert {"aag-visual", "aag-visual-progress"} <= set(view.box._dom_classes)
        assert first["application/vnd.jupyter.widget-view+json"]["model_id"] == view.box.model_id
        values = []
        for n in ("n = 1023", "n = 1", "n = 31"):
            bar.begin(n)
            values.append(view.bar.value)
        assert values == [1, 2, 3] and view.bar.max == 4 and "n = 31" in view.status.value
    final = shown[0].bundles[-1]
    assert 'class="aag-visual aag-visual-progress"' in final["text/html"]
    assert final["text/plain"].startswith("saxpy: checking: 4/4 in ")
    assert view.box.comm is None and view.bar.comm is None    # closed: no live widget left
    assert len(shown) == 1                                    # updated in place, not added


def test_notebook_without_ipywidgets_uses_html(shown, monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)      # import fails
    with Progress(2, "bench", mode="notebook", delay=0) as bar:
        bar.update(1, "saxpy")
        assert "<progress" in shown[0].bundles[-1]["text/html"]
        assert 'value="1" max="2"' in shown[0].bundles[-1]["text/html"]
    assert "aag-visual-progress" in shown[0].bundles[-1]["text/html"]
    assert shown[0].bundles[-1]["text/plain"].startswith("bench: 1/2 in ")   # as reported


def test_track_counts_every_item_and_names_it():
    out = io.StringIO()
    items = list(track(["a", "b", "c"], "steps", describe=str.upper, mode="log", delay=0,
                       interval=0, stream=out))
    assert items == ["a", "b", "c"]
    lines = out.getvalue().splitlines()
    assert "B" in lines[1] and lines[-1].startswith("steps: 3/3 in ")


@pytest.mark.slow
def test_in_a_real_kernel_the_widget_output_ends_as_the_summary(tmp_path):
    """In a Jupyter kernel (nbclient, no browser): is the output the static summary with the
    course's classes, and no error, after the display was updated in place?"""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from autograder.progress import Progress, detect_mode\n"
        "print(detect_mode())\n"
        "with Progress(3, 'demo', delay=0) as bar:\n"
        "    for i in range(3):\n"
        "        bar.begin(f'step {i}')\n")]
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    assert outputs[0]["text"].strip() == "notebook"
    assert not any(o["output_type"] == "error" or o.get("name") == "stderr" for o in outputs)
    html = [o for o in outputs if "text/html" in o.get("data", {})]
    assert len(html) == 1
    assert 'class="aag-visual aag-visual-progress"' in html[0]["data"]["text/html"]
    assert html[0]["data"]["text/plain"].startswith("demo: 3/3 in ")
