"""The run's recommendation: decided at its end (confirm), later for a pending branch
(prospective), replayed from a recording (recorded), and said in words (recommend)."""
