"""Scoring an agent on cases: checks, metrics, the evaluation run, the regression pool and reports."""
