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
they are discovered here, in order, and each of their problems learns its path
(``"ch02.vector_add"``), the name a check cell and the judge's student process know it by.
Adding a chapter touches only its own folders.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

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


def _discover() -> dict[str, Chapter]:
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if CHAPTER_NAME.fullmatch(m.name))
    return {name: _read(importlib.import_module(f"{__name__}.{name}")) for name in names}


REGISTRY = _discover()
CHAPTERS = tuple(chapter.module for chapter in REGISTRY.values())
ALL = {p.name: p for chapter in REGISTRY.values() for p in chapter.problems}


def chapter_of(problem) -> Chapter:
    """The chapter an exercise belongs to."""
    return REGISTRY[problem.path.split(".", 1)[0]]


def bench_variants(problem) -> dict:
    """The other kernels ``aag bench`` times beside this exercise's reference."""
    return chapter_of(problem).bench_variants.get(problem.name, {})


def recorded_file(name: str) -> Path | None:
    """``<device>_<chapter>_<what>.json`` in its chapter's folder (``h200_ch05_matmul``)."""
    match = re.fullmatch(r"[a-z0-9]+_(ch\d\d[a-z]?)_\w+", name)
    if match and match.group(1) in REGISTRY:
        path = REGISTRY[match.group(1)].folder / f"{name}.json"
        if path.is_file():
            return path
    return None
