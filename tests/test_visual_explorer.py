"""The thread and grid explorer: does it say which thread handles which element, who idles, and
how blocks fill warps, and does it redraw when a slider moves?"""

from __future__ import annotations

import itertools
import re

import pytest

import autograder as ag
from autograder.visual import explorer
from autograder.visual.explorer import GridLayout, grid_explorer, grid_picture


def _cuda_1d(n, threads, blocks):
    """The course's formula, written out: thread t of block b handles i = b * threads + t."""
    return {(b, t): (b * threads + t if b * threads + t < n else None)
            for b in range(blocks) for t in range(threads)}


@pytest.mark.parametrize("n, threads, blocks", [(10, 4, None), (1, 1, None), (1025, 128, None),
                                                (64, 32, None), (100, 32, 2), (33, 96, None)])
def test_1d_mapping_matches_the_formula(n, threads, blocks):
    layout = GridLayout.make(n, threads, blocks, warp_size=32)
    nblocks = blocks or -(-n // threads)
    expected = _cuda_1d(n, threads, nblocks)
    got = {(t.block[0], t.thread[0]): (t.element[0] if t.element else None)
           for t in layout.iter_threads()}
    assert got == expected
    assert layout.idle_threads == sum(v is None for v in expected.values())
    handled = sorted(v for v in expected.values() if v is not None)
    assert layout.uncovered_elements == n - len(handled)
    for i in range(n):
        t = layout.thread_of(i)
        assert (t is None) == (i not in handled)
        if t is not None:
            assert expected[(t.block[0], t.thread[0])] == i
            assert (t.warp, t.lane) == divmod(t.thread[0], 32)


def test_2d_mapping_x_runs_along_a_row():
    layout = GridLayout.make((5, 7), (4, 2), warp_size=32)        # rows, cols; block x=4, y=2
    assert layout.blocks == (2, 3)                                  # 2 across 7 cols, 3 down 5 rows
    seen = {}
    for t in layout.iter_threads():
        row = t.block[1] * 2 + t.thread[1]
        col = t.block[0] * 4 + t.thread[0]
        assert t.element == ((row, col) if row < 5 and col < 7 else None)
        if t.element:
            seen[t.element] = seen.get(t.element, 0) + 1
    assert seen == {(r, c): 1 for r, c in itertools.product(range(5), range(7))}
    assert layout.idle_threads == 6 * 8 - 35
    t = layout.thread_of((3, 5))
    assert (t.block, t.thread) == ((1, 1), (1, 1))


def test_warps_of_a_2d_block_and_empty_lanes():
    layout = GridLayout.make((64, 64), (16, 4), warp_size=32)
    assert layout.warp_lane((3, 2)) == (1, 3)                       # 3 + 2*16 = 35
    assert layout.warps_per_block == 2 and layout.empty_lanes_per_block == 0
    wide = GridLayout.make((64, 64), (16, 4), warp_size=64)
    assert wide.warp_lane((3, 2)) == (0, 35) and wide.warps_per_block == 1
    odd = GridLayout.make(100, 48, warp_size=32)
    assert odd.warps_per_block == 2 and odd.empty_lanes_per_block == 16
    assert "its last warp has 16 empty lanes" in odd.summary()
    assert "48 lanes wasted" in odd.summary()                       # 3 blocks × 16


def test_warp_size_defaults_to_the_backend():
    layout = GridLayout.make(10, 4)
    if ag.backend.name == "cpu":
        from autograder import cpu_mode
        assert layout.warp_size == cpu_mode.warp_size()
    else:
        assert layout.warp_size == ag.backend.warp_size


def test_counts_read_as_english():
    """One block is "1 block", not "1 blocks"; a formula exercise's case is its calls, not n."""
    assert "1 block × 32 threads" in GridLayout.make(20, 32).summary()
    assert "4 blocks × 32 threads" in GridLayout.make(100, 32).summary()
    assert ag.problems.ch01.amdahl.sizes_text([ag.core.spec.Case(size=8, inputs={})]) == \
        "8 calls of amdahl_speedup(parallel_fraction, speedup)"


def test_too_few_blocks_and_too_large_a_block_are_said():
    short = GridLayout.make(100, 32, blocks=2)
    assert short.uncovered_elements == 36
    assert "36 elements have no thread" in short.summary()
    assert "elements 64…99 have no thread" in short.svg()
    assert "at most 1024" in GridLayout.make((64, 64), (64, 32)).summary()
    with pytest.raises(ValueError):
        GridLayout.make((4, 4), 4)


def test_picture_draws_every_thread_and_hatches_the_idle_ones():
    layout = GridLayout.make(10, 4, warp_size=32)
    svg = layout.svg(highlight=9)
    titles = re.findall(r"<title>([^<]*)</title>", svg)
    threads = [t for t in titles if t.startswith("block")]
    assert len(threads) == 12
    assert sum("idle" in t for t in threads) == 2
    assert len(re.findall(r"fill='url\(#hatch\d+\)'", svg)) == 2 + 1      # 2 idle + legend
    assert len([t for t in titles if "no thread" in t]) == 3 * 28            # empty lanes
    assert "block 2, thread 1: warp 0, lane 1; handles element 9" in titles
    assert "stroke='#d62728' stroke-width='3'" in svg                       # the highlight
    svg2 = GridLayout.make((5, 7), (4, 4), warp_size=32).svg()
    tips = re.findall(r"<title>([^<]*)</title>", svg2)
    assert len(tips) == 64 and sum("outside the image" in t for t in tips) == 29


def test_text_fallback_lists_lanes_and_idle_threads():
    text = repr(grid_picture(10, 4, highlight=9))
    assert "block   2 warp  0 lanes  0+ |    8    9    ·    ·" in text
    assert "element 9 is handled by thread 1 of block 2: warp 0 of its block, lane 1" in text
    text2 = repr(grid_picture(shape=(3, 5), threads=(4, 2)))
    grid = [line for line in text2.splitlines() if re.fullmatch(r"[A-D.]+", line)]
    assert grid == ["AAAAB...", "AAAAB...", "CCCCD...", "........"]   # 2 × 2 blocks of 4 × 2


def test_static_picture_has_the_contract_classes():
    html = grid_picture(10, 4)._repr_html_()
    assert html.startswith("<div class='aag-visual aag-visual-grid-explorer'>")
    assert "<svg" in html


def test_widget_redraws_on_every_change():
    w = grid_explorer(10, 4, warp_size=32)
    assert {"aag-visual", "aag-visual-grid-explorer"} <= set(w._dom_classes)
    assert "3 blocks × 4 threads" in w.picture.value
    assert "aag-visual-grid-explorer" not in w.picture.value     # the root is the widget itself
    w.n.value = 100
    w.tpb.value = 48
    assert "3 blocks × 48 threads = 144 threads, 44 of them idle" in w.picture.value
    w.auto.value = False
    assert w.bx in w.controls.children
    w.bx.value = 2
    assert "4 elements have no thread at all" in w.picture.value
    w.find.value = "99"
    assert "element 99: no thread handles it" in w.picture.value
    w.find.value = "50"
    assert "element 50 is handled by thread 2 of block 1" in w.picture.value
    w.mode.value = "2-D image"
    assert w.tx in w.controls.children and w.n not in w.controls.children
    w.auto.value = True
    w.rows.value, w.cols.value, w.tx.value, w.ty.value = 5, 7, 4, 4
    assert "2 × 2 blocks of 4 × 4 threads" in w.picture.value
    w.find.value = "3,5"
    assert "pixel (row, col) = (3, 5) is handled by thread (1, 3) of block (1, 0)" in \
        w.picture.value


def test_widget_carries_html_and_text_for_frontends_without_widgets():
    w = grid_explorer(shape=(6, 10), threads=(4, 4), warp_size=32)
    assert w.mode.value == "2-D image"
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"].startswith("<div class='aag-visual aag-visual-grid-explorer'>")
    assert "a 6 × 10 image" in bundle["text/plain"]


def test_visual_package_loads_lazily():
    import autograder.visual as visual
    assert visual.grid_explorer is grid_explorer and visual.GridLayout is GridLayout
    assert "access_picture" in dir(visual)
    with pytest.raises(AttributeError):
        visual.no_such_aid
    assert explorer.ROOT_CLASSES == ("aag-visual", "aag-visual-grid-explorer")


@pytest.mark.slow
def test_both_aids_render_in_a_notebook_run_without_a_widget_frontend(tmp_path):
    """nbconvert-style execution (nbclient, no browser): no errors, and each aid leaves an HTML
    output with its classes and a text one."""
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "import autograder as ag\nfrom numba import cuda\nimport numpy as np\n"
        "from autograder.visual import grid_explorer, access_picture",
        "grid_explorer(10, 4)",
        "@cuda.jit\ndef saxpy(a, x, y, out):\n    i = cuda.grid(1)\n    if i < out.size:\n"
        "        out[i] = a * x[i] + y[i]",
        "n = 40\naccess_picture(saxpy, 2, 32, np.float32(2), np.ones(n, np.float32), "
        "np.ones(n, np.float32), np.zeros(n, np.float32), isolate=True)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    for cell, name in ((nb.cells[1], "grid-explorer"), (nb.cells[3], "access-picture")):
        outputs = [o for o in cell.outputs if o.output_type in ("execute_result", "display_data")]
        assert outputs, cell.outputs
        data = outputs[-1]["data"]
        assert f"aag-visual aag-visual-{name}" in data["text/html"]
        assert data["text/plain"]
    assert "separate CPU-mode process" in nb.cells[3].outputs[-1]["data"]["text/plain"]
