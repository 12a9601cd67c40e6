"""The thread and grid explorer: which thread handles which element, who idles, how blocks map
to warps.

``grid_explorer()`` is an ipywidgets panel (sliders for the data size, the block size and,
optionally, the number of blocks) whose picture is redrawn on every change;
``grid_picture()`` is the same picture, static. Both fall back to HTML and text where no widget
frontend runs (``nbconvert --execute``, a terminal). The picture is plain SVG: one cell per
thread, coloured by block, shaded by warp; hatched grey cells are threads past the end of the
data; a hover on any cell names its block, thread, warp, lane and element.
"""

from __future__ import annotations

import html
import itertools
from dataclasses import dataclass
from typing import Iterator, Sequence

ROOT_CLASSES = ("aag-visual", "aag-visual-grid-explorer")
MAX_CELLS = 4096            # threads drawn in one picture; the rest is summarised in words
_svg_ids = itertools.count()


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _current_warp_size() -> int:
    from autograder.machine import device
    backend = device.current()
    if backend.name == "cpu":
        from autograder.machine.simulator import cpu_mode
        return cpu_mode.warp_size()         # what cuda.warpsize says in CPU mode
    return backend.warp_size


@dataclass(frozen=True)
class Thread:
    block: tuple[int, ...]      # (bx,) or (bx, by)
    thread: tuple[int, ...]     # (tx,) or (tx, ty)
    warp: int                   # within the block
    lane: int
    element: tuple[int, ...] | None   # (i,) or (row, col); None: past the end (idle)


