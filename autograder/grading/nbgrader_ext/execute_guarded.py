"""ExecuteGuarded: nbgrader's Execute, where a hang costs one timeout instead of one per cell.

nbgrader's Execute interrupts the kernel when a cell runs past ``timeout``. That is enough for a
pure-Python ``while True``, but not for code that does not return to the interpreter's main
thread: a simulated CUDA kernel spins in worker threads the interrupt never reaches, compiled code
or a C extension ignores it, and code may swallow ``KeyboardInterrupt``. The kernel then stays busy,
so every later cell times out too: a notebook with one endless loop near the top costs
``timeout x remaining cells`` of grading time and scores zero on everything after the loop.

Cells that run in a process of their own (``%%isolated``) are not run: they define nothing the
notebook uses (the judge skips them too), and each would cost a Python start.

On a timeout (or a kernel that died under a cell) this preprocessor instead

1. records a clear error in that cell (a test cell with an error scores zero, as before);
2. kills the kernel and starts a fresh one;
3. re-runs, silently, the earlier cells that had succeeded and are not grade cells (setup and
   solution cells), so the names they defined exist again;
4. carries on with the next cell.

Test cells are never replayed: they do not define state the notebook needs, they may be slow,
and running them twice would change nothing in the grade.

Each cell may run a multiple of what the chapter's solution needs on this machine
(:mod:`autograder.grading.cell_limits`: 10 times its processor time, at least 20 s, at most
``timeout``): the first submission of an assignment a machine grades runs the source notebook once
to measure it. The limits go on to the judge (``resources["aag_cell_limits"]``), which gives the
cells before an exercise as long as they had here.

``timeout`` counts the kernel's processor time, as the judge's limits do
(:class:`autograder.sandbox.TimeBudget`): when a cell has run ``timeout`` seconds of wall time but
the kernel's processes have used less processor time than that (the grading machine is busy with
other submissions), the cell is given more time, up to the wall-clock backstop
``autograder.sandbox.backstop(timeout)``. A busy machine must not turn a slow-but-correct cell into a
zero. Needs :class:`~autograder.nbgrader_ext.SandboxedKernelManager` (it watches the kernel's
processes); with another kernel manager the timeout is wall-clock time, as in nbgrader.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from pathlib import Path
from queue import Empty
from typing import Any, List, Optional, Tuple

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import DeadKernelError
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, Float, Unicode

from nbgrader import utils
from nbgrader.preprocessors import Execute

from autograder.grading import cell_limits, sandbox


def source_notebook(config, resources: dict) -> Optional[Path]:
    """The instructor's version of the notebook being graded (solutions and hidden tests in):
    ``source/<assignment>/<notebook>.ipynb`` in the course folder, or None where there is none
    (a notebook run outside nbgrader's autograde)."""
    info = resources.get("nbgrader") or {}
    if not info.get("assignment") or not info.get("notebook"):
        return None
    root = Path(config.get("CourseDirectory", {}).get("root") or os.getcwd())
    source = root / "source" / info["assignment"] / f"{info['notebook']}.ipynb"
    return source if source.is_file() else None


class _CellTimedOut(Exception):
    """Raised out of nbclient's reply loop when a cell passes its timeout.

    Deliberately not an nbclient ``CellControlSignal``: for any other exception nbclient cancels
    the task that reads the cell's output, which is what we want (the cell will never finish).
    """

    def __init__(self, timeout: int):
        super().__init__(timeout)
        self.timeout = timeout


class ExecuteGuarded(Execute):
    """Execute the notebook; on a hang or a dead kernel, restart it and replay the setup."""

    timeout_message = Unicode(
        "this cell ran past {timeout} s and was stopped: an endless loop? (a loop whose condition "
        "never changes, a kernel that never returns, or a launch far too large for the CUDA "
        "simulator). The kernel was restarted and the earlier setup and solution cells were run "
        "again, so the cells below were still run and graded.",
        help="The error shown in a cell that ran past the timeout; {timeout} is the limit in seconds",
    ).tag(config=True)

    dead_kernel_message = Unicode(
        "the kernel died while running this cell (a crash, or a call that exits the process). "
        "It was restarted and the earlier setup and solution cells were run again, so the cells "
        "below were still run and graded.",
        help="The error shown in a cell during which the kernel process died",
    ).tag(config=True)

    limit_message = Unicode(
        "{limit}. It was restarted and the earlier setup and solution cells were run again, so "
        "the cells below were still run and graded.",
        help="The error shown in a cell during which the kernel was killed at a limit of "
        "SandboxedKernelManager (memory, processes); {limit} says which",
    ).tag(config=True)

    replay = Bool(
        True,
        help="After a restart, re-run the earlier successful non-grade cells to rebuild state",
    ).tag(config=True)

    skip_isolated = Bool(
        True,
        help="Do not run cells that run in a process of their own (%%isolated): they define "
        "nothing the notebook uses (the judge skips them too), and each costs a Python start",
    ).tag(config=True)

    isolated_message = Unicode(
        "(not run when grading: this cell runs in a separate process, so it defines nothing the "
        "cells below use)\n",
        help="The output a skipped %%isolated cell shows",
    ).tag(config=True)

    derive_limits = Bool(
        True,
        help="Give each cell a multiple of what the assignment's solution needs on this machine "
        "(measured once per machine from source/<assignment>/<notebook>.ipynb), at most timeout",
    ).tag(config=True)

    limit_margin = Float(cell_limits.MARGIN, help="A cell may take this many times the processor "
                         "time of the same cell of the solution").tag(config=True)

    limit_floor = Float(cell_limits.FLOOR, help="and at least this many seconds").tag(config=True)

    def __init__(self, *args, **kwargs):
        # The kernel runs in the sandbox (c.SandboxedKernelManager.sandbox = 'off' to opt out).
        from autograder.grading.nbgrader_ext.sandboxed_kernel import SandboxedKernelManager
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb: NotebookNode, resources: Any = None, km=None):
        # Indices of the cells to replay after a restart, in notebook order.
        self._replayable: List[int] = []
        self._late_reply: Optional[dict] = None
        self.seconds: dict = {}       # processor seconds each cell took, by cell id
        self._solution = self._solution_seconds(resources or {}) if self.derive_limits else None
        nb, resources = super().preprocess(nb, resources, km=km)
        if self._solution is not None and self.timeout:
            limits = {}
            for cell in nb.cells:
                if cell.cell_type == "code":
                    allowed = self._cell_limit(cell)
                    limits[cell.get("id")] = allowed
                    grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                    if grade_id:
                        limits[grade_id] = allowed
            resources["aag_cell_limits"] = limits
        return nb, resources

    # -- how long a cell may run -----------------------------------------------------------------

    def _solution_seconds(self, resources: dict) -> Optional[dict]:
        """Processor seconds per cell of the assignment's solution on this machine (None when
        the source notebook is not there, e.g. a notebook executed outside nbgrader)."""
        source = source_notebook(self.config, resources)
        if source is None:
            return None
        return cell_limits.solution_seconds(source, lambda: self._measure(source))

    def _measure(self, source: Path) -> dict:
        """Run the solution notebook once, as submissions run, in a scratch copy of its folder."""
        import nbformat
        self.log.info("Measuring what each cell of %s needs on this machine (once per machine): "
                      "submissions' cells may take %g times as long", source.name, self.limit_margin)
        nb = nbformat.read(str(source), as_version=4)
        with tempfile.TemporaryDirectory(prefix="aag-solution-") as tmp:
            for item in source.parent.iterdir():
                if item.is_file() and item.suffix != ".ipynb":
                    shutil.copy2(item, tmp)
            runner = type(self)(config=self.config, derive_limits=False, log=self.log)
            runner.preprocess(nb, {"metadata": {"path": tmp}})
        return runner.seconds

    def _cell_seconds(self) -> float:
        """Processor seconds of the kernel since the cell began (wall seconds if not known)."""
        cpu = self._kernel_cpu()
        if cpu is None or self._cell_cpu is None:
            return time.monotonic() - self._cell_started
        return cpu - self._cell_cpu

    def _cell_limit(self, cell: NotebookNode) -> float:
        return cell_limits.limit(self._solution, cell.get("id"), float(self.timeout),
                                 self.limit_margin, self.limit_floor)

    def _get_timeout(self, cell: Optional[NotebookNode]) -> Optional[int]:
        timeout = super()._get_timeout(cell)
        if cell is None or timeout is None or timeout <= 0 or not self._solution:
            return timeout
        return int(math.ceil(self._cell_limit(cell)))

    def _kernel_cpu(self) -> Optional[float]:
        """Processor time the kernel's processes have used so far (None: not known)."""
        cpu = getattr(self.km, "cpu_seconds", None)
        return cpu() if cpu is not None else None

    # -- nbclient hooks --------------------------------------------------------------------------

    async def _async_handle_timeout(
        self, timeout: int, cell: Optional[NotebookNode] = None
    ) -> Optional[dict]:
        if cell is None:
            # Not a cell (the start-up kernel_info request): keep nbclient's behaviour.
            return await super()._async_handle_timeout(timeout, cell)
        reply = await self._wait_while_under_budget(timeout)
        if reply is not None:
            return reply
        self.log.error("Cell ran past %s s; the kernel will be restarted", timeout)
        raise _CellTimedOut(timeout)

    async def _wait_while_under_budget(self, timeout: int) -> Optional[dict]:
        """The cell's reply, if it comes before the kernel has used ``timeout`` s of processor
        time since the cell began (and before the wall-clock backstop); None once either passed."""
        cpu0 = getattr(self, "_cell_cpu", None)
        if cpu0 is None or self._kernel_cpu() is None:
            return None
        wall_end = self._cell_started + sandbox.backstop(timeout)
        waited = False
        while time.monotonic() < wall_end and self._kernel_cpu() - cpu0 < timeout:
            if not waited:
                self.log.info("Cell past %s s of wall time but not of processor time (a busy "
                              "machine): waiting on", timeout)
                waited = True
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=1))
            except Empty:
                await self._async_check_alive()
                continue
            if msg.get("msg_type") == "execute_reply":
                self._late_reply = msg
                return msg
        return None

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, index: int
    ) -> Tuple[NotebookNode, ResourcesDict]:
        from autograder.grading.judge import runs_isolated
        if (self.skip_isolated and cell.cell_type == "code" and not utils.is_grade(cell)
                and runs_isolated(cell)):
            cell.outputs = [NotebookNode(output_type="stream", name="stdout",
                                         text=self.isolated_message)]
            return cell, resources
        self._cell_cpu, self._cell_started = self._kernel_cpu(), time.monotonic()
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except _CellTimedOut as e:
            self.seconds[cell.get("id")] = float(e.timeout)
            self._record_error(cell, "CellTimeoutError", self.timeout_message.format(timeout=e.timeout))
            self._recover()
            return cell, self.resources
        except DeadKernelError:
            # Killed by the kernel manager's watchdog? Then say which limit (memory, processes).
            limit = getattr(self.km, "limit_message", lambda: "")()
            self._record_error(cell, "DeadKernelError", self.limit_message.format(limit=limit)
                               if limit else self.dead_kernel_message)
            self._recover()
            return cell, self.resources
        finally:
            if cell.cell_type == "code" and cell.get("id") not in self.seconds:
                self.seconds[cell.get("id")] = self._cell_seconds()

        if self._is_replayable(cell):
            self._replayable.append(index)
        return cell, resources

    # -- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def _is_replayable(cell: NotebookNode) -> bool:
        if cell.cell_type != "code" or not cell.source.strip():
            return False
        if utils.is_grade(cell):
            return False
        return not any(out.get("output_type") == "error" for out in cell.get("outputs", []))

    @staticmethod
    def _record_error(cell: NotebookNode, ename: str, message: str) -> None:
        # Whatever the cell printed before it hung stays; the error goes last, as a traceback would.
        error = NotebookNode(output_type="error", ename=ename, evalue=message,
                             traceback=[f"\x1b[0;31m{ename}\x1b[0m: {message}"])
        cell.setdefault("outputs", []).append(error)

    def _recover(self) -> None:
        self._restart_kernel()
        if not self.replay or not self._replayable:
            return
        failed = self._replay_cells()
        if failed is not None:
            # The replay itself hung or died: start clean once more and give up on rebuilding
            # state; the later cells then fail on missing names, which grades them correctly.
            self.log.error("Replaying cell %s after a restart failed; continuing without state", failed)
            self._restart_kernel()

    async def _async_restart_kernel(self) -> None:
        """Kill the kernel at once (a graceful shutdown would wait on a busy kernel) and start anew."""
        assert self.km is not None
        try:
            await ensure_async(self.km.shutdown_kernel(now=True))
        except RuntimeError as e:  # already dead
            if "No kernel is running" not in str(e):
                raise
        if self.kc is not None:
            await ensure_async(self.kc.stop_channels())
        self.kc = None
        # A new manager and client, so no message from the killed kernel is read as a reply.
        self.km = self.create_kernel_manager()
        await self.async_start_new_kernel()
        await self.async_start_new_kernel_client()

    _restart_kernel = run_sync(_async_restart_kernel)

    async def _async_replay_cells(self) -> Optional[int]:
        """Re-run the recorded cells without touching their outputs; return the index that failed."""
        assert self.kc is not None
        for index in self._replayable:
            cell = self.nb.cells[index]
            msg_id = await ensure_async(self.kc.execute(cell.source, store_history=False))
            self._cell_cpu, self._cell_started = self._kernel_cpu(), time.monotonic()
            self._late_reply = None
            try:
                # A reply that came late on a busy machine is kept by _wait_while_under_budget
                # (nbclient's wait_for_reply drops it).
                reply = await self.async_wait_for_reply(msg_id, cell) or self._late_reply
            except (_CellTimedOut, DeadKernelError):
                return index
            if reply is None or reply["content"].get("status") != "ok":
                return index
        return None

    _replay_cells = run_sync(_async_replay_cells)
