"""What chapter 6's notebook measures without a GPU: :func:`bank_conflicts` counts, in CPU mode,
the shared-memory bank conflicts of a launch from the race detector's recording
(:func:`autograder.races.record`), so that the chapter's padded-tile lesson can be measured
without a GPU; :func:`bank_table` prints them."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from autograder.problems.ch06.specs import WARP

BANKS = 32           # shared-memory banks, each 4 bytes wide


def bank_conflicts(kernel, blocks, threads, *args, shapes: dict | None = None,
                   word_bytes: int = 4) -> list[dict]:
    """Launch ``kernel[blocks, threads](*args)`` in CPU mode and count its shared-memory bank
    conflicts, per line of the kernel that touches a shared array.

    Every shared access is recorded (:func:`autograder.races.record`). The accesses that the 32
    threads of one warp make with the same line, in the same barrier interval, for the same time
    (a thread's n-th pass over that line) form one warp-wide access. Its element ``(r, c)`` of an
    array of shape ``(R, C)`` is the word ``r·C + c``, in bank ``word % 32`` (4-byte banks,
    ``word_bytes = 4``, float32). A bank asked for ``w`` different words serves them one after
    another: the access takes ``w`` passes ("w-way conflict"); threads reading one same word
    share it (a broadcast). ``shapes`` gives the shape of each shared array by name, as declared
    (padding included); arrays left out are taken to be as large as the elements seen.

    Returns one row per (array, line, kind): ``accesses`` (warp-wide accesses), ``passes`` (their
    total passes), ``worst`` (the most passes of one), ``ways`` (passes per access on average: 1
    means no conflict)."""
    from autograder.machine.simulator import races

    with races.record() as accesses:
        kernel[blocks, threads](*args)
    declared = {a.array: tuple(a.shape) for a in accesses if a.space == "shared" and a.shape}
    bx, by = (threads, 1) if isinstance(threads, int) else (tuple(threads) + (1,))[:2]
    extent: dict[str, list[int]] = {}
    for a in accesses:
        if getattr(a, "space", "shared") != "shared":
            continue
        seen = extent.setdefault(a.array, [0] * len(a.element))
        for d, v in enumerate(a.element):
            seen[d] = max(seen[d], v + 1)
    shapes = {name: tuple(shapes[name]) if shapes and name in shapes
              else declared.get(name, tuple(ext)) for name, ext in extent.items()}
    passes_of: dict[tuple, dict] = defaultdict(dict)     # warp-wide access -> {bank: {words}}
    visits: dict[tuple, int] = defaultdict(int)
    for a in accesses:
        if getattr(a, "space", "shared") != "shared":
            continue
        x, y, z = (tuple(a.thread) + (0, 0))[:3]
        lane = x + bx * (y + by * z)
        per_thread = (a.block, lane, a.array, a.line, a.kind, a.interval)
        n = visits[per_thread]
        visits[per_thread] += 1
        shape = shapes[a.array]
        word = int(np.ravel_multi_index(a.element, shape)) if shape else 0
        word = word * word_bytes // 4
        key = (a.array, a.line, a.kind, a.block, lane // WARP, a.interval, n)
        passes_of[key].setdefault(word % BANKS, set()).add(word)
    rows: dict[tuple, dict] = {}
    for (array, line, kind, *_rest), banks in passes_of.items():
        ways = max(len(words) for words in banks.values())
        row = rows.setdefault((array, line, kind), {"array": array, "line": line, "kind": kind,
                                                    "accesses": 0, "passes": 0, "worst": 0})
        row["accesses"] += 1
        row["passes"] += ways
        row["worst"] = max(row["worst"], ways)
    out = sorted(rows.values(), key=lambda r: (r["line"], r["kind"]))
    for row in out:
        row["ways"] = row["passes"] / row["accesses"]
    return out


def bank_table(rows: list[dict]) -> str:
    """:func:`bank_conflicts` rows as a small text table."""
    lines = [f"{'array':8s} {'line':>5s} {'kind':6s} {'warp accesses':>14s} {'passes':>7s} "
             f"{'passes/access':>14s} {'worst':>6s}"]
    for r in rows:
        lines.append(f"{r['array']:8s} {r['line']:5d} {r['kind']:6s} {r['accesses']:14d} "
                     f"{r['passes']:7d} {r['ways']:14.2f} {r['worst']:6d}")
    return "\n".join(lines)
