"""docs/settings.md is the settings' own descriptions, and `frames init` writes only the team's.

Invariants:
1. The page in the repository is exactly what `settings_reference()` renders from the code.
2. Every setting (every leaf field of FramesConfig) has a row with its default and its meaning.
3. Every key in TEAM_SETTINGS is a real setting, marked on the page, and written by `frames init`.
4. Every retired key has a row saying why it went, and none is a setting.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from frames_cli.workspace.config import RETIRED_SETTINGS, TEAM_SETTINGS, FramesConfig
from frames_cli.workspace.config_file import parse_config, render_config, yaml_scalar
from frames_cli.workspace.settings_doc import REGENERATE, settings_reference

PAGE = Path(__file__).parents[2] / "docs" / "settings.md"


def leaves(obj: object, prefix: str = "") -> dict[str, tuple[object, str]]:
    found: dict[str, tuple[object, str]] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            found |= leaves(value, f"{prefix}{f.name}.")
        else:
            found[f"{prefix}{f.name}"] = (value, f.metadata["doc"])
    return found


def test_the_page_matches_the_code() -> None:
    assert PAGE.read_text(encoding="utf-8") == settings_reference(), f"docs/settings.md is stale: run `{REGENERATE}`"


def test_every_setting_has_a_row_with_default_and_meaning() -> None:
    rows = {line.split("|")[1].strip().split("`")[1]: line for line in settings_reference().splitlines()
            if line.startswith("| `")}
    settings = leaves(FramesConfig())
    assert set(rows) == set(settings) | set(RETIRED_SETTINGS)
    for key, (default, doc) in settings.items():
        assert f"`{yaml_scalar(default)}`" in rows[key], key
        assert doc.replace("|", "\\|") in rows[key], key
        assert ("(**init**)" in rows[key]) == (key in TEAM_SETTINGS), key


def test_every_retired_key_has_a_row_and_is_no_setting() -> None:
    page = settings_reference()
    assert not set(RETIRED_SETTINGS) & set(leaves(FramesConfig()))
    for key, why in RETIRED_SETTINGS.items():
        assert f"| `{key}` | {why} |" in page.split("## Retired keys")[1], key


def test_init_writes_exactly_the_team_settings() -> None:
    text = render_config(only=TEAM_SETTINGS)
    assert parse_config(text) == FramesConfig()
    assert set(TEAM_SETTINGS) <= set(leaves(FramesConfig()))
    written = {line.strip().split(":")[0] for line in text.splitlines() if line.startswith(("  ", "version"))}
    assert written == {key.rsplit(".", 1)[-1] for key in TEAM_SETTINGS}
