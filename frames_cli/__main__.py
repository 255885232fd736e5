"""`python -m frames_cli` runs the command line."""

from frames_cli.commands.app import main

main()
