"""The pluggable kinds of frames and their built-ins: every extension point, listed in one place.

Each kind maps a short name (what users write in `frames.yaml`, on the command line or in a case
file) to the object that implements it, as a lazy ``"module:attribute"`` string so that listing or
validating names imports nothing heavy. To add a built-in, add one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from frames_cli.errors import InputError, Location


@dataclass(frozen=True)
class Kind:
    """One pluggable kind: a name → implementation table.

    Attributes:
        label: what the kind is called in messages ("executor", "check kind").
        builtins: name → ``"module:attribute"`` (attribute optional: then the module itself).
    """

    label: str
    builtins: dict[str, str]

    def names(self) -> tuple[str, ...]:
        """The valid names, in the order they are listed here."""
        return tuple(self.builtins)

    def validate(self, name: str, location: Location | None = None) -> str:
        """Return `name` if it is known.

        Raises:
            InputError: unknown name; the message lists the valid ones (exit code 2).
        """
        if name not in self.builtins:
            raise InputError(f"unknown {self.label} {name!r} (valid: {', '.join(self.names())})", location)
        return name

    def load(self, name: str) -> Any:
        """Import and return the implementation of `name` (validated first, see `validate`)."""
        module, _, attr = self.builtins[self.validate(name)].partition(":")
        obj = importlib.import_module(module)
        return getattr(obj, attr) if attr else obj


#: The agent under test (DESIGN §5); `executor.kind` in frames.yaml.
EXECUTORS = Kind(
    "executor",
    {
        "builtin": "frames_cli.executor.builtin:BuiltinExecutor",
        "command": "frames_cli.executor.command:CommandExecutor",
    },
)

#: `frames ingest KIND`: sources turned into cases.
CONVERTERS = Kind(
    "converter",
    {
        "tau2": "frames_cli.ingest.tau2.converter:Tau2Converter",
        "review-log": "frames_cli.ingest.feedback.review_log:ReviewLogConverter",
        "trace": "frames_cli.ingest.feedback.trace:TraceConverter",
        "import": "frames_cli.ingest.feedback.generic:GenericConverter",
    },
)

#: `task.check.kind` in a case: how an agent's output is compared with the expected one.
CHECKS = Kind(
    "check kind",
    {
        "exact": "frames_cli.evaluation.checks:ExactCheck",
        "set": "frames_cli.evaluation.checks:SetCheck",
        "contains": "frames_cli.evaluation.checks:ContainsCheck",
        "rubric": "frames_cli.evaluation.checks:RubricCheck",
    },
)

#: Model-string prefixes in `models.<role>`; anything without a known prefix goes to litellm. A
#: module with `litellm_provider()` is registered with litellm as a custom provider
#: (llm/transport/providers.py), so `llm/` never imports the simulator.
PROVIDERS = Kind(
    "model provider",
    {
        "frames-sim": "frames_cli.sim",
        "spool": "frames_cli.llm.transport.spool",
        "litellm": "litellm",
    },
)

KINDS: dict[str, Kind] = {"executor": EXECUTORS, "converter": CONVERTERS, "check": CHECKS, "provider": PROVIDERS}
