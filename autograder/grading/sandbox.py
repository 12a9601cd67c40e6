"""Running learner code without the grader's rights: a bubblewrap sandbox with an allow-list view.

Everything a grader runs on a learner's behalf (nbgrader's Jupyter kernel at autograde, and the
judge's student process) starts through :func:`command`. The process then sees

* the system, read-only: ``/usr``, ``/etc`` and the ``/bin``, ``/lib*`` links;
* the Python that runs it, read-only: the interpreter, the virtual environment and the folders on
  ``sys.path``, except a folder that holds something protected (the course root holds
  ``gradebook.db``, ``source/`` and ``nbgrader_config.py``): from such a folder only the
  ``autograder`` package itself is shown;
* its working copy, read-write, and a private empty ``/tmp`` (its ``HOME``);
* a fresh ``/dev`` plus the GPU's device nodes, a fresh ``/proc`` (own PID namespace), ``/sys``
  read-only for the GPU driver;
* no network (own network namespace), no IPC with the host, and an environment cleared down to a
  short list: no secret seed, no instructor variables.

Nothing else exists inside: not the gradebook, the instructor's sources, the judge's settings, other
learners' submissions or anybody's home. When the grader runs as root, the sandbox gets no
capabilities, and every file it could read only as root's (``/etc/shadow``, ``/etc/ssl/private``...)
is masked, so root's ownership of the visible files gives it nothing more than ``nobody`` has.

Limits (see docs/grading.md): the sandbox shares the kernel and the GPU with the host; it relies on
unprivileged user namespaces (``bwrap`` fails loudly where they are disabled); memory and the
number of processes are bounded by a :class:`Watchdog` polling the process tree (resident memory
of the whole tree, count of its processes), not by a cgroup, for the judge's student processes
and nbgrader's kernel alike. (``RLIMIT_NPROC`` is no substitute: it counts every process of the
grader's user, not of the sandbox, and is not enforced at all for root, which the sandbox's user
maps to when grading runs as root.)
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

BWRAP_ENV = "AAG_BWRAP"           # path to a bwrap binary, if not on PATH
NOBODY = 65534   # the user id inside the sandbox
# Variables passed into the sandbox when set outside (everything else is dropped).
PASSED_ENV = ("LANG", "LC_ALL", "TERM", "AAG_BACKEND", "AAG_WARP_SIZE", "AAG_CHECK_TIMEOUT",
              "AAG_NO_FORK", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
              "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY",
              "NUMBA_ENABLE_CUDASIM", "NUMBA_CUDA_DRIVER", "CUDA_HOME", "CUDA_PATH",
              "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")
SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
GPU_NODES = ("nvidia", "kfd", "dri")   # /dev entries starting with these
MAX_PROCESSES = 64       # processes in one sandbox's tree (bwrap's two included)
POLL = 0.05              # seconds between two looks of a watchdog
# A time limit counts the processor time of the process tree, which a busy grading machine does
# not inflate (its wall-clock time it does: two graders sharing one core take twice as long). Code
# that waits without computing (a sleep, a deadlock) is stopped by a wall-clock backstop instead:
WALL_FACTOR, WALL_SLACK = 4.0, 30.0   # seconds of wall time = WALL_FACTOR * limit + WALL_SLACK


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create namespaces here."""


def bwrap_path() -> str | None:
    return os.environ.get(BWRAP_ENV) or shutil.which("bwrap")


_probe: dict[str, str | None] = {}


def unavailable_reason() -> str | None:
    """None if sandboxing works on this machine, else why not (probed once per process)."""
    if "reason" in _probe:
        return _probe["reason"]
    exe = bwrap_path()
    if exe is None:
        reason = ("bubblewrap (`bwrap`) is not installed: `apt-get install bubblewrap` (Debian, "
                  "Ubuntu), `dnf install bubblewrap` (Fedora), or set AAG_BWRAP to its path")
    else:
        try:
            probe = subprocess.run(command(["/bin/true"], Policy(workdir=Path("/"), gpu=False,
                                                                 python=False)),
                                   capture_output=True, text=True, timeout=30,
                                   preexec_fn=child_limits)
            reason = None if probe.returncode == 0 else (
                f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()[:300]} (user "
                "namespaces may be disabled: sysctl kernel.unprivileged_userns_clone=1, or on "
                "Ubuntu 24.04+ an AppArmor profile for bwrap)")
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"bubblewrap did not run: {exc}"
    _probe["reason"] = reason
    return reason