@dataclass(frozen=True)
class GridLayout:
    """A launch over 1-D data (``shape=(n,)``) or a 2-D image (``shape=(rows, cols)``).

    ``threads`` and ``blocks`` are in CUDA's order, x first: for an image, x runs along a row
    (columns) and y down the image (rows), so thread (tx, ty) of block (bx, by) handles pixel
    ``(by * threads_y + ty, bx * threads_x + tx)``.
    """

    shape: tuple[int, ...]
    threads: tuple[int, ...]
    blocks: tuple[int, ...]
    warp_size: int = 32

    @classmethod
    def make(cls, shape, threads, blocks=None, warp_size: int | None = None) -> "GridLayout":
        shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
        threads = (int(threads),) if isinstance(threads, int) else tuple(int(t) for t in threads)
        if len(shape) not in (1, 2) or len(threads) != len(shape):
            raise ValueError("use a 1-D size with 1-D blocks (n=10, threads=4) or a 2-D shape "
                             "with 2-D blocks (shape=(rows, cols), threads=(x, y))")
        if min(shape) < 1 or min(threads) < 1:
            raise ValueError("sizes and block sizes must be at least 1")
        if len(shape) == 1:
            auto = (_ceil_div(shape[0], threads[0]),)
        else:
            auto = (_ceil_div(shape[1], threads[0]), _ceil_div(shape[0], threads[1]))
        if blocks is None:
            blocks = auto
        blocks = (int(blocks),) if isinstance(blocks, int) else tuple(int(b) for b in blocks)
        if len(blocks) != len(shape) or min(blocks) < 1:
            raise ValueError(f"blocks must be {len(shape)} positive number(s), not {blocks}")
        return cls(shape, threads, blocks, int(warp_size or _current_warp_size()))

    # ---- counts -----------------------------------------------------------------------------
    @property
    def dims(self) -> int:
        return len(self.shape)

    @property
    def threads_per_block(self) -> int:
        p = 1
        for t in self.threads:
            p *= t
        return p

    @property
    def block_count(self) -> int:
        p = 1
        for b in self.blocks:
            p *= b
        return p

    @property
    def total_threads(self) -> int:
        return self.threads_per_block * self.block_count

    @property
    def elements(self) -> int:
        p = 1
        for s in self.shape:
            p *= s
        return p

    @property
    def covered_extent(self) -> tuple[int, ...]:
        """How far the grid reaches, in the data's (row, col) order."""
        if self.dims == 1:
            return (self.blocks[0] * self.threads[0],)
        return (self.blocks[1] * self.threads[1], self.blocks[0] * self.threads[0])

    @property
    def busy_threads(self) -> int:
        return _prod(min(s, c) for s, c in zip(self.shape, self.covered_extent))

    @property
    def idle_threads(self) -> int:
        return self.total_threads - self.busy_threads

    @property
    def uncovered_elements(self) -> int:
        """Elements no thread handles: the grid is too small."""
        return self.elements - self.busy_threads

    @property
    def warps_per_block(self) -> int:
        return _ceil_div(self.threads_per_block, self.warp_size)

    @property
    def empty_lanes_per_block(self) -> int:
        """Lanes of the block's last warp with no thread: a warp always runs warp_size lanes."""
        return self.warps_per_block * self.warp_size - self.threads_per_block

    @property
    def too_large(self) -> str | None:
        if self.threads_per_block > 1024:
            return f"{self.threads_per_block} threads per block: CUDA allows at most 1024"
        return None

    # ---- mapping ----------------------------------------------------------------------------
    def element_of(self, block: Sequence[int], thread: Sequence[int]) -> tuple[int, ...] | None:
        if self.dims == 1:
            i = block[0] * self.threads[0] + thread[0]
            return (i,) if i < self.shape[0] else None
        row = block[1] * self.threads[1] + thread[1]
        col = block[0] * self.threads[0] + thread[0]
        return (row, col) if row < self.shape[0] and col < self.shape[1] else None

    def warp_lane(self, thread: Sequence[int]) -> tuple[int, int]:
        linear = thread[0] + (thread[1] * self.threads[0] if self.dims == 2 else 0)
        return divmod(linear, self.warp_size)

    def thread_of(self, element: int | Sequence[int]) -> Thread | None:
        """The thread that handles ``element`` (``i`` or ``(row, col)``), None if none does."""
        element = (int(element),) if isinstance(element, int) else tuple(int(e) for e in element)
        if len(element) != self.dims or any(not 0 <= e < s for e, s in zip(element, self.shape)):
            raise IndexError(f"element {element} is outside the data of shape {self.shape}")
        if self.dims == 1:
            b, t = divmod(element[0], self.threads[0])
            block, thread = (b,), (t,)
        else:
            by, ty = divmod(element[0], self.threads[1])
            bx, tx = divmod(element[1], self.threads[0])
            block, thread = (bx, by), (tx, ty)
        if any(b >= n for b, n in zip(block, self.blocks)):
            return None
        return Thread(block, thread, *self.warp_lane(thread), element)

    def iter_threads(self) -> Iterator[Thread]:
        """Every thread of the launch, block by block, in the order of its lanes."""
        for block in _ndindex(self.blocks):
            for thread in _ndindex(self.threads):
                yield Thread(block, thread, *self.warp_lane(thread), self.element_of(block, thread))

    # ---- words ------------------------------------------------------------------------------
    def summary(self) -> str:
        w = self.warp_size
        if self.dims == 1:
            what = f"n = {self.shape[0]:,} elements"
            b, t = self.blocks[0], self.threads[0]
            grid = f"{b:,} block{'s' * (b != 1)} × {t:,} thread{'s' * (t != 1)}"
        else:
            what = f"a {self.shape[0]} × {self.shape[1]} image (rows × columns)"
            grid = (f"{self.blocks[0]} × {self.blocks[1]} blocks of {self.threads[0]} × "
                    f"{self.threads[1]} threads (x × y)")
        lines = [f"{what}; {grid} = {self.total_threads:,} threads, "
                 f"{self.idle_threads:,} of them idle (past the end of the data)."]
        empty = self.empty_lanes_per_block
        lines.append(
            f"Warps of {w}: each block of {self.threads_per_block:,} threads runs as "
            f"{self.warps_per_block} warp{'s' * (self.warps_per_block != 1)}"
            + (f"; its last warp has {empty} empty lane{'s' * (empty != 1)} (a warp always "
               f"occupies {w} lanes: {self.block_count * empty:,} lanes wasted in the grid)."
               if empty else ", all lanes used."))
        if self.uncovered_elements:
            lines.append(f"The grid is too small: {self.uncovered_elements:,} element"
                         f"{'s' * (self.uncovered_elements != 1)} have no thread at all.")
        if self.too_large:
            lines.append(f"This launch would fail on a GPU: {self.too_large}.")
        return "\n".join(lines)

    def text(self, max_rows: int = 24) -> str:
        """The picture in characters, for a terminal or a notebook without widgets."""
        out = [self.summary(), ""]
        if self.dims == 1:
            out.append("one row per warp: lane -> element (· = idle thread, past the end)")
            rows = 0
            per_row = min(self.warp_size, 16)
            for b in range(self.blocks[0]):
                for wi in range(self.warps_per_block):
                    first = wi * self.warp_size
                    last = min(first + self.warp_size, self.threads[0])
                    for start in range(first, last, per_row):
                        if rows >= max_rows:
                            out.append(f"… ({self.block_count} blocks in all)")
                            return "\n".join(out)
                        cells = []
                        for t in range(start, min(start + per_row, last)):
                            e = self.element_of((b,), (t,))
                            cells.append(f"{e[0]:>5}" if e else "    ·")
                        label = f"block {b:>3} warp {wi:>2} lanes {start - first:>2}+ |"
                        out.append(label + "".join(cells))
                        rows += 1
            return "\n".join(out)
        rows, cols = self.covered_extent
        out.append("one character per thread, the letter of its block (. = idle thread, "
                   "past the image; # = pixel with no thread)")
        height = max(rows, self.shape[0])
        width = max(cols, self.shape[1])
        for r in range(min(height, max_rows)):
            line = []
            for c in range(min(width, 96)):
                inside = r < self.shape[0] and c < self.shape[1]
                if r >= rows or c >= cols:
                    line.append("#" if inside else " ")
                    continue
                b = (c // self.threads[0]) + (r // self.threads[1]) * self.blocks[0]
                letter = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[b % 52]
                line.append(letter if inside else ".")
            out.append("".join(line))
        if height > max_rows:
            out.append(f"… ({height} rows in all)")
        return "\n".join(out)

    # ---- picture ----------------------------------------------------------------------------
    def svg(self, highlight: int | Sequence[int] | None = None) -> str:
        return _svg_1d(self, highlight) if self.dims == 1 else _svg_2d(self, highlight)

    def html(self, highlight=None, root: bool = True) -> str:
        """Summary and picture; ``root`` wraps them in the element with the aid's CSS classes
        (the widget carries those classes itself)."""
        found = ""
        if highlight is not None:
            found = f"<p>{html.escape(self.find_text(highlight))}</p>"
        summary = "".join(f"<p style='margin:2px 0'>{html.escape(s)}</p>"
                          for s in self.summary().splitlines())
        classes = f" class='{' '.join(ROOT_CLASSES)}'" if root else ""
        return (f"<div{classes}>{summary}{found}"
                f"<div style='overflow-x:auto'>{self.svg(highlight)}</div></div>")

    def find_text(self, element) -> str:
        try:
            t = self.thread_of(element)
        except IndexError as exc:
            return str(exc)
        what = f"element {element}" if self.dims == 1 else f"pixel (row, col) = {tuple(element)}"
        if t is None:
            return f"{what}: no thread handles it (the grid is too small)"
        return (f"{what} is handled by thread {_tup(t.thread)} of block {_tup(t.block)}: "
                f"warp {t.warp} of its block, lane {t.lane}")


def _prod(values) -> int:
    p = 1
    for v in values:
        p *= v
    return p


def _ndindex(dims: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """x fastest, as CUDA numbers threads (and the simulator runs blocks)."""
    for rest in itertools.product(*(range(d) for d in reversed(dims[1:]))):
        for x in range(dims[0]):
            yield (x, *reversed(rest))


def _tup(t: tuple[int, ...]) -> str:
    return str(t[0]) if len(t) == 1 else "(" + ", ".join(map(str, t)) + ")"


# ---- SVG --------------------------------------------------------------------------------------
def _fill(block_index: int, warp: int) -> str:
    hue = (block_index * 67 + 200) % 360
    light = 70 if warp % 2 == 0 else 55
    return f"hsl({hue}, 55%, {light}%)"


def _defs(uid: str) -> str:
    return (f"<defs><pattern id='hatch{uid}' width='6' height='6' patternUnits='userSpaceOnUse' "
            f"patternTransform='rotate(45)'><rect width='6' height='6' fill='#e4e4e4'/>"
            f"<line x1='0' y1='0' x2='0' y2='6' stroke='#a0a0a0' stroke-width='2'/></pattern>"
            f"</defs>")


def _svg_1d(g: GridLayout, highlight) -> str:
    uid = str(next(_svg_ids))
    w = g.warp_size
    cell = max(12, min(28, 896 // w))
    label_w, top, row_h = 118, 8, cell + 4
    font = max(7, min(11, cell // 2 - 1))
    parts, y, drawn = [], top, 0
    rows_total = g.block_count * g.warps_per_block
    hi = int(highlight) if isinstance(highlight, int) else None
    for b in range(g.blocks[0]):
        if drawn >= MAX_CELLS:
            break
        for wi in range(g.warps_per_block):
            parts.append(f"<text x='{label_w - 6}' y='{y + cell * 0.7:.1f}' text-anchor='end' "
                         f"font-size='11'>block {b} · warp {wi}</text>")
            for lane in range(w):
                t = wi * w + lane
                x = label_w + lane * cell
                if t >= g.threads[0]:
                    parts.append(f"<rect x='{x + 1}' y='{y}' width='{cell - 2}' height='{cell}' "
                                 f"fill='none' stroke='#c8c8c8' stroke-dasharray='2,2'>"
                                 f"<title>warp {wi}, lane {lane}: no thread (the block has "
                                 f"{g.threads[0]} threads)</title></rect>")
                    continue
                e = g.element_of((b,), (t,))
                fill = _fill(b, wi) if e else f"url(#hatch{uid})"
                stroke = "#d62728' stroke-width='3" if e is not None and e[0] == hi else "#555"
                tip = (f"block {b}, thread {t}: warp {wi}, lane {lane}; "
                       + (f"handles element {e[0]}" if e else "idle (past the end of the data)"))
                parts.append(f"<rect x='{x + 1}' y='{y}' width='{cell - 2}' height='{cell}' "
                             f"fill='{fill}' stroke='{stroke}'><title>{tip}</title></rect>")
                if e and cell >= 18:
                    parts.append(f"<text x='{x + cell / 2:.1f}' y='{y + cell * 0.68:.1f}' "
                                 f"text-anchor='middle' font-size='{font}' "
                                 f"pointer-events='none'>{e[0]}</text>")
                drawn += 1
            y += row_h
        y += 4
    if g.block_count * g.threads_per_block > drawn:
        parts.append(f"<text x='{label_w}' y='{y + 12}' font-size='12'>… {rows_total:,} warps "
                     f"in all; the first {drawn:,} threads are drawn</text>")
        y += 18
    uncovered = g.uncovered_elements
    if uncovered:
        parts.append(f"<text x='{label_w}' y='{y + 12}' font-size='12' fill='#d62728'>elements "
                     f"{g.busy_threads}…{g.shape[0] - 1} have no thread</text>")
        y += 18
    y += _legend(parts, label_w, y + 4, uid, g.warp_size)
    width = label_w + w * cell + 8
    return (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {y + 4}' "
            f"width='{width}' style='max-width:100%;height:auto;font-family:sans-serif'>"
            + _defs(uid) + "".join(parts) + "</svg>")


def _legend(parts: list, x: float, y: float, uid: str, warp_size: int) -> int:
    items = [(_fill(0, 0), "a thread: colour = block, two shades = alternate warps of "
                           f"{warp_size}"),
             (f"url(#hatch{uid})", "idle thread: past the end of the data"),
             ("none", "lane with no thread (the block does not fill its last warp)")]
    for k, (fill, words) in enumerate(items):
        dash = " stroke-dasharray='2,2' stroke='#999'" if fill == "none" else " stroke='#555'"
        parts.append(f"<rect x='{x}' y='{y + 18 * k}' width='14' height='14' fill='{fill}'"
                     f"{dash}/><text x='{x + 20}' y='{y + 18 * k + 11}' font-size='11'>"
                     f"{html.escape(words)}</text>")
    return 18 * len(items) + 4


def _svg_2d(g: GridLayout, highlight) -> str:
    uid = str(next(_svg_ids))
    rows_cov, cols_cov = g.covered_extent
    rows = min(max(rows_cov, g.shape[0]), 64)
    cols = min(max(cols_cov, g.shape[1]), 64)
    cell = max(8, min(30, 880 // max(cols, 1)))
    left, top = 34, 20
    hi = tuple(highlight) if highlight is not None and not isinstance(highlight, int) else None
    parts = []
    for r in range(rows):
        for c in range(cols):
            x, y = left + c * cell, top + r * cell
            inside = r < g.shape[0] and c < g.shape[1]
            if r >= rows_cov or c >= cols_cov:
                if inside:
                    parts.append(f"<rect x='{x}' y='{y}' width='{cell}' height='{cell}' "
                                 f"fill='white' stroke='#d62728'><title>pixel ({r}, {c}): no "
                                 f"thread (the grid is too small)</title></rect>")
                continue
            block = (c // g.threads[0], r // g.threads[1])
            thread = (c % g.threads[0], r % g.threads[1])
            warp, lane = g.warp_lane(thread)
            b_linear = block[0] + block[1] * g.blocks[0]
            fill = _fill(b_linear, warp) if inside else f"url(#hatch{uid})"
            tip = (f"block {_tup(block)}, thread {_tup(thread)}: warp {warp}, lane {lane}; "
                   + (f"pixel (row {r}, col {c})" if inside else "idle (outside the image)"))
            stroke = "#d62728' stroke-width='3" if hi == (r, c) else "white' stroke-width='0.5"
            parts.append(f"<rect x='{x}' y='{y}' width='{cell}' height='{cell}' fill='{fill}' "
                         f"stroke='{stroke}'><title>{tip}</title></rect>")
            if cell >= 26:
                parts.append(f"<text x='{x + cell / 2:.1f}' y='{y + cell * 0.62:.1f}' "
                             f"text-anchor='middle' font-size='8' pointer-events='none'>"
                             f"{thread[0]},{thread[1]}</text>")
    # warp boundaries (thin) and block boundaries (thick)
    for r in range(rows):
        for c in range(cols):
            if r >= rows_cov or c >= cols_cov:
                continue
            here = ((c // g.threads[0], r // g.threads[1]),
                    g.warp_lane((c % g.threads[0], r % g.threads[1]))[0])
            for dr, dc in ((0, 1), (1, 0)):
                r2, c2 = r + dr, c + dc
                if r2 >= min(rows, rows_cov) or c2 >= min(cols, cols_cov):
                    continue
                there = ((c2 // g.threads[0], r2 // g.threads[1]),
                         g.warp_lane((c2 % g.threads[0], r2 % g.threads[1]))[0])
                if here == there:
                    continue
                width = 2.5 if here[0] != there[0] else 1.2
                colour = "#222" if here[0] != there[0] else "#666"
                x1 = left + (c + dc) * cell
                y1 = top + (r + dr) * cell
                x2, y2 = (x1, y1 + cell) if dc else (x1 + cell, y1)
                parts.append(f"<line x1='{x1}' y1='{y1}' x2='{x2}' y2='{y2}' stroke='{colour}' "
                             f"stroke-width='{width}'/>")
    img_w, img_h = min(g.shape[1], cols) * cell, min(g.shape[0], rows) * cell
    parts.append(f"<rect x='{left}' y='{top}' width='{img_w}' height='{img_h}' fill='none' "
                 f"stroke='#d62728' stroke-width='2' stroke-dasharray='6,3'/>")
    parts.append(f"<text x='{left}' y='{top - 6}' font-size='11'>columns → (x)</text>")
    parts.append(f"<text x='{left - 6}' y='{top + 12}' font-size='11' text-anchor='end'>rows"
                 f"</text><text x='{left - 6}' y='{top + 26}' font-size='11' "
                 f"text-anchor='end'>↓ (y)</text>")
    y = top + rows * cell + 10
    if rows < max(rows_cov, g.shape[0]) or cols < max(cols_cov, g.shape[1]):
        parts.append(f"<text x='{left}' y='{y + 10}' font-size='12'>… the first {rows} rows and "
                     f"{cols} columns are drawn</text>")
        y += 18
    parts.append(f"<text x='{left}' y='{y + 10}' font-size='11'>dashed red: the image's edge; "
                 f"thick lines: blocks; thin lines: warps inside a block</text>")
    y += 16
    y += _legend(parts, left, y, uid, g.warp_size)
    width = left + cols * cell + 8
    return (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {max(width, 520)} {y + 4}' "
            f"width='{max(width, 520)}' style='max-width:100%;height:auto;"
            f"font-family:sans-serif'>" + _defs(uid) + "".join(parts) + "</svg>")


# ---- static picture and widget ----------------------------------------------------------------
class GridPicture:
    """A static picture of one launch; displays as HTML (SVG) in a notebook, as text elsewhere."""

    def __init__(self, layout: GridLayout, highlight=None):
        self.layout, self.highlight = layout, highlight

    def _repr_html_(self) -> str:
        return self.layout.html(self.highlight)

    def __repr__(self) -> str:
        text = self.layout.text()
        if self.highlight is not None:
            text += "\n" + self.layout.find_text(self.highlight)
        return text


def grid_picture(n: int | None = None, threads: int | Sequence[int] = 4, blocks=None, *,
                 shape: Sequence[int] | None = None, warp_size: int | None = None,
                 highlight=None) -> GridPicture:
    """A static picture of a launch over ``n`` elements (or an image of ``shape=(rows, cols)``
    with ``threads=(x, y)``). ``blocks`` defaults to just enough to cover the data."""
    data = shape if shape is not None else (10 if n is None else n)
    return GridPicture(GridLayout.make(data, threads, blocks, warp_size), highlight)


def _parse_element(text: str):
    text = text.strip().strip("()[]")
    if not text:
        return None
    parts = [p for p in text.replace(",", " ").split() if p]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        return "?"
    return values[0] if len(values) == 1 else tuple(values)


def grid_explorer(n: int = 10, threads: int | Sequence[int] = 4, *,
                  shape: Sequence[int] | None = None, warp_size: int | None = None):
    """A widget to poke a launch: data size, block size and (optionally) the number of blocks;
    the picture is redrawn on every change. Starts in 2-D when ``shape=(rows, cols)`` is given
    (then ``threads=(x, y)``). Without ipywidgets, the static :func:`grid_picture`."""
    try:
        import ipywidgets as widgets
    except ImportError:       # pragma: no cover - ipywidgets is a dependency
        return grid_picture(n, threads, shape=shape, warp_size=warp_size)
    return _explorer_class(widgets)(n=n, threads=threads, shape=shape, warp_size=warp_size)


_cls_cache: dict = {}


def _explorer_class(widgets):
    if "cls" in _cls_cache:
        return _cls_cache["cls"]

    class GridExplorer(widgets.VBox):
        """Controls above, the picture (an HTML widget holding SVG) below."""

        def __init__(self, n=10, threads=4, shape=None, warp_size=None):
            self.warp_size = int(warp_size or _current_warp_size())
            two_d = shape is not None
            t1 = threads if isinstance(threads, int) else 32
            tx, ty = (threads if not isinstance(threads, int) else (8, 8)) if two_d else (8, 8)
            rows, cols = shape if two_d else (12, 20)
            style = {"description_width": "150px"}
            lay = widgets.Layout(width="460px")
            self.mode = widgets.ToggleButtons(options=["1-D array", "2-D image"],
                                              value="2-D image" if two_d else "1-D array")
            self.n = widgets.IntSlider(value=n, min=1, max=1024, description="elements n",
                                       style=style, layout=lay)
            self.tpb = widgets.IntSlider(value=t1, min=1, max=1024,
                                         description="threads per block", style=style, layout=lay)
            self.rows = widgets.IntSlider(value=rows, min=1, max=64, description="image rows",
                                          style=style, layout=lay)
            self.cols = widgets.IntSlider(value=cols, min=1, max=64,
                                          description="image columns", style=style, layout=lay)
            self.tx = widgets.IntSlider(value=tx, min=1, max=64, description="block x (threads)",
                                        style=style, layout=lay)
            self.ty = widgets.IntSlider(value=ty, min=1, max=64, description="block y (threads)",
                                        style=style, layout=lay)
            self.auto = widgets.Checkbox(value=True, description="just enough blocks to cover "
                                         "the data", indent=False)
            self.bx = widgets.IntSlider(value=1, min=1, max=64, description="blocks (x)",
                                        style=style, layout=lay)
            self.by = widgets.IntSlider(value=1, min=1, max=64, description="blocks (y)",
                                        style=style, layout=lay)
            self.find = widgets.Text(value="", placeholder="e.g. 9, or 3,5 for (row, col)",
                                     description="find element", style=style, layout=lay)
            self.picture = widgets.HTML()
            self.controls = widgets.VBox()
            super().__init__([self.mode, self.controls, self.picture])
            for c in ROOT_CLASSES:
                self.add_class(c)
            for w in (self.mode, self.n, self.tpb, self.rows, self.cols, self.tx, self.ty,
                      self.auto, self.bx, self.by, self.find):
                w.observe(self._changed, names="value")
            self._changed()

        def layout_now(self) -> GridLayout:
            if self.mode.value == "1-D array":
                blocks = None if self.auto.value else self.bx.value
                return GridLayout.make(self.n.value, self.tpb.value, blocks, self.warp_size)
            blocks = None if self.auto.value else (self.bx.value, self.by.value)
            return GridLayout.make((self.rows.value, self.cols.value),
                                   (self.tx.value, self.ty.value), blocks, self.warp_size)

        def _changed(self, change=None):
            one = self.mode.value == "1-D array"
            shown = ([self.n, self.tpb] if one else [self.rows, self.cols, self.tx, self.ty])
            shown.append(self.auto)
            if not self.auto.value:
                shown += [self.bx] if one else [self.bx, self.by]
            shown.append(self.find)
            if list(self.controls.children) != shown:
                self.controls.children = shown
            self.picture.value = self.layout_now().html(self._highlight(), root=False)

        def _highlight(self):
            h = _parse_element(self.find.value)
            one = self.mode.value == "1-D array"
            if h is None or h == "?" or isinstance(h, int) != one or \
                    (not one and len(h) != 2):
                return None
            return h

        def _repr_mimebundle_(self, **kwargs):
            data = super()._repr_mimebundle_(**kwargs) or {}
            layout = self.layout_now()
            # Without a widget frontend (nbconvert, a static viewer) the picture still shows.
            data["text/html"] = layout.html(self._highlight())
            data["text/plain"] = layout.text()
            return data

    _cls_cache["cls"] = GridExplorer
    return GridExplorer
