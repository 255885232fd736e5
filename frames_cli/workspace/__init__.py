"""The workspace: the user's git repo layout, `frames.yaml` and the run lock."""
