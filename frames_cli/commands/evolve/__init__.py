"""Commands that evaluate and evolve the skills: eval, evolve, and the list of runs."""
