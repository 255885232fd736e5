"""The settings reference page (docs/settings.md), generated from the settings' own descriptions.

Each setting's meaning, default, type and allowed range live once, in the dataclass fields of
workspace/config.py and evolution_config.py; this module renders them as Markdown. A test compares the page in the
repository with `settings_reference()`, so the page cannot drift from the code. Regenerate with

    python -m frames_cli.workspace.settings_doc docs/settings.md
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from pathlib import Path
from typing import Any

from frames_cli.workspace.config import RETIRED_SETTINGS, TEAM_SETTINGS, FramesConfig
from frames_cli.workspace.config_file import type_name, yaml_scalar

REGENERATE = "python -m frames_cli.workspace.settings_doc docs/settings.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _number(value: float) -> str:
    """A bound as people read it: integers in full with thousands separators (4,294,967,295, not 4.29497e+09)."""
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _allowed(tp: Any, meta: dict[str, Any]) -> str:
    parts = [type_name(tp)]
    if "choices" in meta:
        parts.append("one of " + ", ".join(f"`{c}`" for c in meta["choices"]))
    if "min" in meta and "max" in meta:
        parts.append(f"{_number(meta['min'])} to {_number(meta['max'])}")
    elif "min" in meta:
        parts.append(f"at least {_number(meta['min'])}")
    elif "max" in meta:
        parts.append(f"at most {_number(meta['max'])}")
    if meta.get("inside"):
        parts.append("a path inside the workspace")
    return "; ".join(parts)


def settings_reference() -> str:
    """The Markdown page listing every setting of frames.yaml.

    Returns:
        One section per settings group (`models`, `llm`, ..., nested groups as `evolution.split`),
        each with its description and a table: key, default (as YAML), type and allowed values,
        meaning. Keys `frames init` writes (`TEAM_SETTINGS`) are marked; retired keys close the page.
    """
    out = [
        "# Settings reference",
        "",
        "Every setting of `frames.yaml`, its default and its meaning. A key left out keeps its default;",
        "`frames init` writes only the keys marked **init** (the ones a team sets first);",
        "`frames validate` checks the file and names the line of a wrong value.",
        "",
        "This page is generated from `frames_cli/workspace/config.py` and `evolution_config.py`; after changing",
        f"a setting there, run `{REGENERATE}` (a test compares the two).",
        "",
    ]
    top = [
        f for f in dataclasses.fields(FramesConfig)
        if not dataclasses.is_dataclass(f.type) and f.default is not dataclasses.MISSING
    ]
    out += _table("", [(f, getattr(FramesConfig(), f.name)) for f in top], FramesConfig)

    def section(obj: Any, prefix: str, doc: str) -> None:
        cls = type(obj)
        about = " ".join(cls.__doc__.split()) if cls.__doc__ else f"{doc[:1].upper()}{doc[1:]}."
        out.extend([f"## `{prefix}`", "", about, ""])
        leaves = [
            (f, getattr(obj, f.name)) for f in dataclasses.fields(obj)
            if not dataclasses.is_dataclass(getattr(obj, f.name))
        ]
        out.extend(_table(prefix + ".", leaves, cls))
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                section(value, f"{prefix}.{f.name}", f.metadata.get("doc", ""))

    defaults = FramesConfig()
    for f in dataclasses.fields(defaults):
        value = getattr(defaults, f.name)
        if dataclasses.is_dataclass(value):
            section(value, f.name, f.metadata.get("doc", ""))
    out += _retired()
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _table(prefix: str, leaves: list[tuple[dataclasses.Field, Any]], cls: type) -> list[str]:
    if not leaves:
        return []
    hints = typing.get_type_hints(cls)
    rows = ["| key | default | type | meaning |", "|---|---|---|---|"]
    for f, value in leaves:
        key = f"{prefix}{f.name}"
        mark = " (**init**)" if key in TEAM_SETTINGS else ""
        meta = dict(f.metadata)
        rows.append(
            f"| `{key}`{mark} | `{_cell(yaml_scalar(value))}` | {_cell(_allowed(hints[f.name], meta))} | "
            f"{_cell(meta.get('doc', ''))} |"
        )
    return [*rows, ""]


def _retired() -> list[str]:
    """The section on keys no setting reads any more (`RETIRED_SETTINGS`)."""
    rows = [f"| `{key}` | {_cell(why)} |" for key, why in RETIRED_SETTINGS.items()]
    return [
        "## Retired keys", "",
        "Keys an older frames.yaml may hold that no setting reads any more: frames ignores each, with a",
        "warning naming the file and line, until the line is deleted.", "",
        "| key | why it went |", "|---|---|", *rows, "",
    ] if rows else []


def main(argv: list[str]) -> int:
    """Write the page to the file named in `argv` (or print it). Returns the exit code."""
    text = settings_reference()
    if argv:
        Path(argv[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
