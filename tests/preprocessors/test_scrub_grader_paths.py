"""ScrubGraderPaths on hand-made autograded cells (no kernel needed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.nbgrader_ext import ScrubGraderPaths

COURSE = "/srv/teacher/course"


def _feedback(*cells):
    step = ScrubGraderPaths(course_root=COURSE)
    nb, _ = step.preprocess(new_notebook(cells=list(cells)), {})
    return nb


def test_tracebacks_and_text_lose_the_graders_folders():
    library = f"{sys.prefix}/lib/python3/site-packages/numba/core/dispatcher.py"
    base = f"{Path(sys.base_prefix).resolve()}/lib/python3.11/asyncio/base_events.py"
    cell = new_code_cell("add[1, 32](x, y, out)", outputs=[
        new_output("error", ename="ValueError", evalue=f"bad input, see {COURSE}/autograded/ana",
                   traceback=[f"File {library}:12", f"File {base}:653", "ValueError: bad"]),
        new_output("stream", name="stderr", text=f"warning from {os.path.expanduser('~')}/x.py\n"),
        new_output("execute_result", data={"text/plain": f"'{sys.prefix}'"}, execution_count=1),
    ])
    nb = _feedback(cell, new_markdown_cell(f"written by the learner: {COURSE}"))
    error, stream, result = nb.cells[0].outputs
    text = "\n".join([error.evalue, *error.traceback, stream.text, result.data["text/plain"]])
    for folder in (sys.prefix, str(Path(sys.base_prefix).resolve()), COURSE,
                   os.path.expanduser("~")):
        assert folder not in text, folder
    # what the learner needs stays: which library file, which line, the message
    assert "<environment>/lib/python3/site-packages/numba/core/dispatcher.py:12" in text
    assert "<python>/lib/python3.11/asyncio/base_events.py:653" in text
    assert "see <course>/autograded/ana" in text and "ValueError: bad" in text
    # the learner's own markdown is theirs: untouched
    assert nb.cells[1].source.endswith(COURSE)


def test_other_paths_stay():
    cell = new_code_cell("x", outputs=[new_output("stream", name="stdout", text="/nowhere/x.so\n")])
    assert _feedback(cell).cells[0].outputs[0].text == "/nowhere/x.so\n"
