"""A candidate compared with S0: the exact paired test, the acceptance gate with its sequential and
early-rejection forms, scores, the Pareto front, and the evidence rule that picks the review branch."""
