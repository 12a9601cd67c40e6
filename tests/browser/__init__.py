"""The browser test's harness (harness.py) and fixture notebooks; tests/test_browser.py uses them."""
