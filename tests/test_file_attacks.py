"""What a learner's code can leave in a folder the grader later reads or writes (links, FIFOs,
devices, hard links, copy bombs, decompression bombs), and that the grader never follows it.

The unit tests here are cheap (no sandbox, no nbgrader); the attacks that need nbgrader's Execute
to plant them are submissions in tests/test_sandbox.py (one autograde run for all of them).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from autograder import safe_files, sandbox
from autograder.safe_files import CopyLimitExceeded, UnsafeFile, clean_folder, copy_tree, load_npz


@pytest.fixture
def course(tmp_path):
    """The instructor's files, and a submission folder beside them."""
    root = tmp_path / "course"
    (root / "source" / "ch").mkdir(parents=True)
    (root / "source" / "ch" / "ch.py").write_text("solution = 42\n")
    (root / "gradebook.db").write_text("grades")
    (root / ".aag").mkdir()
    (root / ".aag" / "secret").write_text("s3cret")
    work = root / "autograded" / "mallory" / "ch"
    work.mkdir(parents=True)
    (work / "helper.py").write_text("X = 1\n")
    (work / "sub").mkdir()
    (work / "sub" / "data.txt").write_text("data")
    (work / "ch.ipynb").write_text("{}")
    return root, work


def _all_files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): ("dir" if p.is_dir() else p.read_bytes().decode(errors="replace"))
            for p in sorted(folder.rglob("*"))}


# ---- copying ------------------------------------------------------------------------------------

def test_copy_keeps_plain_files_and_leaves_out_notebooks(course, tmp_path):
    _, work = course
    report = copy_tree(work, tmp_path / "copy")
    assert _all_files(tmp_path / "copy") == {"helper.py": "X = 1\n", "sub": "dir",
                                             "sub/data.txt": "data"}
    assert report.skipped == [] and report.files == 3 and report.bytes == len("X = 1\n") + 4


def test_copy_never_follows_a_link(course, tmp_path):
    root, work = course
    (work / "secret").symlink_to(root / ".aag" / "secret")
    (work / "gradebook.db").symlink_to(root / "gradebook.db")
    (work / "source").symlink_to(root / "source")                     # a link to a folder
    (work / "sub" / "up").symlink_to("../../../..")                    # relative, upwards
    (work / "zero").symlink_to("/dev/zero")
    (work / "dangling").symlink_to(root / "nothing")
    report = copy_tree(work, tmp_path / "copy")
    copied = _all_files(tmp_path / "copy")
    assert set(copied) == {"helper.py", "sub", "sub/data.txt"}
    assert not any("s3cret" in v or "grades" in v or "solution" in v for v in copied.values())
    assert {rel for rel, _ in report.skipped} == {"secret", "gradebook.db", "source", "sub/up",
                                                  "zero", "dangling"}
    assert all("symbolic link" in why for _, why in report.skipped)
    assert any("symbolic link" in note and "secret" in note for note in report.notes())


def test_copy_refuses_fifos_sockets_and_does_not_block(course, tmp_path):
    _, work = course
    os.mkfifo(work / "pipe")
    import socket
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(work / "sock"))
    t0 = time.monotonic()
    report = copy_tree(work, tmp_path / "copy")
    sock.close()
    assert time.monotonic() - t0 < 5
    assert dict(report.skipped) == {"pipe": "a FIFO", "sock": "a socket"}
    assert not (tmp_path / "copy" / "pipe").exists()


def test_copy_of_a_device_node_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    work = tmp_path / "w"
    work.mkdir()
    try:
        os.mknod(work / "zero", 0o666 | 0o020000, os.makedev(1, 5))   # like /dev/zero
    except PermissionError:
        pytest.skip("no mknod here")
    report = copy_tree(work, tmp_path / "copy")
    assert dict(report.skipped) == {"zero": "a device"}


def test_forty_links_to_a_big_file_copy_nothing(tmp_path):
    big = tmp_path / "libbig.so"
    with open(big, "wb") as f:
        f.truncate(64 << 20)                                   # sparse: 64 MiB, no disk used
    work = tmp_path / "w"
    work.mkdir()
    for i in range(40):
        (work / f"lib{i}.so").symlink_to(big)
    t0 = time.monotonic()
    report = copy_tree(work, tmp_path / "copy")
    assert time.monotonic() - t0 < 2
    assert report.bytes == 0 and len(report.skipped) == 40


