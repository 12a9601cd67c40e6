"""Progress for work that takes more than a few seconds: benchmarks, CPU-mode checks of many
cases, speed tests, grading many exercises or submissions.

One small API, rendered for where the code runs:

- **notebook** (an IPython kernel): an ipywidgets progress bar (CSS classes ``aag-visual
  aag-visual-progress``), replaced when the work ends by a one-line static summary in the same
  place, so a saved notebook shows what ran and no dead widget (plain HTML where ipywidgets is
  missing; a text fallback for ``nbconvert --execute``);
- **terminal** (a TTY): one line, rewritten in place;
- **log** (no TTY: CI, a pipe, nbgrader's log): a line at most every ``interval`` seconds, and
  one at the end;
- **off**: nothing.

Work that ends within ``delay`` seconds shows nothing at all. ``AAG_PROGRESS=notebook|terminal|
log|off`` overrides the choice.

    with Progress(total=len(cases), label="saxpy: checking") as bar:
        for case in cases:
            bar.begin(case.describe())      # a step starts; the one begun before is done
            ...
    for row in track(rows, "bench"):        # the same, around an iterable
        ...
"""

from __future__ import annotations

import html
import os
import shutil
import sys
import time
from typing import Callable, Iterable, Iterator, TypeVar

PROGRESS_ENV = "AAG_PROGRESS"
REDRAW_SECONDS = 0.1          # a bar or widget is redrawn at most this often (the end always is)
MODES = ("notebook", "terminal", "log", "off")
_OFF_WORDS = ("0", "no", "none", "false", "quiet", "silent")

T = TypeVar("T")


def in_kernel() -> bool:
    """Is this code running in a Jupyter kernel (where display() reaches a notebook)?"""
    if "IPython" not in sys.modules:     # never import IPython just to find out
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def detect_mode(stream=None) -> str:
    """The rendering for this process: ``$AAG_PROGRESS`` if set, else notebook in a Jupyter
    kernel, terminal on a TTY, log otherwise."""
    raw = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if raw in _OFF_WORDS:
        return "off"
    if raw in MODES:
        return raw
    if in_kernel():
        return "notebook"
    stream = stream if stream is not None else sys.stderr
    try:
        return "terminal" if stream.isatty() else "log"
    except (AttributeError, ValueError):   # no isatty, or a closed stream
        return "log"


def _clock(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest:02d} s"


