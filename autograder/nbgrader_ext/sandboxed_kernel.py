"""SandboxedKernelManager: the Jupyter kernel nbgrader's Execute starts, inside the sandbox.

At autograde, nbgrader runs the submission in a Jupyter kernel; by default that kernel has the
grader's rights (it can read ``gradebook.db`` and ``source/``, rebind what the tests use, write
anywhere the instructor can). This manager starts the same kernel command through
:func:`autograder.sandbox.command`: the kernel sees its submission folder (read-write), the system
and Python (read-only), and nothing of the course. It talks to nbgrader over ZeroMQ ``ipc``
sockets in a private folder (the sandbox has no network, not even the host's loopback).

Inside, ``AAG_GRADING=judge`` is set: the course's checks only note that the judge grades them
(:class:`~autograder.nbgrader_ext.JudgeSubmission` re-runs the code in its own sandboxed process).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import CaselessStrEnum, List, Unicode

from .. import sandbox


class SandboxedKernelManager(AsyncKernelManager):
    """An AsyncKernelManager whose kernel runs in the course's bubblewrap sandbox."""

    protected_paths = List(Unicode(), help="Folders the kernel must never see (the course root: "
                           "gradebook.db, source/, nbgrader_config.py); the current folder if empty"
                           ).tag(config=True)
    sandbox = CaselessStrEnum(["require", "auto", "off"], default_value="require",
                              help="require: fail if no sandbox can be made; auto: use one when "
                              "possible; off: the kernel runs with the grader's rights"
                              ).tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
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
        return cmd, kw

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._sockets, ignore_errors=True)