@dataclass
class Policy:
    workdir: Path                                  # read-write; the process starts there
    protected: tuple[Path, ...] = ()               # never visible, nor any folder holding one
    extra_ro: tuple[Path, ...] = ()
    extra_rw: tuple[Path, ...] = ()
    gpu: bool = True                               # bind the GPU device nodes
    python: bool = True                            # bind this interpreter and its sys.path
    env: dict[str, str] = field(default_factory=dict)   # set inside, after the passed variables


def _holds(folder: Path, protected: tuple[Path, ...]) -> bool:
    return any(p == folder or folder in p.parents for p in protected)


def python_paths(protected: tuple[Path, ...] = ()) -> list[Path]:
    """Folders the interpreter needs, read-only: its prefixes and ``sys.path``, leaving out any
    folder that holds a protected path; the ``autograder`` package itself is always shown (from an
    editable install it lives in the course repository, whose other files stay hidden)."""
    package = Path(__file__).resolve().parents[1]
    found: list[Path] = [package]
    candidates = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix),
                  Path(sys.executable).resolve().parent.parent]
    candidates += [Path(p) for p in sys.path if p]
    for path in candidates:
        try:
            path = path.resolve()
        except OSError:
            continue
        if not path.exists() or path == Path("/"):
            continue
        if _holds(path, protected):
            continue
        found.append(path)
    # keep the outermost of nested folders, in a stable order
    unique = sorted(set(found), key=lambda p: (len(p.parts), str(p)))
    return [p for i, p in enumerate(unique) if not any(q in p.parents for q in unique[:i])]


def _env(policy: Policy) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.update({
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin",
                                 "/bin"]),
        "HOME": "/tmp/home", "TMPDIR": "/tmp", "PYTHONNOUSERSITE": "1",
        "MPLCONFIGDIR": "/tmp/home/.mpl", "IPYTHONDIR": "/tmp/home/.ipython",
        "NUMBA_CACHE_DIR": "/tmp/home/.numba", "CUPY_CACHE_DIR": "/tmp/home/.cupy",
        "TRITON_CACHE_DIR": "/tmp/home/.triton",
        "PYTHONPATH": os.pathsep.join(str(p) for p in _pythonpath(policy)),
    })
    env.update(policy.env)
    return env


def _pythonpath(policy: Policy) -> list[Path]:
    """sys.path entries (e.g. from PYTHONPATH) that survive inside, so imports resolve the same."""
    visible = python_paths(policy.protected) if policy.python else []
    keep = []
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and any(Path(p).resolve() == v or v in Path(p).resolve().parents for v in visible):
            keep.append(Path(p).resolve())
    package_parent = Path(__file__).resolve().parents[2]
    if policy.python and package_parent not in keep:
        keep.append(package_parent)
    return keep


def command(argv: list[str], policy: Policy) -> list[str]:
    """The full command line that runs ``argv`` inside the sandbox described by ``policy``."""
    exe = bwrap_path() or "bwrap"
    cmd = [exe, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv",
           "--uid", str(NOBODY), "--gid", str(NOBODY),
           "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/tmp/home"]
    as_root = os.geteuid() == 0
    if as_root:
        cmd += ["--cap-drop", "ALL"]
    ro: list[Path] = [Path(d) for d in SYSTEM_DIRS if os.path.isdir(d)]
    workdir = Path(policy.workdir).resolve()
    # a folder holding the working copy would hide it (e.g. a script's folder in /tmp on sys.path)
    ro += list(map(Path, policy.extra_ro)) + (
        python_paths(policy.protected + (workdir, *map(Path, policy.extra_rw))) if policy.python else [])
    for path in ro:
        if _holds(path, policy.protected):
            raise ValueError(f"refusing to show {path} in the sandbox: it holds a protected path")
        cmd += ["--ro-bind", str(path), str(path)]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            cmd += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            cmd += ["--ro-bind", link, link]
    if policy.python:
        # A linked environment (.venv -> /opt/envs/course) is run by its link's path (the kernel's
        # command line names sys.executable): the link is there too, pointing where it does outside.
        for link in {Path(sys.prefix), Path(sys.executable).parent.parent}:
            target = link.resolve()
            if link.is_symlink() and any(target == r or r in target.parents for r in ro):
                cmd += ["--symlink", str(target), str(link)]
    if os.path.isdir("/sys"):
        cmd += ["--ro-bind", "/sys", "/sys"]
    if policy.gpu:
        for name in sorted(os.listdir("/dev")):
            if name.startswith(GPU_NODES):
                cmd += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    if as_root:
        for path in _root_only(tuple(ro)):
            cmd += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    for path in [workdir, *map(Path, policy.extra_rw)]:
        if path != Path("/"):
            if _holds(path, policy.protected):
                raise ValueError(f"refusing to let the sandbox write {path}: it holds a protected path")
            cmd += ["--bind", str(path), str(path)]
    for key, value in _env(policy).items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", str(workdir), "--"]
    return cmd + list(argv)


