"""The workspace: the user's git repo layout, `frames.yaml`, atomic files and the run lock."""
