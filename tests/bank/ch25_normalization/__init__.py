"""The bank of ch25_normalization: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
