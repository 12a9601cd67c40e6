"""The bank of ch10_reduction: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
