"""What a run keeps: run and candidate ids, its records (state.json) and run folders, the loop's
checkpoint, the settings it is fixed to, its case sets and the disputed labels."""
