"""The bank of ch13_sorting: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
