"""The command line: one module per command, in the groups of `frames --help` (setup/, cases/,
evolve/, review/), registered on one typer app in `app.py`."""
