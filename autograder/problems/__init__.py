"""The exercises, one module per chapter (``ch01``, ``ch02``, ...), one Problem per exercise."""

from . import ch01, ch02, ch03, ch05  # noqa: F401

ALL = {p.name: p for module in (ch01, ch02, ch03, ch05) for p in module.PROBLEMS}
