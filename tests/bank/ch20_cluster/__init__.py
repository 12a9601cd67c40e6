"""The bank of ch20_cluster: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
