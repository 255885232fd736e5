"""The registry of pluggable kinds: every built-in loads, and unknown names list the valid ones."""

from __future__ import annotations

import dataclasses

import pytest

from frames_cli.errors import InputError
from frames_cli.registry import CHECKS, CONVERTERS, EXECUTORS, KINDS, PROVIDERS


@pytest.mark.parametrize("kind", [EXECUTORS, CONVERTERS, CHECKS])
def test_every_builtin_loads(kind) -> None:
    for name in kind.names():
        assert callable(kind.load(name)), name


def test_converter_kinds_match_their_names() -> None:
    for name in CONVERTERS.names():
        cls = CONVERTERS.load(name)
        default = (
            next((f.default for f in dataclasses.fields(cls) if f.name == "kind"), None)
            if dataclasses.is_dataclass(cls)
            else cls.kind
        )
        assert default == name


def test_unknown_names_list_the_valid_ones() -> None:
    with pytest.raises(InputError, match=r"unknown executor 'shell' \(valid: builtin, command\)"):
        EXECUTORS.validate("shell")
    assert set(KINDS) == {"executor", "converter", "check", "provider"}
    assert PROVIDERS.names() == ("frames-sim", "spool", "litellm")
