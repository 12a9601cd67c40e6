"""The exercises: one package per chapter (``ch01``, ``ch02``, ...), found by name.

A chapter is a package named ``chNN`` in this folder. What the course reads from it is declared
here and nowhere else:

- ``PROBLEMS`` (required): its graded exercises, in the order of the notebook;
- ``BENCH_VARIANTS`` (optional): ``{exercise name: {label: kernel factory}}``, other kernels
  ``aag bench`` times beside an exercise's reference with the same launch and inputs;
- ``hints.toml`` (a file beside it): the hint ladder of each exercise (:mod:`autograder.learner.hints`);
- ``<device>_<chapter>_<name>.json`` (files beside it): what its measuring cells drew on the
  course's reference GPU, shown to learners without one (:func:`recorded`).

The usual files of a chapter package are ``specs.py`` (the graded exercises), ``references.py``
(the course's reference kernels and bench variants) and ``notebook.py`` (what the notebook's
other cells call), with ``kit`` holding the pieces chapters share. Nothing lists the chapters:
they are discovered here, in order, and imported when first used (``problems.ch24``,
:func:`chapter`; ``ALL`` and ``REGISTRY`` import them all), so a process that grades one chapter
does not import the other twenty-odd. Each of their problems learns its path
(``"ch02.vector_add"``), the name a check cell and the judge's student process know it by.
Adding a chapter touches only its own folders.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from autograder.grading import problem as _problem_module

CHAPTER_NAME = re.compile(r"ch\d\d[a-z]?")
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Chapter:
    """What the course reads from one chapter package."""

    name: str                        # "ch03"
    module: ModuleType
    problems: tuple
    bench_variants: dict = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return Path(self.module.__file__).resolve().parent

    @property
    def hints_file(self) -> Path:
        return self.folder / "hints.toml"


def _read(module: ModuleType) -> Chapter:
    name = module.__name__.rsplit(".", 1)[-1]
    problems = getattr(module, "PROBLEMS", None)
    if not isinstance(problems, tuple) or not problems:
        raise TypeError(f"{module.__name__} must define PROBLEMS, a tuple of its exercises")
    variants = getattr(module, "BENCH_VARIANTS", {})
    unknown = set(variants) - {p.name for p in problems}
    if unknown:
        raise ValueError(f"{module.__name__}.BENCH_VARIANTS names no exercise of the chapter: "
                         f"{sorted(unknown)}")
    for problem in problems:
        problem.path = f"{name}.{problem.name}"
    return Chapter(name=name, module=module, problems=problems, bench_variants=dict(variants))


def chapter_names() -> tuple[str, ...]:
    """The chapters' names in course order ("ch01", ..., "ch12c", ...), none of them imported."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__)
                        if CHAPTER_NAME.fullmatch(m.name)))


_read_chapters: dict[str, Chapter] = {}


def chapter(name: str) -> Chapter:
    """Chapter ``name`` ("ch24"), imported on first use: a process grading one chapter (the
    judge's student process, a notebook's kernel) pays for that chapter's modules only."""
    found = _read_chapters.get(name)
    if found is None:
        if not CHAPTER_NAME.fullmatch(name):
            raise KeyError(f"no chapter {name!r}")
        found = _read_chapters[name] = _read(importlib.import_module(f"{__name__}.{name}"))
    return found


def path_of(problem) -> str:
    """``"ch02.vector_add"`` for an exercise whose chapter module has been imported (by any route:
    ``from autograder.problems.ch10 import ...`` in another chapter too): the chapter that lists it."""
    prefix = __name__ + "."
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith(prefix) and CHAPTER_NAME.fullmatch(module_name[len(prefix):]) \
                and any(p is problem for p in getattr(module, "PROBLEMS", ())):
            return chapter(module_name[len(prefix):]).name + "." + problem.name
    return ""


_problem_module.PATH_OF = path_of


def __getattr__(name: str):
    """``problems.ch24`` (a chapter, imported on first use), and ``REGISTRY``, ``CHAPTERS``,
    ``ALL``, which import every chapter the first time one of them is read."""
    if CHAPTER_NAME.fullmatch(name) and name in chapter_names():
        return chapter(name).module
    if name in ("REGISTRY", "CHAPTERS", "ALL"):
        registry = {n: chapter(n) for n in chapter_names()}
        everything = {"REGISTRY": registry,
                      "CHAPTERS": tuple(c.module for c in registry.values()),
                      "ALL": {p.name: p for c in registry.values() for p in c.problems}}
        globals().update(everything)
        return everything[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def chapter_of(problem) -> Chapter:
    """The chapter an exercise belongs to."""
    return chapter(problem.path.split(".", 1)[0])


def bench_variants(problem) -> dict:
    """The other kernels ``aag bench`` times beside this exercise's reference."""
    return chapter_of(problem).bench_variants.get(problem.name, {})


def recorded_file(name: str) -> Path | None:
    """``<device>_<chapter>_<what>.json`` in its chapter's folder (``h200_ch05_matmul``)."""
    match = re.fullmatch(r"[a-z0-9]+_(ch\d\d[a-z]?)_\w+", name)
    if match and match.group(1) in chapter_names():
        path = HERE / match.group(1) / f"{name}.json"
        if path.is_file():
            return path
    return None
