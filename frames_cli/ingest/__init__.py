"""Converters from operational feedback (benchmarks, review logs, traces, amendments) to cases."""
