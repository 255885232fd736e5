"""File formats of the workspace: skills (Agent Skills SKILL.md), cases, problems found in them."""
