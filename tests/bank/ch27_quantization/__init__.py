"""The bank of ch27_quantization: one folder per exercise, and naive.py (the naive checks its exploits beat)."""
