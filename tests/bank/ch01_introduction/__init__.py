"""The bank of ch01_introduction: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
