"""Cold start: policy documents → a flat library of skills (deterministic cut, optional model rewrite)."""