class Progress:
    """A progress display for ``total`` steps (``None``: unknown), named ``label``.

    ``update(steps, text)`` counts steps done; ``begin(text)`` starts the next step (the one begun
    before counts as done, and the last one when the progress closes); ``say(text)`` only changes
    what is shown as being done now; ``write(line)`` prints a line without breaking a terminal's
    bar. Use it as a context manager, or call ``close()``.

    ``mode``: notebook, terminal, log or off (default: :func:`detect_mode`; ``log`` when a ``log``
    function is given). ``delay``: seconds before anything shows (quick work stays silent).
    ``interval``: in log mode, the least number of seconds between two lines (0: one per step).
    ``stream``: where terminal and log lines go (default stderr). ``log``: a function that takes a
    line (``logger.info``), used instead of the stream in log mode. ``leave``: keep the final line
    (terminal) or summary (notebook); otherwise it is erased.
    """

    def __init__(self, total: int | None = None, label: str = "", *, mode: str | None = None,
                 delay: float = 2.0, interval: float = 10.0, stream=None,
                 log: Callable[[str], None] | None = None, leave: bool = True):
        if mode is None:
            mode = detect_mode(stream)
            if log is not None and mode != "off":
                mode = "log"
        if mode not in MODES:
            raise ValueError(f"progress mode {mode!r}: expected one of {', '.join(MODES)}")
        self.total = int(total) if total is not None else None
        self.label = label
        self.mode = mode
        self.delay, self.interval, self.leave = delay, interval, leave
        self.stream = stream if stream is not None else sys.stderr
        self.log = log
        self.done = 0
        self.text = ""
        self.closed = False
        self.ok = True
        self._t0 = time.monotonic()
        self._begun = False
        self._view = None
        self._last = 0.0

    # ---- what the work reports -------------------------------------------------------------------
    def update(self, steps: int = 1, text: str | None = None) -> None:
        """``steps`` more steps are done; ``text`` says what runs now."""
        self.done += steps
        if text is not None:
            self.text = text
        self._refresh()

    def begin(self, text: str = "") -> None:
        """The next step starts (named ``text``); the step begun before it is done."""
        if self._begun:
            self.done += 1
        self._begun = True
        self.text = text
        self._refresh()

    def say(self, text: str) -> None:
        """What the work is doing now, without a step done."""
        self.text = text
        self._refresh()

    def write(self, line: str) -> None:
        """Print ``line`` (to stdout) without breaking the bar a terminal shows."""
        if self._view is not None and self.mode == "terminal":
            self._view.clear()
            print(line, flush=True)
            self._view.render(self)
        else:
            print(line, flush=True)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    # ---- the end ---------------------------------------------------------------------------------
    def close(self, ok: bool = True) -> None:
        """Finish: the last begun step counts as done (if ``ok``); a shown display turns into
        its final summary. Quick work (under ``delay``) that never showed stays silent."""
        if self.closed:
            return
        self.closed, self.ok = True, ok
        if self._begun and ok:
            self.done += 1
        if self.mode == "off":
            return
        if self._view is None:
            if self.elapsed < self.delay:
                return
            self._view = self._make_view()
        self._view.finish(self)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.close(ok=exc_type is None or issubclass(exc_type, GeneratorExit))
        return False

    # ---- text ------------------------------------------------------------------------------------
    def counts(self) -> str:
        if self.total:
            done = min(self.done, self.total)
            return f"{done}/{self.total} ({done / self.total:.0%})"
        return f"{self.done} done"

    def status(self) -> str:
        """One line: label, counts, what runs now, time so far."""
        parts = [f"{self.label}: {self.counts()}" if self.label else self.counts()]
        if self.text:
            parts.append(self.text)
        parts.append(_clock(self.elapsed))
        return ", ".join(parts)

    def summary(self) -> str:
        """The final line: how many steps, in how long (no verdict: the work prints its own)."""
        counts = f"{self.done}/{self.total}" if self.total else f"{self.done}"
        head = f"{self.label}: " if self.label else ""
        if self.ok:
            return f"{head}{counts} in {_clock(self.elapsed)}"
        return f"{head}stopped at {counts} after {_clock(self.elapsed)}"

    # ---- rendering -------------------------------------------------------------------------------
    def _refresh(self) -> None:
        if self.closed or self.mode == "off":
            return
        now = time.monotonic()
        if now - self._t0 < self.delay:
            return
        if self._view is None:
            self._view = self._make_view()
        elif now - self._last < (self.interval if self.mode == "log" else REDRAW_SECONDS):
            return
        self._view.render(self)
        self._last = now

    def _make_view(self):
        if self.mode == "notebook":
            try:
                return _WidgetView(self)
            except ImportError:                  # no ipywidgets: plain HTML, updated in place
                return _HtmlView(self)
        if self.mode == "terminal":
            return _LineView(self.stream)
        return _LogView(self.stream, self.log)


def track(items: Iterable[T], label: str = "", total: int | None = None,
          describe: Callable[[T], str] | None = None, **options) -> Iterator[T]:
    """Yield from ``items`` with a :class:`Progress` (``total`` defaults to ``len(items)``);
    ``describe(item)`` names the step each item is."""
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with Progress(total, label, **options) as bar:
        for item in items:
            bar.begin(describe(item) if describe else "")
            yield item


# ---- the renderings ----------------------------------------------------------------------------

def _display(bundle: dict):
    """Show a MIME bundle in the notebook; return a handle whose ``update`` replaces it."""
    from IPython.display import display
    return display(bundle, raw=True, display_id=True)


def _final_html(bar: Progress) -> str:
    mark = "" if bar.ok else "✗ "
    return (f'<div class="aag-visual aag-visual-progress" style="font-family: monospace; '
            f'color: #555">{mark}{html.escape(bar.summary())}</div>')


