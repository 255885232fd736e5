"""Converters from operational feedback (benchmarks, review logs, traces, amendments) to cases; each
sub-package imports only those listed before it (tests/test_imports.py keeps the order):

cases → keys → rows → tau2 → feedback
"""
