"""The agent under test: the built-in LLM agent and the command agent, behind one protocol."""