_root_only_cache: dict[Path, list[str]] = {}


def _root_only(trees: tuple[Path, ...]) -> list[str]:
    """Paths in ``trees`` that others may not read: masked when the grader runs as root, since the
    sandbox's files are then checked against root's ownership (found once per tree and process:
    ``find`` reads /usr's 270,000 entries in about 0.3 s, Python's own walk in about 1 s)."""
    found: list[str] = []
    for top in trees:
        if top not in _root_only_cache:
            hits = _root_only_by_find(top)
            _root_only_cache[top] = hits if hits is not None else _root_only_by_walk(top)
        found += _root_only_cache[top]
    return found


def _root_only_by_find(top: Path) -> list[str] | None:
    """:func:`_root_only` for one tree by ``find`` (not descending into a hit, never following a
    link); None where ``find`` is missing or failed, and the caller walks the tree itself."""
    find = shutil.which("find", path="/usr/bin:/bin")
    if find is None:
        return None
    try:
        p = subprocess.run([find, "-P", str(top), "-mindepth", "1", "!", "-type", "l", "!",
                            "-perm", "-o=r", "-prune", "-print0"],
                           capture_output=True, timeout=300, env={"LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return [os.fsdecode(x) for x in p.stdout.split(b"\0") if x]


def _root_only_by_walk(top: Path) -> list[str]:
    import stat

    hits: list[str] = []
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(root, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if not stat.S_ISLNK(mode) and not mode & stat.S_IROTH:
                hits.append(path)
        masked = set(hits)
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in masked]
    return hits


def child_limits() -> None:  # runs in the child before exec: no core files, bounded file sizes
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 30, 4 << 30))


def use(mode: str, setting: str) -> bool:
    """Whether to sandbox, for a setting of ``require`` (refuse to go on without a sandbox),
    ``auto`` (sandbox where it works) or ``off``; ``setting`` names the option in messages."""
    if mode == "off":
        return False
    reason = unavailable_reason()
    if reason and mode == "require":
        raise SandboxUnavailable(
            f"learner code must run in a sandbox, and {reason}. (To run it with your rights "
            f"instead, knowing what that allows: {setting} = 'off'.)")
    return reason is None


def backstop(seconds: float) -> float:
    """Wall-clock seconds after which a time limit of ``seconds`` stops code whatever its
    processor time (code that sleeps or waits on a lock uses none)."""
    return WALL_FACTOR * seconds + WALL_SLACK


class TimeBudget:
    """A time limit for a process tree: passed once ``seconds`` of wall time *and* ``seconds`` of
    processor time (all its processes and threads together) have gone by since it was set, or at
    the wall-clock backstop ``WALL_FACTOR * seconds + WALL_SLACK`` for code that waits instead of
    computing.

    Processor time, because a time limit must not turn into a wrong zero when the grading machine
    is busy: a case that needs 5 s of one core takes 5 s of processor time however many other
    graders share the machine, while its wall time grows with their number. Wall time too,
    because code on several cores uses processor time faster than the clock runs."""

    def __init__(self, seconds: float, cpu_now: float = 0.0):
        self.seconds = seconds
        self.cpu_limit = cpu_now + seconds
        now = time.monotonic()
        self.wall_limit = now + seconds
        self.wall_backstop = now + backstop(seconds)

    def passed(self, cpu_now: float) -> bool:
        now = time.monotonic()
        return now > self.wall_backstop or (now > self.wall_limit and cpu_now > self.cpu_limit)


