"""The exercises: one module per chapter (``ch01``, ``ch02``, ...), found by name.

A chapter is a module (or package) named ``chNN`` in this folder with a ``PROBLEMS`` tuple: its
graded exercises. Nothing lists the chapters: they are discovered here, in order, and each of
their problems learns its path (``"ch02.vector_add"``), the name a check cell and the judge's
student process know it by. Adding a chapter touches only its own files.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

CHAPTER_NAME = re.compile(r"ch\d\d")


def _discover() -> tuple:
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if CHAPTER_NAME.fullmatch(m.name))
    chapters = tuple(importlib.import_module(f"{__name__}.{name}") for name in names)
    for module in chapters:
        short = module.__name__.rsplit(".", 1)[-1]
        for problem in getattr(module, "PROBLEMS", ()):
            problem.path = f"{short}.{problem.name}"
    return chapters


CHAPTERS = _discover()
ALL = {p.name: p for module in CHAPTERS for p in module.PROBLEMS}
