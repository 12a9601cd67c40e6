"""The bank of ch14_sparse: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
