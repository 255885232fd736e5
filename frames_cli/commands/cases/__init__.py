"""`frames ingest` and its kinds: feedback, benchmarks and amendments turned into cases."""
