"""HideHiddenTests on hand-made autograded cells (no kernel needed)."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.nbgrader_ext import HideHiddenTests

PLACEHOLDER = "# (hidden tests ran here; their code is not shown)"


def grade_cell(source, outputs=(), execution_count=7):
    cell = new_code_cell(source, execution_count=execution_count, metadata={"nbgrader": {
        "grade": True, "grade_id": "t", "locked": True, "points": 1, "schema_version": 3,
        "solution": False, "task": False}})
    cell.outputs = list(outputs)
    return cell


def hide(*cells):
    nb = new_notebook(cells=list(cells))
    nb, _ = HideHiddenTests().preprocess(nb, {})
    return nb.cells


def test_hidden_region_is_replaced_by_one_comment():
    """Is a hidden region, markers included, replaced by one placeholder line, the rest kept?"""
    (cell,) = hide(grade_cell(
        "check(f)\n"
        "### BEGIN HIDDEN TESTS\n"
        "check_hidden(f, seed=1234)\n"
        "assert f(3) == 9\n"
        "### END HIDDEN TESTS\n"
        "print('done')"))
    assert cell.source == f"check(f)\n{PLACEHOLDER}\nprint('done')"


def test_indentation_and_several_regions():
    """Does each of several regions become one placeholder, at the region's indentation?"""
    (cell,) = hide(grade_cell(
        "for n in sizes:\n"
        "    ### BEGIN HIDDEN TESTS\n"
        "    secret(n)\n"
        "    ### END HIDDEN TESTS\n"
        "visible()\n"
        "### BEGIN HIDDEN TESTS\n"
        "other_secret()\n"
        "### END HIDDEN TESTS"))
    assert cell.source == f"for n in sizes:\n    {PLACEHOLDER}\nvisible()\n{PLACEHOLDER}"


def test_unterminated_region_hides_the_rest():
    """Does a region with no END marker hide everything after it (fail closed), without crashing?"""
    (cell,) = hide(grade_cell("check(f)\n### BEGIN HIDDEN TESTS\nsecret()\nmore_secret()"))
    assert cell.source == f"check(f)\n{PLACEHOLDER}"


def test_traceback_quoting_hidden_code_is_dropped():
    """Is the traceback frame that quotes the cell's hidden code removed, the error itself kept?"""
    # The shape of a real IPython 8 traceback: separator, title, one entry per frame, last line.
    frame = ("\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[7]\x1b[39m\x1b[32m, line 3\x1b[39m\n"
             "\x1b[32m      2\x1b[39m \x1b[38;5;28;01m### BEGIN HIDDEN TESTS\x1b[39;00m\n"
             "\x1b[32m----> \x1b[39m\x1b[32m3\x1b[39m check_hidden(f, seed=1234)\n")
    library = "File \x1b[32m~/autograder/problem.py:88\x1b[39m, in \x1b[36mProblem.check\x1b[39m\n"
    error = new_output("error", ename="CheckFailed", evalue="out[1024] was never written",
                       traceback=["\x1b[31m-------\x1b[39m",
                                  "\x1b[31mCheckFailed\x1b[39m      Traceback (most recent call last)",
                                  frame, library,
                                  "\x1b[31mCheckFailed\x1b[39m: out[1024] was never written"])
    (cell,) = hide(grade_cell(
        "check(f)\n### BEGIN HIDDEN TESTS\ncheck_hidden(f, seed=1234)\n### END HIDDEN TESTS",
        outputs=[error]))
    tb = cell.outputs[0].traceback
    assert not any("check_hidden" in line or "seed=1234" in line for line in tb)
    assert library in tb and tb[-1].endswith("out[1024] was never written")
    assert cell.outputs[0].evalue == "out[1024] was never written"


def test_cells_without_hidden_tests_are_untouched():
    """Are other cells (code with tracebacks, markdown that mentions the markers) left alone?"""
    frame = "Cell In[3], line 1\n----> 1 add(1, 2)\n"
    error = new_output("error", ename="NameError", evalue="name 'add' is not defined",
                       traceback=[frame, "NameError: name 'add' is not defined"])
    code = grade_cell("add(1, 2)", outputs=[error], execution_count=3)
    md = new_markdown_cell("Write tests between ### BEGIN HIDDEN TESTS and ### END HIDDEN TESTS.")
    before_code, before_md = code.source, md.source
    out_code, out_md = hide(code, md)
    assert out_code.source == before_code and out_code.outputs[0].traceback[0] == frame
    assert out_md.source == before_md


def test_delimiters_are_configurable():
    """Does it honour other delimiters, like ClearHiddenTests' configurable ones?"""
    pp = HideHiddenTests(begin_test_delimeter="BEGIN SECRET", end_test_delimeter="END SECRET")
    nb = new_notebook(cells=[grade_cell("a()\n# BEGIN SECRET\nb()\n# END SECRET")])
    nb, _ = pp.preprocess(nb, {})
    assert nb.cells[0].source == f"a()\n{PLACEHOLDER}"
