"""autograder.workspace: the learner's copy of course/ gains releases and never loses work."""

import json

import pytest

from autograder import cli, workspace
from autograder.workspace import MANIFEST, sync


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    write(root / "ch01" / "vector_add.ipynb", "release 1")
    write(root / "ch01" / "data" / "input.txt", "data")
    write(root / "ch02" / "matmul.ipynb", "matmul 1")
    write(root / "ch02" / ".ipynb_checkpoints" / "matmul-checkpoint.ipynb", "junk")
    return root


@pytest.fixture
def ws(tmp_path):
    return tmp_path / "workspace"


def quiet(course, ws):
    return sync(course, ws, echo=None)


def test_first_sync_copies_every_chapter(course, ws):
    result = quiet(course, ws)
    assert sorted(result.added_chapters) == ["ch01", "ch02"]
    assert (ws / "ch01" / "vector_add.ipynb").read_text() == "release 1"
    assert (ws / "ch01" / "data" / "input.txt").read_text() == "data"
    assert not (ws / "ch02" / ".ipynb_checkpoints").exists()
    assert result.summary().endswith("added 2 chapters")


def test_manifest_records_the_hash_of_each_copied_file(course, ws):
    quiet(course, ws)
    manifest = json.loads((ws / MANIFEST).read_text())
    assert set(manifest["files"]) == {"ch01/vector_add.ipynb", "ch01/data/input.txt",
                                      "ch02/matmul.ipynb"}
    assert manifest["files"]["ch01/vector_add.ipynb"]["sha256"] == \
        workspace._sha256(course / "ch01" / "vector_add.ipynb")


def test_second_sync_is_a_no_op(course, ws):
    quiet(course, ws)
    result = quiet(course, ws)
    assert not (result.added_files or result.updates or result.pending)
    assert result.summary().endswith("up to date")


def test_new_chapter_and_new_file_are_added(course, ws):
    quiet(course, ws)
    write(course / "ch03" / "reduce.ipynb", "reduce")
    write(course / "ch01" / "extra.ipynb", "extra")
    result = quiet(course, ws)
    assert result.added_chapters == ["ch03"]
    assert sorted(result.added_files) == ["ch01/extra.ipynb", "ch03/reduce.ipynb"]
    assert (ws / "ch03" / "reduce.ipynb").read_text() == "reduce"
    assert result.summary().endswith("added 1 chapter, added 1 file")


def test_edited_file_is_never_overwritten(course, ws):
    quiet(course, ws)
    mine = ws / "ch01" / "vector_add.ipynb"
    mine.write_text("my work")
    quiet(course, ws)
    assert mine.read_text() == "my work"


def test_course_change_is_offered_beside_the_learner_file(course, ws, capsys):
    quiet(course, ws)
    mine = ws / "ch01" / "vector_add.ipynb"
    mine.write_text("my work")
    (course / "ch01" / "vector_add.ipynb").write_text("release 2")
    result = sync(course, ws)
    assert mine.read_text() == "my work"
    assert (ws / "ch01" / "vector_add.updated.ipynb").read_text() == "release 2"
    assert result.updates == ["ch01/vector_add.updated.ipynb"]
    out = capsys.readouterr().out
    assert "ch01/vector_add.updated.ipynb" in out and "1 update available" in out


def test_untouched_file_is_not_overwritten_either(course, ws):
    quiet(course, ws)
    (course / "ch02" / "matmul.ipynb").write_text("matmul 2")
    result = quiet(course, ws)
    assert (ws / "ch02" / "matmul.ipynb").read_text() == "matmul 1"
    assert (ws / "ch02" / "matmul.updated.ipynb").read_text() == "matmul 2"
    assert result.updates == ["ch02/matmul.updated.ipynb"]


def test_update_is_offered_once(course, ws):
    quiet(course, ws)
    (course / "ch02" / "matmul.ipynb").write_text("matmul 2")
    quiet(course, ws)
    again = quiet(course, ws)
    assert again.updates == [] and again.pending == ["ch02/matmul.updated.ipynb"]
    # The learner merged it and deleted the .updated file: it is not written again...
    (ws / "ch02" / "matmul.updated.ipynb").unlink()
    assert quiet(course, ws).summary().endswith("up to date")
    assert not (ws / "ch02" / "matmul.updated.ipynb").exists()
    # ...until the course changes once more.
    (course / "ch02" / "matmul.ipynb").write_text("matmul 3")
    assert quiet(course, ws).updates == ["ch02/matmul.updated.ipynb"]
    assert (ws / "ch02" / "matmul.updated.ipynb").read_text() == "matmul 3"


def test_newer_release_replaces_an_untouched_updated_file(course, ws):
    quiet(course, ws)
    (course / "ch02" / "matmul.ipynb").write_text("matmul 2")
    quiet(course, ws)
    (course / "ch02" / "matmul.ipynb").write_text("matmul 3")
    quiet(course, ws)
    assert (ws / "ch02" / "matmul.updated.ipynb").read_text() == "matmul 3"


