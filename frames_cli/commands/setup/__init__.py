"""Commands that make and check a workspace: init, coldstart, adopt, validate, status, check-models."""
