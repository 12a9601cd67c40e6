"""The bank of ch19_computational_thinking: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
