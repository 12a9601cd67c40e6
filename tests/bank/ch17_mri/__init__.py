"""The bank of ch17_mri: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
