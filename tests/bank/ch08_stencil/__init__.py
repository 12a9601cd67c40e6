"""The bank of ch08_stencil: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
