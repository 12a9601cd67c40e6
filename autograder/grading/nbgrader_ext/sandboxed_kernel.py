"""SandboxedKernelManager: the Jupyter kernel nbgrader's Execute starts, inside the sandbox.

At autograde, nbgrader runs the submission in a Jupyter kernel; by default that kernel has the
grader's rights (it can read ``gradebook.db`` and ``source/``, rebind what the tests use, write
anywhere the instructor can). This manager starts the same kernel command through
:func:`autograder.sandbox.command`: the kernel sees its submission folder (read-write), the system
and Python (read-only), and nothing of the course. It talks to nbgrader over ZeroMQ ``ipc``
sockets in a private folder (the sandbox has no network, not even the host's loopback).

Inside, ``AAG_GRADING=judge`` is set: the course's checks only note that the judge grades them
(:class:`~autograder.nbgrader_ext.JudgeSubmission` re-runs the code in its own sandboxed process).

The kernel runs under the same limits as the judge's student processes: a
:class:`~autograder.sandbox.Watchdog` on its whole process tree (resident memory,
``memory_limit_gb``, default 8 GiB; number of processes, ``max_processes``, default 64), no core
files and files of at most 4 GiB (rlimits). Without them a learner's cell could hold the grader's
memory or fill its process table for as long as nbgrader's cell timeout. A kernel over a limit is
killed; :class:`~autograder.nbgrader_ext.ExecuteGuarded` then records in that cell which limit it
hit (:meth:`SandboxedKernelManager.limit_message`), restarts the kernel and grades the rest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import CaselessStrEnum, Float, Integer, List, Unicode

from autograder.grading import sandbox
from autograder.grading.sandbox import MAX_PROCESSES


class SandboxedKernelManager(AsyncKernelManager):
    """An AsyncKernelManager whose kernel runs in the course's bubblewrap sandbox."""

    protected_paths = List(Unicode(), help="Folders the kernel must never see (the course root: "
                           "gradebook.db, source/, nbgrader_config.py); the current folder if empty"
                           ).tag(config=True)
    sandbox = CaselessStrEnum(["require", "auto", "off"], default_value="require",
                              help="require: fail if no sandbox can be made; auto: use one when "
                              "possible; off: the kernel runs with the grader's rights"
                              ).tag(config=True)
    memory_limit_gb = Float(8.0, help="Resident memory the kernel's processes may hold together; "
                            "over it the kernel is killed and the cell fails, saying so"
                            ).tag(config=True)
    max_processes = Integer(MAX_PROCESSES, help="Processes the kernel's tree may hold at "
                            "once (the sandbox's two included); over it the kernel is killed and "
                            "the cell fails, saying so").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._watchdog: sandbox.Watchdog | None = None
        self.limit_hit: str | None = None      # "memory" or "processes", once the watchdog killed it
        self._sockets = tempfile.mkdtemp(prefix="aag-kernel-")
        if self._use_sandbox():
            # No network inside: ZeroMQ over Unix sockets in a folder the sandbox may write.
            self.transport = "ipc"
            self.ip = os.path.join(self._sockets, "kernel")
            self.connection_file = os.path.join(self._sockets, "connection.json")

    def _use_sandbox(self) -> bool:
        return sandbox.use(self.sandbox, "c.SandboxedKernelManager.sandbox")

    def _protected(self) -> tuple[Path, ...]:
        paths = self.protected_paths or [os.getcwd()]
        return tuple(Path(p).resolve() for p in paths)

    async def _async_pre_start_kernel(self, **kw):
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        if self.transport == "ipc":
            cwd = Path(kw.get("cwd") or os.getcwd()).resolve()
            env = {"AAG_GRADING": "judge", "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
            policy = sandbox.Policy(workdir=cwd, protected=self._protected(),
                                    extra_rw=(Path(self._sockets),), env=env)
            cmd = sandbox.command(cmd, policy)
        kw["preexec_fn"] = sandbox.child_limits     # no core files, files of at most 4 GiB
        # The kernel's own terminal output (ipykernel's connection banner, printed because the
        # sandbox's clean environment has no JPY_PARENT_PID) is not the cells' output: it would
        # only clutter the grader's log, once per submission.
        kw.setdefault("stdout", subprocess.DEVNULL)
        return cmd, kw

    async def _async_launch_kernel(self, kernel_cmd, **kw) -> None:
        await super()._async_launch_kernel(kernel_cmd, **kw)
        process = getattr(self.provisioner, "process", None)
        if process is not None:
            self.limit_hit = None
            self._watchdog = sandbox.Watchdog(
                process.pid, memory_bytes=int(self.memory_limit_gb * 2**30),
                max_processes=self.max_processes, on_limit=self._on_limit)

    def cpu_seconds(self) -> float:
        """Processor time the kernel's processes have used so far (ExecuteGuarded's timeout
        counts it, so a busy grading machine does not time out a correct cell)."""
        if self._watchdog is None:
            return 0.0
        return sandbox.Watchdog.cpu_seconds(self._watchdog.tree())

    def _on_limit(self, reason: str) -> None:
        self.limit_hit = reason
        self.log.warning("The kernel %s and was killed",
                         sandbox.limit_text(reason, int(self.memory_limit_gb * 2**30),
                                            self.max_processes))

    def limit_message(self) -> str:
        """Which limit the kernel was killed at, in words; empty if none."""
        if self.limit_hit is None:
            return ""
        what = sandbox.limit_text(self.limit_hit, int(self.memory_limit_gb * 2**30),
                                  self.max_processes)
        option = "memory_limit_gb" if self.limit_hit == "memory" else "max_processes"
        return (f"the kernel was stopped: it {what} (the grader's limit, "
                f"c.SandboxedKernelManager.{option})")

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        if self._watchdog is not None:
            self._watchdog.stop()
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._sockets, ignore_errors=True)
