"""The bank of ch11_scan: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
