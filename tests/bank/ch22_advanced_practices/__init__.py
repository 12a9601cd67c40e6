"""The bank of ch22_advanced_practices: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
