"""The bank of ch23_conclusion: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
