"""Plots where a table reads worse: the speedup of each optimization step, time against size.

Each function takes the rows the chapters' measuring cells already make (``timing.Stats``, a
``{label: Stats}`` dict, or the row dicts of ``ch08.measure``, ``ch09.measure`` and
``experiments.copy_cost``) and returns a :class:`FigureView`: in a notebook a PNG inside
``<div class="aag-visual aag-visual-plot">``, elsewhere a text table. ``.figure`` is the
matplotlib figure (made without pyplot, so the inline backend does not show it a second time),
``.show()`` displays it from inside an ``if`` or ``try``, ``.save(path)`` writes it.
"""

from __future__ import annotations

import base64
import html
import io
import math
import textwrap
from typing import Any, Callable

import numpy as np

COLOURS = ("#3b6ea8", "#e07b39", "#4c9a5b", "#b5433f", "#7d5ba6", "#8a6d3b", "#d16ba5", "#5f6b73")


class FigureView:
    """A matplotlib figure as a visual aid: HTML (a PNG in a div with the aid's classes) in a
    notebook, ``text`` everywhere else; ``note`` is shown under the picture and in the text."""

    def __init__(self, figure, name: str = "plot", text: str = "", note: str = "", alt: str = ""):
        self.figure = figure
        self.name = name
        self.text = text
        self.note = note
        self.alt = alt or name
        self._png: bytes | None = None

    @property
    def axes(self):
        return self.figure.axes[0] if self.figure.axes else None

    def png(self) -> bytes:
        if self._png is None:
            buf = io.BytesIO()
            self.figure.savefig(buf, format="png", dpi=100, bbox_inches="tight")
            self._png = buf.getvalue()
        return self._png

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.png()).decode("ascii")
        note = (f'<div class="aag-visual-note" style="font-size: 90%; color: #555; '
                f'max-width: 48em">{html.escape(self.note)}</div>' if self.note else "")
        return (f'<div class="aag-visual aag-visual-{self.name}">'
                f'<img src="data:image/png;base64,{data}" alt="{html.escape(self.alt)}" '
                f'style="max-width: 100%">{note}</div>')

    def __repr__(self) -> str:
        return "\n".join(part for part in (self.text, self.note) if part) or f"<{self.name}>"

    def show(self) -> None:
        """Display it now (needed inside an ``if`` or ``try``, where a cell shows nothing)."""
        try:
            from IPython.display import display
        except ImportError:
            print(repr(self))
            return
        display(self)

    def save(self, path: str) -> None:
        self.figure.savefig(path, dpi=150, bbox_inches="tight")


