"""The lowest layer: verdicts and the comparisons behind them (``checks``), plain-words error texts
(``explain``) and progress lines (``progress``). Pure Python and NumPy; no Numba at import."""
