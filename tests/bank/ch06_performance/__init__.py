"""The bank of ch06_performance: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
