"""The bank of ch05_memory_locality: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
