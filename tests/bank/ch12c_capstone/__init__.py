"""The bank of ch12c_capstone: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
