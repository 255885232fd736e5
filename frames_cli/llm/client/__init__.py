"""ModelClient, every model call of frames: scheduling, one request answered (cache, retries,
repair, ledger, audit), and first contact with a provider (`frames check-models`)."""