def test_edited_updated_file_is_never_overwritten(course, ws):
    quiet(course, ws)
    (course / "ch02" / "matmul.ipynb").write_text("matmul 2")
    quiet(course, ws)
    upd = ws / "ch02" / "matmul.updated.ipynb"
    upd.write_text("I was merging in here")
    (course / "ch02" / "matmul.ipynb").write_text("matmul 3")
    result = quiet(course, ws)
    assert upd.read_text() == "I was merging in here"
    assert result.blocked == ["ch02/matmul.updated.ipynb"]
    assert any("rename it" in m for m in result.messages)


def test_learner_file_identical_to_new_release_needs_no_update(course, ws):
    quiet(course, ws)
    (course / "ch02" / "matmul.ipynb").write_text("matmul 2")
    (ws / "ch02" / "matmul.ipynb").write_text("matmul 2")
    result = quiet(course, ws)
    assert result.updates == [] and not (ws / "ch02" / "matmul.updated.ipynb").exists()


def test_deleted_file_is_restored_and_nothing_is_ever_deleted(course, ws):
    quiet(course, ws)
    (ws / "ch01" / "vector_add.ipynb").unlink()
    write(ws / "ch01" / "notes.md", "mine")
    (course / "ch02" / "matmul.ipynb").unlink()
    result = quiet(course, ws)
    assert result.added_files == ["ch01/vector_add.ipynb"]
    assert (ws / "ch01" / "vector_add.ipynb").read_text() == "release 1"
    assert (ws / "ch01" / "notes.md").read_text() == "mine"
    assert (ws / "ch02" / "matmul.ipynb").read_text() == "matmul 1"


def test_existing_workspace_without_manifest_is_adopted(course, ws):
    write(ws / "ch01" / "vector_add.ipynb", "older work")
    result = quiet(course, ws)
    assert (ws / "ch01" / "vector_add.ipynb").read_text() == "older work"
    assert "ch01" not in result.added_chapters
    assert (ws / MANIFEST).exists()


def test_damaged_manifest_does_not_stop_the_sync(course, ws):
    quiet(course, ws)
    (ws / MANIFEST).write_text("{not json")
    (ws / "ch01" / "vector_add.ipynb").write_text("my work")
    quiet(course, ws)
    assert (ws / "ch01" / "vector_add.ipynb").read_text() == "my work"
    json.loads((ws / MANIFEST).read_text())


def test_missing_course_directory_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        quiet(tmp_path / "nope", tmp_path / "ws")


def test_workspace_env_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(workspace.WORKSPACE_ENV, str(tmp_path / "elsewhere"))
    assert workspace.default_workspace() == tmp_path / "elsewhere"
    monkeypatch.delenv(workspace.WORKSPACE_ENV)
    assert workspace.default_workspace() == workspace.repo_root() / "workspace"


def test_lab_syncs_then_execs_jupyter_lab_in_the_workspace(course, ws, monkeypatch, capsys):
    monkeypatch.setattr(workspace, "default_course_dir", lambda: course)
    calls = []
    monkeypatch.setattr(cli.os, "execv", lambda exe, argv: calls.append((exe, argv)))
    monkeypatch.setattr(cli.os, "chdir", lambda d: calls.append(("chdir", d)))
    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000)
    cli.main(["lab", "--workspace", str(ws), "--no-browser", "--", "--port=9999"])
    assert (ws / "ch01" / "vector_add.ipynb").exists()
    assert calls[0] == ("chdir", ws)
    exe, argv = calls[1]
    assert argv[1:] == ["-m", "jupyter", "lab", "--no-browser", "--port=9999"]
    assert "added 2 chapters" in capsys.readouterr().out


def test_lab_as_root_allows_root(course, ws, monkeypatch):
    """JupyterLab refuses to start as root unless told to: as root, `aag lab` tells it."""
    monkeypatch.setattr(workspace, "default_course_dir", lambda: course)
    calls = []
    monkeypatch.setattr(cli.os, "execv", lambda exe, argv: calls.append(argv))
    monkeypatch.setattr(cli.os, "chdir", lambda d: None)
    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    cli.main(["lab", "--workspace", str(ws), "--no-browser"])
    assert calls[0][1:] == ["-m", "jupyter", "lab", "--no-browser", "--allow-root"]


