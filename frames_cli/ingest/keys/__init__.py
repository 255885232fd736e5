"""A reviewer's comment read for what it requires: its whole sentences, and the answer key by rules
or by `models.keys`, held to the same contract."""