def test_copy_stops_at_the_file_cap_and_says_so(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    for i in range(30):
        (work / f"f{i}").write_text("x")
    with pytest.raises(CopyLimitExceeded, match="more than 20 files"):
        copy_tree(work, tmp_path / "copy", max_files=20)
    # folders count too: 30 empty folders are 30 entries
    deep = tmp_path / "d"
    deep.mkdir()
    for i in range(30):
        (deep / f"d{i}").mkdir()
    with pytest.raises(CopyLimitExceeded):
        copy_tree(deep, tmp_path / "copy2", max_files=20)
    assert copy_tree(work, tmp_path / "copy3", max_files=30).files == 30


def test_copy_stops_at_the_byte_cap_and_says_so(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    with open(work / "big.bin", "wb") as f:
        f.truncate(3 << 20)
    with pytest.raises(CopyLimitExceeded, match="more than 2 MiB"):
        copy_tree(work, tmp_path / "copy", max_bytes=2 << 20)
    assert copy_tree(work, tmp_path / "copy2", max_bytes=3 << 20).bytes == 3 << 20


def test_copy_never_copies_its_destination_into_itself(tmp_path):
    # `aag grade ~/nb.ipynb` with the temporary folder inside the home: the home holds the copy
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("n")
    dst = home / "tmp" / "aag-judge-x" / "work"
    dst.parent.mkdir(parents=True)
    report = copy_tree(home, dst)
    assert (dst / "notes.txt").read_text() == "n"
    assert not (dst / "tmp" / "aag-judge-x" / "work").exists()
    assert ("tmp/", "the grader's own copy") in report.skipped   # it holds the copy


def test_copy_skips_folders_nested_too_deep(tmp_path):
    work = tmp_path / "w"
    path = work
    for _ in range(safe_files.MAX_DEPTH + 3):
        path = path / "d"
    path.mkdir(parents=True)
    report = copy_tree(work, tmp_path / "copy")
    assert any("nested deeper" in why for _, why in report.skipped)


def test_a_file_swapped_for_a_link_while_copying_is_not_followed(course, tmp_path, monkeypatch):
    """The race: listed as a file, a link by the time it is opened (O_NOFOLLOW catches it)."""
    root, work = course
    real_stat = os.stat

    def swapping_stat(name, *a, **k):
        st = real_stat(name, *a, **k)
        if name == "helper.py" and k.get("dir_fd") is not None:
            os.unlink(work / "helper.py")
            os.symlink(root / ".aag" / "secret", work / "helper.py")
        return st
    monkeypatch.setattr(safe_files.os, "stat", swapping_stat)
    report = copy_tree(work, tmp_path / "copy")
    assert not (tmp_path / "copy" / "helper.py").exists()
    assert any(rel == "helper.py" for rel, _ in report.skipped)


# ---- cleaning a folder the learner's kernel wrote -----------------------------------------------

def test_clean_folder_removes_links_special_and_hard_linked_files(course):
    root, work = course
    (work / "judge.json").symlink_to(root / "gradebook.db")
    (work / "sub" / "leak.txt").symlink_to(root / ".aag" / "secret")
    os.mkfifo(work / "pipe")
    os.link(work / "helper.py", work / "helper2.py")
    (work / "graded.ipynb").mkdir()                       # a folder where nbgrader writes a file
    removed = clean_folder(work, free=("judge.json", "graded.ipynb"))
    text = "\n".join(removed)
    for name in ("judge.json", "sub/leak.txt", "pipe", "helper.py: a file with 2 hard links",
                 "graded.ipynb"):
        assert name in text, (name, removed)
    assert f"symbolic link to {root / 'gradebook.db'}" in text
    left = {p.name for p in work.rglob("*")}
    assert left == {"sub", "data.txt", "ch.ipynb", "helper2.py"}   # a plain file once alone
    assert (work / "helper2.py").stat().st_nlink == 1
    assert (root / "gradebook.db").read_text() == "grades"      # targets untouched
    assert (root / ".aag" / "secret").read_text() == "s3cret"


def test_removals_are_summarized_by_kind():
    lines = [f"lib{i}.so: a symbolic link to /big (removed)" for i in range(40)] + ["p: a FIFO (removed)"]
    assert safe_files.summarize(lines) == [
        "lib0.so, lib1.so, lib2.so, lib3.so, lib4.so and 35 more: a symbolic link to /big (removed)",
        "p: a FIFO (removed)"]


def test_clean_folder_reaches_into_folders_made_read_only_or_unreadable(course):
    root, work = course
    for name, mode in (("ro", 0o555), ("closed", 0o000)):
        (work / name).mkdir()
        (work / name / "leak").symlink_to(root / ".aag" / "secret")
        (work / name).chmod(mode)
    removed = clean_folder(work)
    assert {"ro/leak", "closed/leak"} <= {line.split(":")[0] for line in removed}, removed
    assert not any(p.is_symlink() for p in work.rglob("*"))


def test_clean_folder_leaves_a_clean_folder_alone(course):
    _, work = course
    before = _all_files(work)
    assert clean_folder(work, free=("judge.json", "ch.ipynb")) == []
    assert _all_files(work) == before


def test_write_file_replaces_a_link_instead_of_writing_through_it(course):
    root, work = course
    (work / "judge.json").symlink_to(root / "gradebook.db")
    safe_files.write_file(work, "judge.json", b'{"ok": 1}')
    assert (root / "gradebook.db").read_text() == "grades"
    assert not (work / "judge.json").is_symlink()
    assert json.loads((work / "judge.json").read_text()) == {"ok": 1}
    assert [p.name for p in work.iterdir() if p.name.endswith(".tmp")] == []


# ---- outputs of the student process -------------------------------------------------------------

def _npz(path: Path, compressed: bool = False, **arrays) -> None:
    (np.savez_compressed if compressed else np.savez)(path, **arrays)


def test_read_file_reads_plain_files_only_and_never_waits(course):
    """What the grader reads back from a folder learner code wrote (the autograded notebook,
    judge.json, timestamp.txt): a link, a FIFO or a missing file read as nothing, at once."""
    root, work = course
    os.symlink(root / ".aag" / "secret", work / "judge.json")
    os.mkfifo(work / "timestamp.txt")
    assert safe_files.read_file(work / "helper.py") == b"X = 1\n"
    start = time.monotonic()
    assert safe_files.read_file(work / "judge.json") is None
    assert safe_files.read_file(work / "timestamp.txt") is None
    assert safe_files.read_file(work / "missing.txt") is None
    assert time.monotonic() - start < 5
    with pytest.raises(UnsafeFile, match="larger"):
        safe_files.read_file(work / "helper.py", max_bytes=4)


def test_load_npz_reads_a_plain_archive(tmp_path):
    _npz(tmp_path / "o.npz", out=np.arange(10, dtype=np.float32))
    got = load_npz(tmp_path, "o.npz", max_bytes=1000, max_file=10000)
    assert got["out"].dtype == np.float32 and got["out"].tolist() == list(range(10))


def _bomb(path: Path, gib: int = 2) -> None:
    """A valid .npz of ``gib`` GiB of float64 zeros, about 2 MB on disk: one deflate block of
    1 MiB of zeros ended by a full flush (so it refers to nothing before it) repeated, which is
    a valid deflate stream, written with the zip headers by hand (no 2 GiB to compress here)."""
    import struct
    import zlib

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (gib << 27,)})
    head = header.getvalue()
    zeros = bytes(1 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    count = gib << 10
    data = first + block * count + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    # The CRC is checked only once a member has been read to its end, long after NumPy has
    # allocated the whole array: the bomb works without a right one (computing it costs 2 s).
    crc = 0
    size = len(head) + count * len(zeros)
    name = b"out.npy"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), size,
                        len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(data),
                          size, len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)


