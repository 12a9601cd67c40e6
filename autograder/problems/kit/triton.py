"""What every exercise answered by a Triton launcher shares (chapters 24-27).

:class:`TritonExercise` goes before the chapter's own problem class (``class
TritonRowsProblem(TritonExercise, RowsProblem)``):

- where Triton cannot run here (not installed, or a platform it has no wheels for), the checks
  print why and return, so the rest of the notebook runs; the grader never skips (it must have
  Triton, and ``being_graded()`` says when it is the grader);
- a case whose output was left partly unwritten (and raised nothing) gets the chapter's
  ``unwritten_hint``, which says in Triton's terms which programs must store what.
"""

from __future__ import annotations


class TritonExercise:
    unwritten_hint: str = ""

    def _skipped(self, kind: str) -> bool:
        from autograder.core.spec import being_graded
        from autograder.machine import triton_bridge
        why = None if being_graded() else triton_bridge.unavailable_reason()
        if why:
            print(f"– {self.name} ({kind}): skipped, not checked on this machine. {why}")
        return why is not None

    def check(self, submission) -> None:
        if not self._skipped("check"):
            super().check(submission)

    def check_hidden(self, submission) -> None:
        if not self._skipped("check_hidden"):
            super().check_hidden(submission)

    def check_speed(self, submission) -> None:
        if not self._skipped("check_speed"):
            super().check_speed(submission)

    def judge(self, case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs=show_inputs)
        if (self.unwritten_hint and not verdict.passed and "written" in verdict.message
                and not outcome.error):
            verdict.hint = self.hint_for_unwritten(verdict.hint)
        return verdict

    def hint_for_unwritten(self, hint: str) -> str:
        """The hint for outputs left unwritten, given the one the check gave (a chapter may keep
        a more telling one)."""
        return self.unwritten_hint
