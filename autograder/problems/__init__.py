"""The exercises, one module per chapter (``ch01``, ``ch02``, ...), one Problem per exercise."""

from . import ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11, ch12  # noqa: F401

CHAPTERS = (ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11, ch12)
ALL = {p.name: p for module in CHAPTERS for p in module.PROBLEMS}
