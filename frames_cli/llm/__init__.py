"""Model access: one layer over litellm for every role, with cache, retries, ledger and audit log."""
