"""The evolution method, one sub-package per part; each imports only the parts listed before it
(tests/test_imports.py keeps the order, docs/ARCHITECTURE.md describes the parts):

compare → state → propose → round → decide → report → run
"""
