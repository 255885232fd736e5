"""frames: evolve a git repository of Markdown skills for policy-bound LLM agents."""

__version__ = "0.1.0"
