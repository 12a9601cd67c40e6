"""The bank of ch21_dynamic_parallelism: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