def test_lab_without_course_directory_fails_cleanly(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(workspace, "default_course_dir", lambda: tmp_path / "none")
    monkeypatch.setattr(cli.os, "execv", lambda *a: pytest.fail("must not start Jupyter"))
    assert cli.main(["lab", "--workspace", str(tmp_path / "ws")]) == 1
    assert "no course directory" in capsys.readouterr().err


def test_lab_quiets_nbgraders_missing_config_warning(tmp_path):
    """Every JupyterLab start logged "No nbgrader_config.py file found": `aag lab` gives its
    environment an empty settings file, once, where nbgrader looks (etc/jupyter), and never
    replaces one that is there (the learners' environment of a class has the class's)."""
    from jupyter_core.paths import jupyter_config_path
    cli.quiet_nbgrader(tmp_path)
    path = tmp_path / "etc" / "jupyter" / "nbgrader_config.py"
    assert "get_config()" in path.read_text()
    path.write_text("c = get_config()\nc.CourseDirectory.course_id = 'gpu101'\n")
    cli.quiet_nbgrader(tmp_path)
    assert "gpu101" in path.read_text()
    import sys
    from pathlib import Path
    assert any(Path(p) == Path(sys.prefix) / "etc" / "jupyter" for p in jupyter_config_path())


def test_a_second_lab_on_the_same_workspace_points_at_the_first(course, ws, monkeypatch, tmp_path,
                                                                capsys):
    """A second `aag lab` quietly started a second server on the same files; it now says where the
    running one is (from Jupyter's runtime files: a live process serving this workspace) and
    starts nothing, unless asked with --another."""
    import json
    import os
    monkeypatch.setattr(workspace, "default_course_dir", lambda: course)
    monkeypatch.setattr(cli, "quiet_nbgrader", lambda prefix: None)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    ws.mkdir(parents=True, exist_ok=True)
    (runtime / "jpserver-1.json").write_text(json.dumps({
        "pid": os.getpid(), "root_dir": str(ws), "url": "http://localhost:8890/", "token": "t0k",
        "port": 8890}))
    calls = []
    monkeypatch.setattr(cli.os, "execv", lambda exe, argv: calls.append(argv))
    monkeypatch.setattr(cli.os, "chdir", lambda d: None)
    assert cli.main(["lab", "--workspace", str(ws), "--no-browser"]) == 0
    assert calls == []
    assert "already running" in capsys.readouterr().out
    assert cli.running_lab(tmp_path) is None                       # another folder: none
    cli.main(["lab", "--workspace", str(ws), "--no-browser", "--another"])
    assert len(calls) == 1


def _notebook(*cells) -> str:
    """A notebook of (id, cell_type, source, solution) cells, as JSON text."""
    out = []
    for cell_id, kind, source, solution in cells:
        meta = {"nbgrader": {"grade_id": f"g_{cell_id}", "solution": True, "grade": False,
                             "locked": False, "schema_version": 3, "task": False}} if solution else {}
        cell = {"id": cell_id, "cell_type": kind, "metadata": meta, "source": source}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        out.append(cell)
    return json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_new_edition_carries_the_learners_answers(tmp_path):
    """A new release of a notebook the learner worked in is offered beside it with their work in:
    each solution cell holds what they wrote (with its outputs), the cells they added follow the
    same cell as before, and the course's new text is there; their own notebook is untouched."""
    course, ws = tmp_path / "course", tmp_path / "ws"
    write(course / "ch01" / "add.ipynb", _notebook(
        ("intro", "markdown", "# Add", False), ("sol", "code", "# YOUR CODE HERE", True),
        ("try", "code", "add(1, 2)", False), ("answer", "markdown", "YOUR ANSWER HERE", True)))
    quiet(course, ws)
    mine = ws / "ch01" / "add.ipynb"
    nb = json.loads(mine.read_text())
    nb["cells"][1]["source"] = "def add(a, b):\n    return a + b"
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ok\n"}]
    nb["cells"][3]["source"] = "Because the sum is linear."
    nb["cells"].insert(2, {"id": "scratch", "cell_type": "code", "metadata": {},
                           "source": "print(add(2, 2))", "outputs": [], "execution_count": None})
    mine.write_text(json.dumps(nb))
    before = mine.read_bytes()
    # the second edition: clearer text, a new cell, the same exercises
    write(course / "ch01" / "add.ipynb", _notebook(
        ("intro", "markdown", "# Add two numbers", False), ("new", "markdown", "A hint.", False),
        ("sol", "code", "# YOUR CODE HERE", True), ("try", "code", "add(1, 2)", False),
        ("answer", "markdown", "YOUR ANSWER HERE", True)))
    result = sync(course, ws, echo=None)
    assert "with your answers carried into it" in result.messages[0]
    assert mine.read_bytes() == before
    merged = json.loads((ws / "ch01" / "add.updated.ipynb").read_text())
    assert [c["id"] for c in merged["cells"]] == ["intro", "new", "sol", "scratch", "try", "answer"]
    assert merged["cells"][0]["source"] == "# Add two numbers"
    assert merged["cells"][2]["source"].startswith("def add") and merged["cells"][2]["outputs"]
    assert merged["cells"][5]["source"] == "Because the sum is linear."
    # the next sync: offered once, not rewritten
    assert sync(course, ws, echo=None).updates == []