def test_the_bomb_is_a_real_archive(tmp_path):
    """The bomb is what a learner would send: a valid archive whose member inflates (its
    directory, header and first MiB read back here)."""
    path = tmp_path / "small.npz"
    _bomb(path, gib=1)
    with zipfile.ZipFile(path) as zf:
        info = zf.infolist()[0]
        assert info.file_size > 2**30 and path.stat().st_size < 2 << 20
        with zf.open(info) as member:
            assert np.lib.format.read_magic(member) == (1, 0)
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
            assert shape == (2**27,) and dtype == np.float64
            assert member.read(1 << 20) == bytes(1 << 20)


def test_load_npz_refuses_a_decompression_bomb_before_inflating_it(tmp_path):
    """A 2 MB archive of zeros that would inflate to 2 GiB (np.load would allocate all of it):
    refused from its zip directory and its .npy header, without inflating anything."""
    path = tmp_path / "bomb.npz"
    _bomb(path)
    assert path.stat().st_size < 4 << 20
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(UnsafeFile, match="more than the grader accepts"):
        load_npz(tmp_path, "bomb.npz", max_bytes=safe_files.npz_bytes({"out": ((1000,), np.float32)}),
                 max_file=64 << 20)
    grew_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grew_kib < 200_000, f"loading the bomb grew this process by {grew_kib} KiB"


