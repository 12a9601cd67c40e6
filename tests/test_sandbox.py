"""The sandbox learner code runs in: what it must not reach, and the limits it runs under.

A probe, run exactly as the judge and nbgrader's kernel run learner code, tries each thing a
cheating submission would try; every attempt must fail, and writing its own working copy (the one
thing it may do) must work, so a probe that fails for some unrelated reason is caught too.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from autograder import sandbox

# On a laptop without bubblewrap these skip, saying why; CI installs it (.ci/run), so there a
# missing sandbox is a failure, not a skip.
pytestmark = pytest.mark.skipif(sandbox.unavailable_reason() is not None and not os.environ.get("CI"),
                                reason=f"no sandbox here: {sandbox.unavailable_reason()}")

PROBE = textwrap.dedent(r"""
    import json, os, socket, sys
    course, port, home = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    results = {}
    def attempt(name, fn):
        try:
            fn()
            results[name] = "reached"
        except Exception as e:
            results[name] = type(e).__name__
    attempt("read gradebook", lambda: open(os.path.join(course, "gradebook.db")).read())
    attempt("read source", lambda: open(os.path.join(course, "source", "ch", "ch.py")).read())
    attempt("read config", lambda: open(os.path.join(course, "nbgrader_config.py")).read())
    attempt("read secret file", lambda: open(os.path.join(course, ".aag", "secret")).read())
    attempt("list course root", lambda: os.listdir(course) and [] [0])   # non-empty listing fails
    attempt("list other submissions", lambda: os.listdir(os.path.join(course, "submitted")))
    attempt("secret in environment", lambda: os.environ["AAG_SECRET_SEED"])
    attempt("instructor variable", lambda: os.environ["INSTRUCTOR_TOKEN"])
    # Writes may "succeed" into the sandbox's own scratch space: the test looks outside afterwards.
    attempt("write course root", lambda: open(os.path.join(course, "planted.txt"), "w").write("x"))
    attempt("write home", lambda: open(os.path.join(home, "aag-planted.txt"), "w").write("x"))
    attempt("read shadow", lambda: open("/etc/shadow").read())
    attempt("write system", lambda: open("/usr/planted.txt", "w").write("x"))
    attempt("connect host loopback", lambda: socket.create_connection(("127.0.0.1", port), 2))
    with open("mine.txt", "w") as f:
        f.write("ok")
    results["own folder writable"] = open("mine.txt").read()
    print(json.dumps(results))
""")


@pytest.fixture
def course(tmp_path):
    """A course root as an instructor has it, with a submission folder inside."""
    root = tmp_path / "course"
    (root / "source" / "ch").mkdir(parents=True)
    (root / "source" / "ch" / "ch.py").write_text("hidden_tests = True\n")
    (root / "gradebook.db").write_text("grades")
    (root / "nbgrader_config.py").write_text("c = get_config()\n")
    (root / ".aag").mkdir()
    (root / ".aag" / "secret").write_text("s3cret")
    work = root / "autograded" / "alice" / "ch"
    work.mkdir(parents=True)
    (root / "submitted" / "bob" / "ch").mkdir(parents=True)
    (work / "probe.py").write_text(PROBE)
    return root, work


@pytest.fixture
def listener():
    """A TCP server on the host's loopback: the sandbox must not reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(5)
    accepted = []

    def serve():
        try:
            accepted.append(server.accept())
        except OSError:
            pass
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    server.close()


