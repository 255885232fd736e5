"""Every number and path of frames.yaml just past its documented bound, and line ranges past any file (issue 29).

Before, `eval.samples: 1000000000` exhausted memory in eval, `evolution.diagnosers: 1000000000` in
`evolve --estimate` (which promises no work), a back-link `#L1-L999999999999` in validate and
status, and `evolution.split.test_cases: ../outside/*` was scored as the sealed set. Each value
here must be refused, at its line, by `frames validate` and `frames evolve --estimate` alike.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from frames_cli.workspace.config import FramesConfig
from hostile.harness import CONFIG, Trial, write

#: String settings given a control, invisible or line-breaking character through a YAML escape.
ESCAPED = {
    "models.executor": '"frames-sim/executor\\e]0;pwned\\a"',
    "models.judge": '"frames-sim/judge\\nerror: FORGED-LINE-29"',
    "eval.cases": '"cases/\\u202e*"',
    "spool.dir": '".frames/spool\\u2028x"',
    "llm.api_base": '"http://localhost:8000\\x9b2J"',
    "ingest.category": '"uncategorized\\U000E0041"',
}
#: Path settings that leave the workspace.
PATHS = {
    "eval.cases": ("../*/cases/*", "/etc/*", "''"),
    "spool.dir": ("../spool", "/tmp/frames-spool"),
    "evolution.split.test_cases": ("../outside/*", "/etc/*", "cases/../../x/*"),
}


def numeric_settings(obj: Any = None, prefix: str = "") -> Iterator[tuple[str, dict, type]]:
    """(dotted key, field metadata, int or float) of every numeric setting."""
    obj = obj or FramesConfig()
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            yield from numeric_settings(value, f"{prefix}{f.name}.")
            continue
        kinds = [t for t in (typing.get_args(hints[f.name]) or (hints[f.name],)) if t in (int, float)]
        if kinds and f.name != "version":
            yield f"{prefix}{f.name}", dict(f.metadata), kinds[0]


def nested(key: str, raw: str) -> str:
    """YAML setting `key` (dotted) to the YAML text `raw`, as a block under its sections."""
    parts = key.split(".")
    lines = [f"{'  ' * i}{p}:" for i, p in enumerate(parts[:-1])]
    return "\n".join(lines + [f"{'  ' * (len(parts) - 1)}{parts[-1]}: {raw}"]) + "\n"


def setting(key: str, raw: str) -> Trial:
    """A trial setting `key` to `raw` in frames.yaml (merged under the template's sections)."""

    def make(root: Path) -> None:
        data = yaml.safe_load(CONFIG.format(extra=""))
        override = yaml.safe_load(nested(key, "__VALUE__"))
        merged = _merge(data, override)
        write(root, "frames.yaml", yaml.safe_dump(merged, sort_keys=False).replace("__VALUE__", raw))

    name = f"bound-{key}={raw}"[:60]
    return Trial(name, "bounds", make, (("validate",), ("evolve", "--estimate")), "frames.yaml", True, compare=True)


def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for k, v in extra.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _past(value: float, kind: type, up: bool) -> str:
    if kind is int:
        return str(int(value) + (1 if up else -1))
    return repr(value * 2 + 1 if up else value - 1)


def trials() -> list[Trial]:
    """Every numeric setting just above its maximum and just below its minimum; escaped text;
    paths leaving the workspace; back-links past any policy file."""
    out = []
    for key, meta, kind in numeric_settings():
        out.append(setting(key, _past(meta["max"], kind, True)))
        if meta["min"] > 0 or kind is int:
            out.append(setting(key, _past(meta["min"], kind, False)))
    out += [setting(key, raw) for key, raw in ESCAPED.items()]
    out += [setting(key, raw) for key, values in PATHS.items() for raw in values]
    sha = "0" * 64
    for span in ("L1-L999999999999", "L999999999999-L999999999999", "L5-L4", "L0-L3"):
        body = (f"---\nname: bad\ndescription: A skill whose back-link names no real lines.\nmetadata:\n  "
                f"frames-backlinks: policies/airline.md#{span} sha256:{sha} Airline\n---\n# Bad\n\nA rule.\n")
        out.append(Trial(f"backlink-{span}", "bounds", lambda r, b=body: write(r, "skills/bad/SKILL.md", b),
                         (("validate",), ("status",)), "skills/bad/SKILL.md", False))
    return out
