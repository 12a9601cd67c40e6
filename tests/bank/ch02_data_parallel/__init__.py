"""The bank of ch02_data_parallel: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
