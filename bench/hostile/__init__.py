"""Hostile and malformed inputs for `bench/bad_inputs.py`: the harness and one module per family
(files: config, cases, skills, policies, run ids; bounds: every number and path setting; answers:
a model's answers through the spool provider; git: refusals and kills around frames' commits)."""
