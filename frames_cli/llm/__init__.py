"""Model access: one layer over litellm for every role, with cache, retries, ledger and audit log;
each sub-package imports only those listed before it (tests/test_imports.py keeps the order):

messages → store → transport → client
"""