def test_load_npz_refuses_a_header_that_lies_about_its_shape(tmp_path):
    """Declared sizes small, but the .npy header claims a huge shape: NumPy would allocate it."""
    path = tmp_path / "o.npz"
    with zipfile.ZipFile(path, "w") as zf:
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f8", "fortran_order": False, "shape": (2**30,)})
        zf.writestr("out.npy", header.getvalue() + bytes(64))
    with pytest.raises(UnsafeFile):
        load_npz(tmp_path, "o.npz", max_bytes=1 << 20, max_file=1 << 20)


@pytest.mark.parametrize("make, match", [
    (lambda d, course: (d / "o.npz").symlink_to(course / "gradebook.db"), "link"),
    (lambda d, course: (d / "o.npz").symlink_to("/dev/zero"), "link"),
    (lambda d, course: os.mkfifo(d / "o.npz"), "FIFO"),
    (lambda d, course: (d / "o.npz").mkdir(), "folder"),
    (lambda d, course: (d / "o.npz").write_bytes(b"not a zip"), "not a readable"),
    (lambda d, course: np.savez(d / "o.npz", out=np.array([object()], dtype=object)), "objects|readable"),
])
def test_load_npz_refuses_what_is_not_a_plain_archive(tmp_path, course, make, match):
    root, _ = course
    d = tmp_path / "judge"
    d.mkdir()
    make(d, root)
    t0 = time.monotonic()
    with pytest.raises(UnsafeFile, match=match):
        load_npz(d, "o.npz", max_bytes=1 << 20, max_file=1 << 20)
    assert time.monotonic() - t0 < 5


def test_load_npz_refuses_names_outside_its_folder(tmp_path):
    for name in ("../x.npz", "/etc/passwd", "", ".."):
        with pytest.raises(UnsafeFile, match="outside"):
            load_npz(tmp_path, name, max_bytes=1 << 20, max_file=1 << 20)


def test_npz_cap_is_a_small_multiple_of_the_expected_outputs():
    cap = safe_files.npz_bytes({"out": ((1000,), np.float32), "m": ((10, 10), np.float64)})
    assert cap == 4 * (4000 + 800) + (1 << 20)


# ---- the watchdog, on a plain child (no sandbox needed) -----------------------------------------

def test_the_watchdog_stops_a_tree_with_too_many_processes(tmp_path):
    code = ("import subprocess, sys, time\n"
            "ps = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']) "
            "for _ in range(12)]\ntime.sleep(60)\n")
    s = sandbox.Supervised([sys.executable, "-c", code], None, timeout=60, memory_bytes=8 << 30,
                           max_processes=6, stdout=subprocess.DEVNULL)
    s.proc.wait(timeout=60)
    s.close()
    assert s.killed == "processes"


# ---- through the judge: what the student process sends back, and what it is sent ----------------

JUDGE_SETUP = "import numpy as np\nfrom numba import cuda\nimport autograder as ag\n"
GOOD_ADD = '''
@cuda.jit
def add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]

def add_vectors(x, y, out):
    add_kernel[(out.size + 127) // 128, 128](x, y, out)
'''
# The harness writes its outputs with np.savez, in the learner's process: a learner can replace it.
BOMB_SAVEZ = GOOD_ADD + r'''
import zlib, io
def _bomb_savez(file, **arrays):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (2**28,)})
    import zipfile
    with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("out.npy", "w", force_zip64=True) as m:
            m.write(header.getvalue())
            m.write(bytes(8 << 20))        # the header promises 2 GiB; 8 MiB of it is enough here
np.savez = _bomb_savez
'''
LINK_SAVEZ = GOOD_ADD + r'''
import os
def _link_savez(file, **arrays):
    os.symlink(%r, file)                   # a path outside the sandbox, as the grader sees it
np.savez = _link_savez
'''


def _judge(code: str, **settings):
    from autograder import judge
    from autograder.judge import CheckCall
    checks = [CheckCall("ch02.vector_add", "check", "add_vectors")]
    cells = [{"id": "setup", "source": JUDGE_SETUP}, {"id": "solution", "source": code}]
    return judge.judge_exercise(cells, checks, judge.Settings(secret="s", exec_timeout=120,
                                                              **settings), "t")


