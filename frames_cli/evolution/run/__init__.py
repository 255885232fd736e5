"""An evolve run: opening it (driver), its collaborators, the loop of rounds, the settings snapshot,
what S0 leaves out (drift) and the spend estimate."""