def test_learner_code_reaches_nothing_of_the_grader(course, listener, monkeypatch):
    root, work = course
    port, accepted = listener
    monkeypatch.setenv("AAG_SECRET_SEED", "s3cret")
    monkeypatch.setenv("INSTRUCTOR_TOKEN", "t0ken")
    policy = sandbox.Policy(workdir=work, protected=(root.resolve(),))
    home = Path.home()
    p = subprocess.run(sandbox.command([sys.executable, "probe.py", str(root), str(port), str(home)],
                                       policy), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    results = json.loads(p.stdout.strip().splitlines()[-1])
    assert results.pop("own folder writable") == "ok"
    results.pop("write course root"), results.pop("write home")
    reached = [name for name, how in results.items() if how == "reached"]
    assert not reached, f"the sandbox let learner code {reached}"
    assert not (root / "planted.txt").exists(), "learner code wrote into the course root"
    assert not (home / "aag-planted.txt").exists(), "learner code wrote into the grader's home"
    assert not accepted, "the sandbox connected to a server on the host"
    assert (work / "mine.txt").read_text() == "ok"
    # The probe is live: run without the sandbox, it reaches the grader's files and secret.
    elsewhere = root.parent / "not-home"
    elsewhere.mkdir()
    bare = subprocess.run([sys.executable, "probe.py", str(root), str(port), str(elsewhere)],
                          cwd=work, capture_output=True, text=True, timeout=120)
    unsandboxed = json.loads(bare.stdout.strip().splitlines()[-1])
    assert {k for k, v in unsandboxed.items() if v == "reached"} >= {
        "read gradebook", "read source", "read config", "read secret file", "secret in environment"}
    (root / "planted.txt").unlink(missing_ok=True)


def test_the_course_package_and_numba_import_inside(course):
    root, work = course
    policy = sandbox.Policy(workdir=work, protected=(root.resolve(),))
    code = "import autograder, numba, numpy; print(autograder.backend.name)"
    p = subprocess.run(sandbox.command([sys.executable, "-c", code], policy),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip().splitlines()[-1] in {"cpu", "cuda", "hip"}


def test_a_linked_environment_runs_by_its_link(course, tmp_path, monkeypatch):
    """A course clone whose .venv is a link (to /opt/envs/..., say) starts the kernel by the
    link's path: the sandbox, whose /tmp is empty, must show the link too."""
    root, work = course
    link = tmp_path / "linked-env"
    link.symlink_to(Path(sys.prefix).resolve())
    monkeypatch.setattr(sys, "prefix", str(link))
    monkeypatch.setattr(sys, "executable", str(link / "bin" / "python"))
    policy = sandbox.Policy(workdir=work, protected=(root.resolve(),))
    p = subprocess.run(sandbox.command([str(link / "bin" / "python"), "-c", "import numpy"], policy),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


def test_refuses_to_show_a_folder_that_holds_a_protected_one(course):
    root, work = course
    with pytest.raises(ValueError):
        sandbox.command(["true"], sandbox.Policy(workdir=work, protected=(root.resolve(),),
                                                 extra_ro=(root.parent,)))
    with pytest.raises(ValueError):
        sandbox.command(["true"], sandbox.Policy(workdir=root, protected=(root.resolve() / "source",)))


def test_python_paths_never_include_the_course_root(course, monkeypatch):
    root, work = course
    monkeypatch.syspath_prepend(str(root))
    paths = sandbox.python_paths((root.resolve(),))
    assert all(root.resolve() != p and root.resolve() not in p.parents for p in paths)
    assert all(p not in root.resolve().parents for p in paths)


@pytest.mark.parametrize("code, timeout, reason", [
    ("import numpy as np; x = np.ones(3 * 2**30 // 16); import time; time.sleep(60)", 30, "memory"),
    ("while True: pass", 2, "time"),                 # computes forever: its processor time
    ("import time; time.sleep(60)", 2, "time"),      # waits forever: the wall-clock backstop
])
def test_the_watchdog_stops_a_process_over_its_limits(tmp_path, monkeypatch, code, timeout, reason):
    monkeypatch.setattr(sandbox, "WALL_SLACK", 1.0)   # backstop 4 * 2 + 1 = 9 s
    policy = sandbox.Policy(workdir=tmp_path)
    s = sandbox.Supervised([sys.executable, "-c", code], policy, timeout=timeout,
                           memory_bytes=1 << 30, stdout=subprocess.DEVNULL)
    s.proc.wait(timeout=60)
    s.close()
    assert s.killed == reason


def test_a_time_limit_is_processor_time_so_a_busy_machine_costs_no_grade(tmp_path):
    """A process needing 1 s of processor time under a 1.5 s limit, kept off the processor for
    2.5 s (stopped, as a busy machine's scheduler would leave it waiting): its wall time passes
    the limit, yet it must finish (a wall-clock limit would kill it, and a grader busy with other
    submissions would turn a correct answer into a zero)."""
    import psutil
    work = ("import time\nt = time.process_time()\n"
            "while time.process_time() - t < 1.0: pass\nprint('done')")
    s = sandbox.Supervised([sys.executable, "-c", work], sandbox.Policy(workdir=tmp_path),
                           timeout=1.5, memory_bytes=1 << 30, stdout=subprocess.PIPE)
    t0 = time.monotonic()
    time.sleep(0.3)
    tree = [psutil.Process(s.proc.pid), *psutil.Process(s.proc.pid).children(recursive=True)]
    for p in tree:
        p.suspend()
    time.sleep(2.5)
    for p in tree:
        p.resume()
    out, _ = s.proc.communicate(timeout=60)
    wall = time.monotonic() - t0
    assert s.close() == 0 and s.killed is None and out.strip() == b"done"
    assert wall > 2.8, wall


def _busy(seconds):
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass
    from autograder.core.checks import Outcome
    return Outcome()


def test_a_forked_case_counts_processor_time_so_a_busy_machine_costs_no_grade():
    """A CPU-mode case runs in a forked child (Problem.run): one needing 1 s of processor time
    under a 1.5 s limit, kept off the processor for 2.5 s, must finish, not be called a hang."""
    import threading

    import psutil
    from autograder.grading import problem

    def starve():
        time.sleep(0.3)
        children = psutil.Process().children()
        for c in children:
            c.suspend()
        time.sleep(2.5)
        for c in children:
            c.resume()

    thread = threading.Thread(target=starve)
    thread.start()
    t0 = time.monotonic()
    outcome = problem._run_forked(lambda: _busy(1.0), 1.5)
    thread.join()
    assert outcome.error_kind is None, outcome.error
    assert time.monotonic() - t0 > 2.8


@pytest.mark.parametrize("work, most", [
    ("spin", 6.0),                      # computing for ever: stopped at 1 s of processor time
    ("sleep", 3.0),                     # waiting for ever (a deadlock): stopped at 1 s of waiting
])
def test_a_forked_case_that_never_ends_is_stopped(work, most):
    from autograder.grading import problem
    job = (lambda: _busy(1e9)) if work == "spin" else (lambda: time.sleep(1e9))
    t0 = time.monotonic()
    outcome = problem._run_forked(job, 1.0)
    assert outcome.error_kind == "hang" and "stopped after 1 s" in outcome.error
    assert time.monotonic() - t0 < most


def test_a_process_within_its_limits_is_left_alone(tmp_path):
    policy = sandbox.Policy(workdir=tmp_path)
    s = sandbox.Supervised([sys.executable, "-c", "print(sum(range(10)))"], policy, timeout=60,
                           memory_bytes=2 << 30, stdout=subprocess.PIPE)
    out, _ = s.proc.communicate(timeout=60)
    assert s.close() == 0 and s.killed is None and out.strip() == b"45"


@pytest.mark.slow
def test_nbgrader_kernel_at_autograde_reaches_nothing_of_the_grader(tmp_path, listener):
    """The same probe as a learner's solution cell, run by a real `nbgrader autograde`: the
    kernel nbgrader starts (not only the judge's process) is sandboxed."""
    import nbgrader_helpers as h

    port, accepted = listener
    chapter = h.FIXTURE_CHAPTER
    root = h.make_course(tmp_path / "course", [chapter])
    h.prepare(root, chapter)
    release = h.read_nb(root / "course" / chapter / f"{chapter}.ipynb")
    probe = PROBE.replace("course, port, home = sys.argv[1], int(sys.argv[2]), sys.argv[3]",
                          f"course, port, home = {str(root)!r}, {port}, {str(Path.home())!r}")
    nb = h.mutate(release, "add", "", "")
    h.cell_by_id(nb, "add").source = probe + "\ndef add(a, b):\n    return a + b\n"
    h.submit(root, chapter, "prober", nb)
    (root / "source" / "ch").mkdir()                      # what the probe looks for
    (root / "source" / "ch" / "ch.py").write_text("hidden_tests = True\n")
    (root / ".aag").mkdir(exist_ok=True)
    (root / ".aag" / "secret").write_text("s3cret")
    h.nbgrader(root, "autograde", chapter, "--force",
               environ=h.env(AAG_SECRET_SEED="s3cret", INSTRUCTOR_TOKEN="t0ken"))
    graded = h.read_nb(root / "autograded" / "prober" / chapter / f"{chapter}.ipynb")
    text = "".join(o.get("text", "") for o in h.cell_by_id(graded, "add").outputs)
    results = json.loads(text.strip().splitlines()[-1])
    assert results.pop("own folder writable") == "ok"
    results.pop("write course root"), results.pop("write home")
    reached = [name for name, how in results.items() if how == "reached"]
    assert not reached, f"nbgrader's kernel let learner code {reached}"
    assert not (root / "planted.txt").exists() and not (Path.home() / "aag-planted.txt").exists()
    assert not accepted
    assert h.grades(root, chapter, "prober")["add_test"] == (2, 2)   # and it was still graded


# ---- attacks through the files a learner's kernel leaves behind (issue 14, section 1) ----------

CLOBBER = r'''
import os, sys
# everything nbgrader or the judge might follow, made in the autograded folder during Execute
course = os.path.join("..", "..", "..")
for name in ("judge.json", "bank_vector_add.ipynb"):
    if os.path.exists(name):
        os.remove(name)
    os.symlink(os.path.join(course, "gradebook.db"), name)
os.makedirs("sub", exist_ok=True)
os.symlink(os.path.join(course, ".aag", "secret"), os.path.join("sub", "leak.txt"))
os.symlink("/dev/zero", "zero.bin")
os.mkfifo("pipe")
import numpy._core._multiarray_umath as _m
big = os.path.realpath(_m.__file__)                              # a large library
for i in range(40):
    os.symlink(big, f"lib{i}.so")
with open("helper.py", "w") as f:
    f.write("X = 1\n")
os.link("helper.py", "helper2.py")
'''

MEMHOG = "\n_hog = np.ones(2**28)   # 2 GiB, over the kernel's 1 GiB\n"
FORKER = ("\nimport subprocess\n_kids = [subprocess.Popen(['sleep', '60']) for _ in range(100)]\n"
          "import time\ntime.sleep(30)\n")


@pytest.mark.slow
def test_links_fifos_and_limits_planted_at_execute_reach_nothing(tmp_path):
    """One autograde of five submissions of chapter 2's vector_add: a correct one; the bank's
    exploit_symlink_secret (links to the secret, gradebook and sources; right only if it can read
    the secret); one planting a judge.json and a graded-notebook link to gradebook.db, a link to
    the secret in a subfolder (feedback copies the folder's files), /dev/zero, a FIFO, 40 links
    to a large library and a hard link; one holding 2 GiB in nbgrader's kernel; one starting 100
    processes there. No link is followed, the gradebook survives with everyone's grades, and the
    kernel limits are named in the cells that hit them."""
    import bank
    import nbgrader_helpers as h
    import test_bank

    root = h.make_course(tmp_path / "course", [])
    name = test_bank._assignment(root, "vector_add")
    h.nbgrader(root, "generate_assignment", name, "--force")
    (root / ".aag").mkdir(exist_ok=True)
    (root / ".aag" / "secret").write_text("s3cret-seed")
    (root / "source" / "leaked.txt").write_text("SOURCE-TEXT")
    release = h.read_nb(root / "course" / name / f"{name}.ipynb")
    ok = bank.parse(bank.BANK / "ch02_data_parallel" / "vector_add" / "ok_256_threads.py").code
    cells = {"honest": ok,
             "linker": bank.parse(bank.BANK / "ch02_data_parallel" / "vector_add" / "exploit_symlink_secret.py").code,
             "clobber": ok + CLOBBER, "memhog": ok + MEMHOG, "forker": ok + FORKER}
    for student, code in cells.items():
        nb = h.mutate(release, "vector_add_solution", "", "")
        h.cell_by_id(nb, "vector_add_solution").source = code
        h.submit(root, name, student, nb)
    gradebook_mode = (root / "gradebook.db").stat().st_mode
    h.nbgrader(root, "autograde", name, "--force", "--Execute.timeout=60",
               "--JudgeSubmission.exec_timeout=60", "--SandboxedKernelManager.memory_limit_gb=1",
               timeout=900, environ=h.env(AAG_CHECK_TIMEOUT=10, AAG_SPEED_WITHOUT_GPU="zero",
                                          AAG_SECRET_SEED="s3cret-seed"))
    # the gradebook is intact, and holds every student's grades
    assert (root / "gradebook.db").stat().st_mode == gradebook_mode
    scores = {s: h.grades(root, name, s)["vector_add_test"] for s in cells}
    assert scores["honest"] == (3, 3) and scores["clobber"] == (3, 3), scores
    assert scores["linker"][0] == 0 and scores["memhog"][0] == 0 and scores["forker"][0] == 0
    folder = root / "autograded"
    # nothing the kernel planted survives in any autograded folder; the graded notebooks are files
    assert [str(p) for p in folder.rglob("*") if p.is_symlink() or not (p.is_file() or p.is_dir())] == []
    for student in cells:
        graded = folder / student / name / f"{name}.ipynb"
        assert graded.is_file() and not graded.is_symlink()
        h.read_nb(graded)
    report = json.loads((folder / "clobber" / name / "judge.json").read_text())
    flags = "\n".join(report["vector_add_test"]["flags"])
    for planted in (f"{name}.ipynb, judge.json: a symbolic link to ../../../gradebook.db",
                    "helper.py: a file with 2 hard links", "pipe: a FIFO", "zero.bin: a symbolic "
                    "link to /dev/zero", "sub/leak.txt: a symbolic link", "and 35 more: a symbolic"):
        assert planted in flags, (planted, flags)
    linker = json.loads((folder / "linker" / name / "judge.json").read_text())["vector_add_test"]
    assert "aag_secret: a symbolic link" in "\n".join(linker["flags"])
    text = json.dumps(linker) + (folder / "linker" / name / f"{name}.ipynb").read_text()
    assert "s3cret-seed" not in text and "SOURCE-TEXT" not in text
    # kernel limits: named in the cell that hit them
    for student, words in (("memhog", "it used more than 1 GiB of memory"),
                           ("forker", "it ran more than 64 processes at once")):
        nb = h.read_nb(folder / student / name / f"{name}.ipynb")
        errors = [o.get("evalue", "") for o in h.cell_by_id(nb, "vector_add_solution").outputs
                  if o.get("output_type") == "error"]
        assert any(words in e and "c.SandboxedKernelManager" in e for e in errors), errors
    # feedback copies the autograded folder's files: nothing of the instructor's goes with them
    h.nbgrader(root, "generate_feedback", name, "--student", "clobber", "--force")
    feedback = root / "feedback" / "clobber" / name
    assert feedback.is_dir()
    for p in feedback.rglob("*"):
        assert not p.is_symlink()
        if p.is_file():
            assert b"s3cret-seed" not in p.read_bytes()


def test_the_files_others_may_not_read_are_found_alike_by_find_and_by_walking(tmp_path, monkeypatch):
    """As root, the sandbox masks what others may not read in the folders it shows: ``find``
    finds it (fast), Python's walk where ``find`` is missing; both the same paths, a hidden
    folder's contents not listed one by one, links never followed."""
    top = tmp_path / "tree"
    (top / "open" / "deep").mkdir(parents=True)
    (top / "open" / "deep" / "readable.txt").write_text("x")
    (top / "open" / "deep" / "secret.key").write_text("k")
    (top / "open" / "deep" / "secret.key").chmod(0o600)
    (top / "closed").mkdir()
    (top / "closed" / "inside.txt").write_text("y")
    (top / "closed").chmod(0o700)
    (top / "link-to-secret").symlink_to(top / "open" / "deep" / "secret.key")
    expected = {str(top / "open" / "deep" / "secret.key"), str(top / "closed")}
    assert set(sandbox._root_only_by_walk(top)) == expected
    found = sandbox._root_only_by_find(top)
    assert found is None or set(found) == expected
    monkeypatch.setattr(sandbox.shutil, "which", lambda *a, **k: None)   # no find: the walk
    monkeypatch.setattr(sandbox, "_root_only_cache", {})
    assert set(sandbox._root_only((top,))) == expected
