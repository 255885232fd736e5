"""The command line: one module per command, registered on one typer app in `app.py`."""
