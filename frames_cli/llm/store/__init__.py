"""What model calls leave on disk: the response cache, the audit log, the spend ledger, and the
batched JSON-line appends under the first two."""
