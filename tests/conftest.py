"""Shared fixtures. Tests are offline: litellm must never fetch its price table."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
