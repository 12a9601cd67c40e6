"""The bank of ch15_graph: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
