"""The bank of ch09_histogram: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
