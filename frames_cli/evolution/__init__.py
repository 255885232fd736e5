"""The evolution loop and its parts: diagnosis, vote, guarded rewrite, gate, Pareto front, checkpoints."""
