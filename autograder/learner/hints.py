"""Hints in plain words: a ladder of three rungs per exercise.

1. **What to think about**: the idea the exercise turns on, as questions, no code;
2. **Where it is explained**: the PMPP section(s) and the part of the notebook to reread;
3. **A skeleton**: the shape of the code with ``____`` blanks, never the solution.

``ag.hint("saxpy")`` shows the next rung each time it is called, in a widget with a "next hint"
button (CSS classes ``aag-visual aag-visual-hints``); without a widget frontend it shows the same
rungs as HTML or text. The ladders live in each chapter's package, ``autograder/problems/chNN/
hints.toml``, one table per exercise, named as in :data:`autograder.problems.ALL`.
"""

from __future__ import annotations

import difflib
import html
import textwrap
import tomllib
from dataclasses import dataclass

RUNGS = (("think", "What to think about"), ("read", "Where it is explained"),
         ("skeleton", "A skeleton (fill in the blanks)"))


@dataclass(frozen=True)
class Rung:
    key: str          # "think", "read" or "skeleton"
    title: str
    text: str

    @property
    def is_code(self) -> bool:
        return self.key == "skeleton"


_cache: dict[str, dict[str, list[Rung]]] = {}
_revealed: dict[str, int] = {}    # exercise -> rungs shown so far in this session


def ladders() -> dict[str, list[Rung]]:
    """Every exercise's ladder, read from the chapter files (cached)."""
    if "all" not in _cache:
        found: dict[str, list[Rung]] = {}
        from autograder.problems import HERE, chapter_names
        for path in (HERE / name / "hints.toml" for name in chapter_names()):
            if not path.is_file():
                continue
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            for name, table in data.items():
                if name in found:
                    raise ValueError(f"{path.name}: the exercise {name!r} has a ladder elsewhere too")
                absent = [key for key, _ in RUNGS if not str(table.get(key, "")).strip()]
                if absent:
                    raise ValueError(f"{path.name}: [{name}] lacks {', '.join(absent)}")
                found[name] = [Rung(key, title, _clean(table[key], key == "skeleton"))
                               for key, title in RUNGS]
        _cache["all"] = found
    return _cache["all"]


def _clean(text: str, code: bool) -> str:
    text = textwrap.dedent(text).strip("\n")
    if code:
        return text.rstrip()
    return " ".join(text.split())     # prose: one paragraph, reflowed by the display


def ladder(name: str) -> list[Rung]:
    """The three rungs for exercise ``name``."""
    all_ = ladders()
    if name not in all_:
        close = difflib.get_close_matches(name, list(all_), n=3)
        extra = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise KeyError(f"no hints for {name!r}{extra} (exercises with hints: "
                       f"{', '.join(sorted(all_))})")
    return all_[name]


def missing(names=None) -> list[str]:
    """Exercises (of ``names``, by default every one in ``autograder.problems.ALL``) that have no
    ladder yet, in course order."""
    if names is None:
        from autograder.problems import ALL
        names = list(ALL)
    have = ladders()
    return [n for n in names if n not in have]


def reset(name: str | None = None) -> None:
    """Start a ladder (or all of them) from the first rung again."""
    if name is None:
        _revealed.clear()
    else:
        _revealed.pop(name, None)


def text(name: str, upto: int = len(RUNGS)) -> str:
    """The first ``upto`` rungs as plain text."""
    rungs = ladder(name)[:upto]
    out = [f"Hints for {name} ({len(rungs)} of {len(RUNGS)}):"]
    for k, rung in enumerate(rungs, 1):
        body = textwrap.indent(rung.text, "    ") if rung.is_code else textwrap.fill(
            rung.text, 96, initial_indent="   ", subsequent_indent="   ")
        out.append(f"{k}. {rung.title}\n{body}")
    if len(rungs) < len(RUNGS):
        out.append(f"(call hint({name!r}) again for the next one)")
    return "\n".join(out)


def _html(name: str, upto: int) -> str:
    parts = []
    for k, rung in enumerate(ladder(name)[:upto], 1):
        body = (f'<pre style="margin:4px 0 8px 0;padding:6px 8px;background:rgba(0,0,0,0.04);'
                f'font-family:var(--jp-code-font-family,monospace);font-size:12px">'
                f"{html.escape(rung.text)}</pre>" if rung.is_code
                else f'<p style="margin:2px 0 8px 0">{html.escape(rung.text)}</p>')
        parts.append(f'<div class="aag-hint-rung aag-hint-{rung.key}"><b>{k}. '
                     f"{html.escape(rung.title)}</b>{body}</div>")
    return "".join(parts)


def _root(name: str, inner: str) -> str:
    return (f'<div class="aag-visual aag-visual-hints" style="border-left:4px solid #4a90d9;'
            f'padding:4px 10px">'
            f'<div style="font-weight:600;margin-bottom:4px">Hints for {html.escape(name)}</div>'
            f"{inner}</div>")


class HintText:
    """The fallback display: HTML and text of the rungs revealed so far."""

    def __init__(self, name: str, upto: int):
        self.name, self.upto = name, upto

    def _repr_html_(self) -> str:
        return _root(self.name, _html(self.name, self.upto))

    def __repr__(self) -> str:
        return text(self.name, self.upto)


def _widget(name: str, upto: int):
    import ipywidgets as widgets

    class HintWidget(widgets.VBox):
        """The ladder as a widget; a frontend without widgets gets HTML/text instead."""

        def _repr_mimebundle_(self, **kwargs):
            data = super()._repr_mimebundle_(**kwargs) or {}
            if isinstance(data, tuple):
                data = data[0]
            data = dict(data)
            data["text/plain"] = text(name, _revealed.get(name, upto))
            data["text/html"] = _root(name, _html(name, _revealed.get(name, upto)))
            return data

    shown = widgets.HTML(_html(name, upto))
    button = widgets.Button(description="next hint", icon="lightbulb-o",
                            tooltip="show the next rung of this ladder")
    button.add_class("aag-hints-next")
    title = widgets.HTML(f"<b>Hints for {html.escape(name)}</b>")

    def update():
        n = _revealed.get(name, upto)
        shown.value = _html(name, n)
        button.disabled = n >= len(RUNGS)
        button.description = "next hint" if n < len(RUNGS) else "that was the last hint"

    def on_click(_):
        _revealed[name] = min(_revealed.get(name, upto) + 1, len(RUNGS))
        update()

    button.on_click(on_click)
    box = HintWidget([title, shown, button])
    box.add_class("aag-visual")
    box.add_class("aag-visual-hints")
    box.layout.border_left = "4px solid #4a90d9"
    box.layout.padding = "4px 10px"
    update()
    return box


def hint(name: str, rung: int | None = None):
    """Show the next hint for exercise ``name`` (or rung 1, 2 or 3 with ``rung=``).

    Returns a widget with a "next hint" button (put the call last in a cell), or, where
    ipywidgets is missing, an object that shows itself as HTML or text."""
    ladder(name)   # a clear KeyError for an unknown name
    if rung is not None:
        if not 1 <= rung <= len(RUNGS):
            raise ValueError(f"rung must be 1 to {len(RUNGS)}, not {rung}")
        upto = max(rung, _revealed.get(name, 0))
    else:
        upto = min(_revealed.get(name, 0) + 1, len(RUNGS))
    _revealed[name] = upto
    try:
        return _widget(name, upto)
    except ImportError:
        return HintText(name, upto)
