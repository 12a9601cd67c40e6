"""The bank of ch07_convolution: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
