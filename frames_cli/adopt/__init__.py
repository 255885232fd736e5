"""`frames adopt`: turning an existing folder of SKILL.md files into a valid frames / Agent Skills library."""
