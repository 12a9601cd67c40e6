"""The bank of ch18_electrostatics: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
