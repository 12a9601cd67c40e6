"""The bank of ch03_multidimensional: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