@pytest.mark.slow
def test_the_judge_refuses_an_outputs_bomb(tmp_path):
    result = _judge(BOMB_SAVEZ)
    assert not result.passed
    assert "more than the grader accepts" in result.error, result.error


@pytest.mark.slow
def test_the_judge_does_not_follow_an_outputs_link(tmp_path):
    secret = tmp_path / "instructor.npz"
    np.savez(secret, out=np.zeros(4, np.float32))
    result = _judge(LINK_SAVEZ % str(secret))
    assert not result.passed
    assert "is a link" in result.error, result.error


def _notebook_with_a_check(folder: Path) -> Path:
    import nbformat
    nb = nbformat.v4.new_notebook()
    grade = nbformat.v4.new_code_cell("ag.problems.ch02.vector_add.check(add_vectors)")
    grade.metadata["nbgrader"] = {"grade": True, "grade_id": "vector_add_test", "points": 3,
                                  "solution": False, "locked": True, "schema_version": 3}
    nb.cells = [nbformat.v4.new_code_cell(JUDGE_SETUP), nbformat.v4.new_code_cell(GOOD_ADD), grade]
    path = folder / "nb.ipynb"
    nbformat.write(nb, str(path))
    return path


@pytest.mark.parametrize("fill, words", [
    (lambda d: [(d / f"f{i}.txt").write_text("x") for i in range(2001)], "more than 2,000 files"),
    (lambda d: os.truncate(d / "big.bin", (256 << 20) + 1) if (d / "big.bin").touch() is None
     else None, "more than 256 MiB of files"),                    # sparse: no disk used
])
def test_aag_grade_of_a_crowded_folder_reports_the_cap(tmp_path, capsys, fill, words):
    """`aag grade ~/nb.ipynb` copies the notebook's folder for the judge: a folder over a cap
    fails the exercise with a sentence saying which cap (no student process is even started)."""
    from autograder.tools import grade
    nb = _notebook_with_a_check(tmp_path)
    fill(tmp_path)
    t0 = time.monotonic()
    assert grade.main([str(nb), "--json", "--no-sandbox"]) == 0   # the cap is the same either way
    out = json.loads(capsys.readouterr().out)
    assert time.monotonic() - t0 < 20
    assert out["vector_add_test"]["passed"] is False
    assert words in out["vector_add_test"]["error"] and "copy_max_files" in out["vector_add_test"]["error"]


def test_the_copier_tests_are_live(course, tmp_path):
    """What the judge used before (shutil.copytree, links followed) hands the secret over: the
    tests above would fail with it."""
    import shutil
    root, work = course
    (work / "aag_secret").symlink_to(os.path.join("..", "..", "..", ".aag", "secret"))
    shutil.copytree(work, tmp_path / "old", symlinks=False, ignore=shutil.ignore_patterns("*.ipynb"))
    assert (tmp_path / "old" / "aag_secret").read_text() == "s3cret"
    copy_tree(work, tmp_path / "new")
    assert not (tmp_path / "new" / "aag_secret").exists()


LINK_INPUTS = GOOD_ADD + r'''
import os
for _i in range(4):          # the names the judge writes its inputs to next
    for _kind in ("check", "check_hidden"):
        os.symlink(%r, f"inputs-{_kind}-{_i}.npz")
'''


@pytest.mark.slow
def test_the_judge_writes_its_inputs_through_no_link(tmp_path):
    """The student process's folder is the learner's: links planted at the names of the judge's
    next input files (pointing at a file of the instructor's, as the grader sees paths) are
    replaced, and the file they point at stays as it was."""
    target = tmp_path / "gradebook.db"
    target.write_text("grades")
    result = _judge(LINK_INPUTS % str(target))
    assert target.read_text() == "grades"
    assert result.passed, result.error


def test_save_npz_replaces_a_link(tmp_path):
    target = tmp_path / "gradebook.db"
    target.write_text("grades")
    d = tmp_path / "judge"
    d.mkdir()
    (d / "inputs-check-0.npz").symlink_to(target)
    safe_files.save_npz(d, "inputs-check-0.npz", {"x": np.arange(3)})
    assert target.read_text() == "grades"
    assert load_npz(d, "inputs-check-0.npz", 1 << 20, 1 << 20)["x"].tolist() == [0, 1, 2]
