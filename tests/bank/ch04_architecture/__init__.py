"""The bank of ch04_architecture: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
