"""Reaching a model: litellm set up with our providers (the simulator's, spool), one call as plain
data, worker processes, batch mode, and what a person is told while frames waits."""