def new_figure(width: float = 7.5, height: float = 4.2):
    """A figure with one axes, not registered with pyplot (the inline backend shows no copy)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height))
    return fig, fig.add_subplot(1, 1, 1)


# ---- rows as the chapters make them ------------------------------------------------------------

def _row(item: Any, label: str | None = None) -> dict:
    """One measurement as a dict with ``label`` and ``ms`` (plus bytes, flops, gbps, right when
    known), from a ``timing.Stats``, a row dict, a ``(label, ms)`` pair, or a number of ms."""
    if isinstance(item, dict):
        row = dict(item)
    elif hasattr(item, "median_ms"):                                # timing.Stats
        row = {"label": item.label, "ms": item.median_ms, "bytes": getattr(item, "bytes", 0),
               "flops": getattr(item, "flops", 0)}
    elif isinstance(item, (tuple, list)) and len(item) == 2:
        row = {"label": str(item[0]), "ms": float(item[1])}
    elif isinstance(item, (int, float, np.floating, np.integer)):
        row = {"ms": float(item)}
    else:
        raise TypeError(f"cannot read a measurement from {type(item).__name__}: give a "
                        "timing.Stats, a dict with 'label' and 'ms', or (label, ms)")
    if label is not None:
        row["label"] = label
    if "ms" not in row:
        for key, scale in (("median_ms", 1.0), ("time_ms", 1.0), ("seconds", 1e3)):
            if row.get(key) is not None:
                row["ms"] = float(row[key]) * scale
                break
        else:
            raise ValueError(f"measurement {row.get('label', row)!r} has no time "
                             "('ms', 'median_ms' or 'seconds')")
    row["ms"] = float(row["ms"])
    row.setdefault("label", "")
    if not row.get("gbps") and row.get("bytes"):
        row["gbps"] = row["bytes"] / (row["ms"] * 1e-3) / 1e9
    return row


def as_rows(rows: Any) -> list[dict]:
    """The rows of a measuring cell, whatever their form: a list of rows, or ``{label: Stats}``
    (or ``{label: ms}``)."""
    if isinstance(rows, dict) and not ("ms" in rows or "median_ms" in rows or "seconds" in rows):
        return [_row(value, str(label)) for label, value in rows.items()]
    if isinstance(rows, dict) or hasattr(rows, "median_ms"):
        return [_row(rows)]
    return [_row(r) for r in rows]


def pick_references(rows: list[dict], reference) -> tuple[list[dict], list[dict]]:
    """Split off the reference lines: labels of rows (moved out of the steps) or measurements
    (one, or a list)."""
    if reference is None:
        return rows, []
    refs = reference if isinstance(reference, list) else [reference]   # a tuple is (label, ms)
    picked = []
    for ref in refs:
        if isinstance(ref, str):
            match = [r for r in rows if r["label"] == ref]
            if not match:
                raise ValueError(f"reference {ref!r} is not one of the rows: "
                                 f"{', '.join(repr(r['label']) for r in rows)}")
            rows = [r for r in rows if r["label"] != ref]
            picked.append(match[0])
        else:
            picked.append(_row(ref))
    return rows, picked


def is_wrong(row: dict) -> bool:
    """Marked wrong: ``right`` is given and false (a Python or a numpy bool)."""
    return row.get("right") is not None and not row["right"]


def _rate(row: dict) -> str:
    flops, nbytes = row.get("flops") or 0, row.get("bytes") or 0
    if flops and (not nbytes or flops / nbytes >= 4):
        return f"{flops / (row['ms'] * 1e-3) / 1e9:,.0f} GFLOP/s"
    if row.get("gbps"):
        return f"{row['gbps']:,.0f} GB/s"
    return ""


def _wrap(label: str, width: int = 16) -> str:
    return "\n".join(textwrap.wrap(label, width)) or label


# ---- speedup per optimization step ------------------------------------------------------------

def speedup_steps(rows, reference=None, *, over: str = "first", bounds: dict | None = None,
                  title: str = "", log: bool | None = None) -> FigureView:
    """A bar per optimization step: its time, and its speedup over the first step (``over=
    "first"``) or the step before (``over="previous"``); ``reference`` draws a line at the time
    of a copy of the same bytes or the vendor library (a measurement, a list of them, or the label
    of one of ``rows``, which is then taken out of the steps); ``bounds`` ({label: ms}) marks the
    least time a model allows. Rows marked ``right=False`` are hatched and labelled WRONG."""
    if over not in ("first", "previous"):
        raise ValueError("over must be 'first' or 'previous'")
    steps, refs = pick_references(as_rows(rows), reference)
    if not steps:
        raise ValueError("speedup_steps needs at least one step")
    times = np.array([r["ms"] for r in steps])
    first = times[0]
    vs_first = first / times
    vs_previous = np.concatenate([[1.0], times[:-1] / times[1:]])
    shown = vs_first if over == "first" else vs_previous
    every = list(times) + [r["ms"] for r in refs] + list((bounds or {}).values())
    if log is None:
        log = max(every) / max(min(every), 1e-12) > 30

    fig, ax = new_figure(max(6.0, 1.3 * len(steps) + 2.5), 4.2)
    x = np.arange(len(steps))
    for i, row in enumerate(steps):
        wrong = is_wrong(row)
        ax.bar(x[i], row["ms"], 0.6, color="#f2c4c0" if wrong else COLOURS[0],
               hatch="//" if wrong else None, edgecolor="#b5433f" if wrong else COLOURS[0])
        lines = [f"{row['ms']:.3g} ms", f"{shown[i]:.2g}×" if i else "1×"]
        rate = _rate(row)
        if rate:
            lines.append(rate)
        if wrong:
            lines.append("WRONG")
        ax.annotate("\n".join(lines), (x[i], row["ms"]), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8)
    for j, ref in enumerate(refs):
        ax.axhline(ref["ms"], color=("black", "grey", "#7d5ba6")[j % 3], ls="--", lw=1,
                   label=f"{ref['label'] or 'reference'}: {ref['ms']:.3g} ms")
    if bounds:
        at = [(i, bounds[r["label"]]) for i, r in enumerate(steps) if r["label"] in bounds]
        if at:
            ax.hlines([b for _, b in at], [i - 0.38 for i, _ in at], [i + 0.38 for i, _ in at],
                      color=COLOURS[1], lw=2.5, zorder=3, label="bound (model)")
    ax.set_xticks(x)
    ax.set_xticklabels([_wrap(r["label"]) for r in steps], fontsize=8)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(min(every) / 2, max(every) * 6)
    else:
        ax.set_ylim(0, max(every) * 1.35)
    ax.set_ylabel("time per call (ms, median)" + (", log scale" if log else ""))
    word = "the first step" if over == "first" else "the step before"
    ax.set_title(title or f"Time of each step, and its speedup over {word}", fontsize=10)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    if refs or bounds:
        ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()

    head = (f"{'step':34s} {'time':>11s} {'vs first':>9s} {'vs previous':>12s} {'rate':>16s}")
    lines = [title or "Speedup per step", head]
    for i, row in enumerate(steps):
        lines.append(f"{row['label'][:34]:34s} {row['ms']:8.3f} ms {vs_first[i]:8.2f}× "
                     f"{vs_previous[i]:11.2f}× {_rate(row):>16s}"
                     + ("  WRONG" if is_wrong(row) else ""))
    best = float(times.min())
    for ref in refs:
        lines.append(f"{ref['label'][:34]:34s} {ref['ms']:8.3f} ms  (reference: the fastest step "
                     f"takes {best / ref['ms']:.2f}× its time)")
    return FigureView(fig, "plot", "\n".join(lines), alt="speedup per optimization step")


# ---- time (or GB/s) against size ---------------------------------------------------------------

def _size_value(size) -> float:
    if isinstance(size, (tuple, list)):
        return float(np.prod([float(s) for s in size]))
    return float(size)


def _series(rows, size: str, columns) -> dict[str, list[tuple[float, dict]]]:
    """{series label: [(size, row), ...]} from long rows (a 'label' per row), wide rows (one time
    column per series, e.g. copy_cost's kernel_ms / with_copies_ms / numpy_ms), or a dict
    {label: [(size, ms or Stats), ...]}."""
    out: dict[str, list[tuple[float, dict]]] = {}
    if isinstance(rows, dict):
        for label, points in rows.items():
            out[str(label)] = [(_size_value(s), _row(m, str(label))) for s, m in points]
        return out
    rows = list(rows)
    if not rows:
        return out
    if columns is None and all(isinstance(r, dict) and "label" in r for r in rows):
        for r in rows:
            out.setdefault(str(r["label"]), []).append((_size_value(r[size]), _row(r)))
        return out
    if columns is None:
        columns = [k for k in rows[0] if k.endswith("_ms")]
    if not isinstance(columns, dict):
        columns = {k: k[:-3].replace("_", " ") if k.endswith("_ms") else k for k in columns}
    for key, label in columns.items():
        out[label] = [(_size_value(r[size]), _row({**r, "label": label, "ms": r[key]}))
                      for r in rows if r.get(key) is not None]
    return out


def time_vs_size(rows, *, size: str = "n", columns=None, y: str = "time",
                 bytes: Callable[[Any], float] | Any = None, reference: float | None = None,
                 reference_label: str = "copy ceiling", title: str = "",
                 xlabel: str = "") -> FigureView:
    """Log-log lines of time (``y="time"``) or GB/s (``y="gbps"``) against size, one per kernel.

    ``rows``: dicts with ``label``, the size key (``size``, default ``"n"``) and a time (``ms``,
    ``median_ms`` or ``seconds``), one per kernel and size; or wide rows with one ``*_ms`` column
    per kernel (``columns``: which ones, as a list or ``{column: label}``); or ``{label: [(size,
    ms or Stats), ...]}``. For GB/s, the bytes per call come from each row's ``bytes`` or
    ``gbps``, or from ``bytes``: a function of the size, or a Problem (its ``bytes_moved``).
    ``reference``: a horizontal line (GB/s, or ms for a time plot), e.g. the copy ceiling."""
    if y not in ("time", "gbps"):
        raise ValueError("y must be 'time' or 'gbps'")
    moved = getattr(bytes, "bytes_moved", bytes)
    series = _series(rows, size, columns)
    if not series:
        raise ValueError("time_vs_size got no measurements")
    fig, ax = new_figure(7.5, 4.2)
    lines = [title or ("Time against size" if y == "time" else "GB/s against size")]
    markers = "os^dv<>p"
    for k, (label, points) in enumerate(series.items()):
        points = sorted(points, key=lambda p: p[0])
        xs, ys = [], []
        for x, row in points:
            if y == "time":
                value = row["ms"]
            elif row.get("gbps"):
                value = row["gbps"]
            elif moved is not None:
                value = float(moved(row.get(size, x))) / (row["ms"] * 1e-3) / 1e9
            else:
                raise ValueError(f"GB/s of {label!r} needs bytes: give rows with 'bytes' or "
                                 "'gbps', or bytes=<function of the size or a Problem>")
            xs.append(x)
            ys.append(value)
        ax.loglog(xs, ys, marker=markers[k % len(markers)], color=COLOURS[k % len(COLOURS)],
                  label=label)
        unit = "ms" if y == "time" else "GB/s"
        lines.append(f"  {label}: " + ", ".join(f"{_fmt_size(x)} → {v:,.4g} {unit}"
                                                for x, v in zip(xs, ys)))
    if reference:
        ax.axhline(reference, color="black", ls="--", lw=1,
                   label=f"{reference_label}: {reference:,.4g} {'ms' if y == 'time' else 'GB/s'}")
        lines.append(f"  {reference_label}: {reference:,.4g} {'ms' if y == 'time' else 'GB/s'}")
    ax.set_xlabel(xlabel or (f"size ({size})" if size != "n" else "elements n"))
    ax.set_ylabel("time per call (ms, median)" if y == "time" else "GB/s (bytes moved / time)")
    ax.set_title(title or ("Time against size" if y == "time" else "Bandwidth against size"),
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return FigureView(fig, "plot", "\n".join(lines), alt="time against size")


def _fmt_size(x: float) -> str:
    if x >= 1024 and math.log2(x).is_integer():
        return f"2^{int(math.log2(x))}"
    return f"{x:,.0f}"


__all__ = ["FigureView", "as_rows", "new_figure", "speedup_steps", "time_vs_size"]
