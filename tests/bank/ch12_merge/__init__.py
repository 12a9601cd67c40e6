"""The bank of ch12_merge: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
