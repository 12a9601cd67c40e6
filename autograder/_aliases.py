"""The modules' paths before the package was split into layers, kept for one release.

``import autograder.judge`` gives the module ``autograder.grading.judge`` itself (one module, two
names: patching one patches the other), and ``python -m autograder.build`` still runs. New code
imports the new paths; nothing in the package uses the old ones.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

MOVED = {   # old name -> new name; a package's submodules follow it
    "autograder.checks": "autograder.core.checks",
    "autograder.explain": "autograder.core.explain",
    "autograder.progress": "autograder.core.progress",
    "autograder.device": "autograder.machine.device",
    "autograder.timing": "autograder.machine.timing",
    "autograder.cpu_mode": "autograder.machine.simulator.cpu_mode",
    "autograder.warp": "autograder.machine.simulator.warp",
    "autograder.races": "autograder.machine.simulator.races",
    "autograder.problem": "autograder.grading.problem",
    "autograder.judge": "autograder.grading.judge",
    "autograder.runner": "autograder.grading.runner",
    "autograder.sandbox": "autograder.grading.sandbox",
    "autograder.safe_files": "autograder.grading.safe_files",
    "autograder.provenance": "autograder.grading.provenance",
    "autograder.nbgrader_ext": "autograder.grading.nbgrader_ext",
    "autograder.notebook": "autograder.learner.notebook",
    "autograder.hints": "autograder.learner.hints",
    "autograder.experiments": "autograder.learner.experiments",
    "autograder.visual": "autograder.learner.visual",
    "autograder.cli": "autograder.tools.cli",
    "autograder.doctor": "autograder.tools.doctor",
    "autograder.workspace": "autograder.tools.workspace",
    "autograder.build": "autograder.tools.build",
    "autograder.bench": "autograder.tools.bench",
    "autograder.problems.common": "autograder.problems.kit.inputs",
}


def new_name(name: str) -> str | None:
    """The module's name now, if ``name`` is an old one."""
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module under its new name (the same object)."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.real_spec = module.__spec__   # the import system overwrites it with the alias's
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self.real_spec   # already executed under its new name: keep its spec

    def get_code(self, name):   # python -m <old name>
        spec = importlib.util.find_spec(self.target)
        return spec.loader.get_code(self.target)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        real = importlib.util.find_spec(new)
        if real is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new),
                                               is_package=real.submodule_search_locations is not None)


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
