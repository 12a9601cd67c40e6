"""The bank of ch24_softmax: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