class _WidgetView:
    """An ipywidgets bar: label, bar, status; at the end the same output shows the summary."""

    def __init__(self, bar: Progress):
        import ipywidgets as w
        self.title = w.HTML(f"<b>{html.escape(bar.label)}</b>" if bar.label else "")
        self.bar = w.IntProgress(value=0, min=0, max=bar.total or 1, bar_style="info",
                                 layout=w.Layout(width="40%"))
        self.status = w.Label("")
        self.box = w.HBox([self.title, self.bar, self.status])
        self.box.add_class("aag-visual")
        self.box.add_class("aag-visual-progress")
        self.render(bar)
        bundle = dict(self.box._repr_mimebundle_())
        bundle["text/plain"] = bar.status()       # what nbconvert keeps with no widget frontend
        self.handle = _display(bundle)

    def render(self, bar: Progress) -> None:
        if bar.total:
            self.bar.max = bar.total
            self.bar.value = min(bar.done, bar.total)
        counts = f"{bar.done}/{bar.total}" if bar.total else f"{bar.done}"
        self.status.value = f"{counts}  {bar.text}  {_clock(bar.elapsed)}".strip()

    def finish(self, bar: Progress) -> None:
        self.render(bar)
        if self.handle is not None:
            final = ({"text/html": _final_html(bar), "text/plain": bar.summary()} if bar.leave
                     else {"text/plain": ""})
            self.handle.update(final, raw=True)
        for widget in (self.title, self.bar, self.status, self.box):
            widget.close()


class _HtmlView:
    """A notebook without ipywidgets: an HTML <progress> element updated in place."""

    def __init__(self, bar: Progress):
        self.handle = _display(self._bundle(bar))

    @staticmethod
    def _bundle(bar: Progress) -> dict:
        value = f'value="{min(bar.done, bar.total)}" max="{bar.total}"' if bar.total else ""
        return {"text/html": f'<div class="aag-visual aag-visual-progress"><b>'
                             f'{html.escape(bar.label)}</b> <progress {value}></progress> '
                             f'{html.escape(bar.status())}</div>',
                "text/plain": bar.status()}

    def render(self, bar: Progress) -> None:
        if self.handle is not None:
            self.handle.update(self._bundle(bar), raw=True)

    def finish(self, bar: Progress) -> None:
        if self.handle is not None:
            self.handle.update({"text/html": _final_html(bar), "text/plain": bar.summary()}
                               if bar.leave else {"text/plain": ""}, raw=True)


class _LineView:
    """A terminal: one line rewritten with a carriage return; a newline only at the end."""

    def __init__(self, stream):
        self.stream = stream

    def _put(self, text: str) -> None:
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()

    def render(self, bar: Progress) -> None:
        width = max(shutil.get_terminal_size((100, 20)).columns - 1, 20)
        if bar.total:
            filled = int(20 * min(bar.done / bar.total, 1))
            drawn = "█" * filled + "·" * (20 - filled)
            line = f"{bar.label} {drawn} {bar.done}/{bar.total}"
        else:
            line = f"{bar.label} {bar.done} done"
        line = "  ".join(part for part in (line, bar.text, _clock(bar.elapsed)) if part)
        self._put(line[:width])

    def clear(self) -> None:
        self._put("")

    def finish(self, bar: Progress) -> None:
        if bar.leave:
            self._put(("" if bar.ok else "✗ ") + bar.summary())
            self.stream.write("\n")
            self.stream.flush()
        else:
            self.clear()


class _LogView:
    """No terminal: whole lines, as many as the progress's interval allows, and a final one."""

    def __init__(self, stream, log: Callable[[str], None] | None):
        self.stream, self.log = stream, log

    def _line(self, text: str) -> None:
        if self.log is not None:
            self.log(text)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def render(self, bar: Progress) -> None:
        self._line(bar.status())

    def clear(self) -> None:
        pass

    def finish(self, bar: Progress) -> None:
        self._line(bar.summary())
