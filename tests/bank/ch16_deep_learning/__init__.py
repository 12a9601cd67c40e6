"""The bank of ch16_deep_learning: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