class Watchdog:
    """Watches a process tree from a thread: every ``POLL`` seconds it sums the resident memory
    and the processor time of the process and all its descendants and counts them, and calls
    ``on_limit`` with ``"memory"``, ``"processes"`` or ``"time"`` (once the :class:`TimeBudget`
    that ``budget()`` returns has passed) when one is over its limit. Used for the judge's student
    processes (:class:`Supervised`) and nbgrader's sandboxed kernel
    (:class:`~autograder.nbgrader_ext.SandboxedKernelManager`), so a learner's code cannot hold
    the grader's memory or fill its process table in either.

    Polled, so an allocation or a fork burst faster than ``POLL`` can overshoot briefly: the
    kernel's own limits (a cgroup's ``memory.max`` and ``pids.max``) would stop it at once, but
    need a delegated cgroup v2, which graders seldom have (see docs/grading.md)."""

    def __init__(self, pid: int, *, memory_bytes: int, max_processes: int = MAX_PROCESSES,
                 on_limit, budget=None, interval: float = POLL):
        import psutil

        self.memory_bytes, self.max_processes = memory_bytes, max_processes
        self.on_limit, self.budget, self.interval = on_limit, budget, interval
        self.peak_rss = 0
        self.peak_processes = 0
        self.hit: str | None = None
        self._ps = psutil.Process(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def tree(self) -> list:
        """The process and its descendants (empty once it has ended)."""
        import psutil

        try:
            if not self._ps.is_running() or self._ps.status() == psutil.STATUS_ZOMBIE:
                return []
            return [self._ps, *self._ps.children(recursive=True)]
        except psutil.Error:
            return []

    @staticmethod
    def rss(procs) -> int:
        import psutil

        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    @staticmethod
    def cpu_seconds(procs) -> float:
        """Processor time (user and system, all threads) the processes have used so far."""
        import psutil

        total = 0.0
        for p in procs:
            try:
                times = p.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
        return total

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            procs = self.tree()
            if not procs:
                return
            rss = self.rss(procs)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_processes = max(self.peak_processes, len(procs))
            budget = self.budget() if self.budget is not None else None
            if rss > self.memory_bytes:
                reason = "memory"
            elif len(procs) > self.max_processes:
                reason = "processes"
            elif budget is not None and budget.passed(self.cpu_seconds(procs)):
                reason = "time"
            else:
                continue
            if self.hit is None:
                self.hit = reason
            self.on_limit(reason)
            kill_tree(procs)
            return

    def stop(self) -> None:
        self._stop.set()


def kill_tree(procs) -> None:
    """SIGKILL a process tree as listed, its root first. For a sandbox the root is ``bwrap``: its
    death takes the sandbox's PID namespace with it (``--die-with-parent``); the rest of the list
    is for a process run without a sandbox."""
    import psutil

    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass


def limit_text(reason: str, memory_bytes: int, max_processes: int) -> str:
    """What a process stopped by a watchdog did, in words ("used more than 1 GiB of memory")."""
    if reason == "memory":
        return f"used more than {memory_bytes / 2**30:.3g} GiB of memory"
    if reason == "processes":
        return f"ran more than {max_processes} processes at once"
    return "ran past its time limit"


class Supervised:
    """A process under a :class:`Watchdog`: killed when it runs too long, holds too much memory
    (resident memory of its whole process tree) or starts too many processes. In the sandbox
    given by ``policy``, or, with ``policy=None``, as a plain child (self-study without
    bubblewrap)."""

    def __init__(self, argv: list[str], policy: Policy | None, *, timeout: float,
                 memory_bytes: int, max_processes: int = MAX_PROCESSES, **popen):
        self.timeout, self.memory_bytes, self.max_processes = timeout, memory_bytes, max_processes
        self.killed: str | None = None          # "time", "memory" or "processes"
        cmd = command(argv, policy) if policy is not None else list(argv)
        self.start = time.monotonic()
        self.proc = subprocess.Popen(cmd, preexec_fn=child_limits, **popen)
        self._budget = TimeBudget(timeout)
        self._dog = Watchdog(self.proc.pid, memory_bytes=memory_bytes,
                             max_processes=max_processes, on_limit=self._limit,
                             budget=lambda: self._budget)

    @property
    def peak_rss(self) -> int:
        return self._dog.peak_rss

    @property
    def budget(self) -> TimeBudget:
        """The time limit now in force."""
        return self._budget

    def deadline_in(self, seconds: float) -> None:
        """A new time limit from now: ``seconds`` of processor time, with the wall-clock backstop
        of :class:`TimeBudget` (the judge sets one per request it sends)."""
        self._budget = TimeBudget(seconds, Watchdog.cpu_seconds(self._dog.tree()))

    def _limit(self, reason: str) -> None:
        if self.killed is None:
            self.killed = reason

    def kill(self, reason: str) -> None:
        if self.killed is None:
            self.killed = reason
        try:
            self.proc.kill()   # bwrap dies; --die-with-parent and the PID namespace take the rest
        except ProcessLookupError:
            pass

    def close(self) -> int:
        self._dog.stop()
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill(self.killed or "time")
                self.proc.wait()
        return self.proc.returncode
