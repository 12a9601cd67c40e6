"""The bank of ch26_attention: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
