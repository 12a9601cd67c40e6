"""The bank of ch28_multi_gpu: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
