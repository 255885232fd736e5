"""`frames.yaml` ↔ FramesConfig: parsing with `path:line` errors (types, ranges,
paths, q ≤ D), loading, and the commented template `frames init` writes."""

from __future__ import annotations

import dataclasses
import math
import os
import reprlib
import types
import typing
import warnings
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Union

import yaml

from frames_cli.errors import ConfigError, FramesWarning, Location
from frames_cli.formats.text import decode_utf8, load_yaml_node, yaml_error_line
from frames_cli.formats.yamlbounds import check_yaml_bounds
from frames_cli.sanitize import LINE_BREAKS, unsafe_value
from frames_cli.workspace.config import (
    CONFIG_FILE, MAX_CALLS_PER_PROCESS, RETIRED_SETTINGS, SETTINGS_REFERENCE, SIM_PREFIX, SIM_ROLES, ColdstartConfig,
    EvolutionConfig, ExecutorConfig, FramesConfig, LLMConfig, SplitConfig,
)

#: Largest frames.yaml read; the template `frames init` writes is about 8 KB.
MAX_CONFIG_BYTES = 1_000_000


class RetiredSetting(FramesWarning):
    """A key of frames.yaml that no setting reads any more (`config.RETIRED_SETTINGS`): ignored.

    Attributes:
        key: the dotted key (`evolution.regression_sample`).
        location: frames.yaml and the key's line.
        text: what to tell the user, without the location.
    """

    def __init__(self, key: str, location: Location):
        self.key, self.location = key, location
        self.text = f"`{key}` is no longer a setting ({RETIRED_SETTINGS[key]}): it is ignored; delete the line"
        super().__init__(f"{location}: {self.text}")


def type_name(tp: Any) -> str:
    """A setting's type in words (`integer or null`), for errors and the settings reference."""
    names = []
    for arg in typing.get_args(tp) or (tp,):
        if arg is type(None):
            names.append("null")
        elif typing.get_origin(arg) is list:
            names.append("list of strings")
        else:
            names.append({int: "integer", float: "number", str: "string", bool: "true/false"}.get(arg, str(arg)))
    return " or ".join(names)


def _convert(node: yaml.Node, tp: Any, key: str, meta: dict, loc: Location) -> Any:
    """Turn one YAML scalar/sequence node into a value of type `tp`, or raise ConfigError."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (Union, types.UnionType) else (tp,)
    try:
        value = load_yaml_node(node) if not isinstance(node, yaml.MappingNode) else None
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(f"`{key}`: {exc.problem}", loc) from None

    def bad() -> ConfigError:
        # Made only when raised, and with a shortened repr: a long value must not be copied whole.
        return ConfigError(f"`{key}` must be {type_name(tp)}, got {reprlib.repr(value)}", loc)

    if isinstance(node, yaml.MappingNode):
        raise bad()
    if value is None:
        if type(None) in args:
            return None
        raise bad()
    found = unsafe_value(value, one_line=True)
    if found is not None:
        # A YAML escape (`"\e]0;x\a"`, `"\u202e"`) is plain text in the file and a control character once read.
        kind = "a line break or tab" if found[1].char in LINE_BREAKS else f"the character {found[1].describe()}"
        raise ConfigError(f"`{key}` holds {kind}; settings are plain one-line text", loc)
    setting = _Setting(key, meta, loc, args)
    for arg in args:
        read = _read_list if typing.get_origin(arg) is list else _READERS.get(arg)
        out = read(value, setting) if read is not None else _NOT_THIS_TYPE
        if out is not _NOT_THIS_TYPE:
            return out
    raise bad()


@dataclasses.dataclass(frozen=True)
class _Setting:
    """What the readers of one setting's value check against: its key, metadata, place and union type."""

    key: str
    meta: dict
    loc: Location
    args: tuple[Any, ...]


#: What a reader returns for a value that is not of its type (the next type of the union is tried).
_NOT_THIS_TYPE: Any = object()


def _read_list(value: Any, setting: _Setting) -> Any:
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return _NOT_THIS_TYPE
    if setting.meta.get("roles"):
        _check_roles(value, setting.key, setting.loc)
    return list(value)


def _read_bool(value: Any, setting: _Setting) -> Any:
    return value if isinstance(value, bool) else _NOT_THIS_TYPE


def _read_int(value: Any, setting: _Setting) -> Any:
    if not isinstance(value, int) or isinstance(value, bool):
        return _NOT_THIS_TYPE
    _check_range(value, setting.key, setting.meta, setting.loc)
    return value


def _read_float(value: Any, setting: _Setting) -> Any:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return _NOT_THIS_TYPE
    if not math.isfinite(value):
        raise ConfigError(f"`{setting.key}` must be a finite number, got {value}", setting.loc)
    _check_range(float(value), setting.key, setting.meta, setting.loc)
    return float(value)


def _read_str(value: Any, setting: _Setting) -> Any:
    if not isinstance(value, str):
        return _NOT_THIS_TYPE
    key, meta, loc = setting.key, setting.meta, setting.loc
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(f"`{key}` must be one of {', '.join(meta['choices'])}, got {value!r}", loc)
    if int in setting.args and value != "all":
        raise ConfigError(f"`{key}` must be a whole number or `all`, got {value!r}", loc)
    if meta.get("model"):
        _check_model(value, key, loc)
    if meta.get("inside"):
        _check_inside(value, key, loc)
    return value


_READERS: dict[Any, Callable[[Any, _Setting], Any]] = {
    bool: _read_bool, int: _read_int, float: _read_float, str: _read_str,
}


def _check_roles(value: list[str], key: str, loc: Location) -> None:
    """A list of roles must name roles of `models`."""
    from frames_cli.workspace.config import ModelsConfig

    known = [f.name for f in dataclasses.fields(ModelsConfig)]
    unknown = [v for v in value if v not in known]
    if unknown:
        raise ConfigError(f"`{key}`: no such role {', '.join(map(repr, unknown))} (roles: {', '.join(known)})", loc)


def _check_inside(value: str, key: str, loc: Location) -> None:
    """A path or glob setting must stay inside the workspace: relative, without `..`."""
    if (
        PurePosixPath(value).is_absolute() or Path(value).is_absolute() or ".." in PurePosixPath(value).parts
        or not value.strip()
    ):
        raise ConfigError(f"`{key}` must be a path relative to the workspace, inside it (no `..`), got {value!r}", loc)


def _check_model(model: str, key: str, loc: Location) -> None:
    """A simulator model must name a role the simulator plays; other providers check their own names."""
    prefix, _, role = model.partition("/")
    if prefix == SIM_PREFIX and role not in SIM_ROLES:
        raise ConfigError(
            f"`{key}`: the simulator plays no role {role!r} (known: "
            f"{', '.join(f'{SIM_PREFIX}/{r}' for r in SIM_ROLES)})",
            loc,
        )


def _check_range(value: float, key: str, meta: dict, loc: Location) -> None:
    if "min" in meta and value < meta["min"]:
        raise ConfigError(f"`{key}` must be at least {meta['min']}, got {value}", loc)
    if "max" in meta and value > meta["max"]:
        raise ConfigError(f"`{key}` must be at most {meta['max']}, got {value}", loc)


def _build(cls: type, node: yaml.Node, prefix: str, path: Path) -> Any:
    loc = Location(path, node.start_mark.line + 1)
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(f"`{prefix or 'frames.yaml'}` must be a mapping of settings", loc)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = key_node.value
        full = f"{prefix}.{key}" if prefix else key
        kloc = Location(path, key_node.start_mark.line + 1)
        if full in RETIRED_SETTINGS:
            warnings.warn(RetiredSetting(full, kloc), stacklevel=2)
            continue
        if key not in fields:
            known = ", ".join(sorted(fields))
            raise ConfigError(f"unknown key `{full}` (known here: {known})", kloc)
        if key in values:
            raise ConfigError(f"duplicate key `{full}`", kloc)
        tp = hints[key]
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            values[key] = _build(tp, value_node, full, path)
        else:
            values[key] = _convert(
                value_node, tp, full, dict(fields[key].metadata), Location(path, value_node.start_mark.line + 1)
            )
    built = cls(**values)
    _check_across(built, prefix, node, path, loc)
    return built


def _check_across(built: Any, prefix: str, node: yaml.MappingNode, path: Path, loc: Location) -> None:
    """The rules between the settings of one block (`prefix`, read from `node` at `loc`)."""
    if isinstance(built, LLMConfig):
        check_calls_per_process(built, loc)
    if isinstance(built, SplitConfig) and built.selection + built.test > 0.9:
        raise ConfigError(
            f"`{prefix}.selection` + `{prefix}.test` is {built.selection + built.test:g}; at most 0.9, so that cases "
            "are left to diagnose",
            loc,
        )
    if isinstance(built, EvolutionConfig):
        check_votes(built, loc)
    if isinstance(built, ColdstartConfig) and built.min_tokens > built.max_tokens:
        raise ConfigError(
            f"`{prefix}.min_tokens` {built.min_tokens} is more than `{prefix}.max_tokens` {built.max_tokens}", loc
        )
    if isinstance(built, ExecutorConfig) and built.kind == "command" and not built.command:
        raise ConfigError("`executor.command` must name your agent program when `executor.kind` is command", loc)
    if isinstance(built, FramesConfig) and built.eval.backend == "ray" and built.executor.kind != "command":
        line = next((k.start_mark.line + 1 for k, _ in node.value if k.value == "eval"), loc.line)
        raise ConfigError(
            "`eval.backend: ray` runs a command agent (`executor.kind: command`) on Ray workers; the built-in agent's "
            "model calls wait on the provider in this process (raise llm.concurrency instead)",
            Location(path, line),
        )


def check_votes(evolution: EvolutionConfig, loc: Location | None) -> None:
    """Refuse a vote threshold q above the number of diagnosers D: no skill could ever be rewritten.

    Raises:
        ConfigError: at `loc` (the `evolution` block of frames.yaml; None for a config built in code).
    """
    q, d = evolution.vote_threshold, evolution.diagnosers
    if isinstance(q, int) and q > d:
        raise ConfigError(
            f"`evolution.vote_threshold` {q} is more than `evolution.diagnosers` {d}: no skill could get enough votes",
            loc,
        )


def check_calls_per_process(llm: LLMConfig, loc: Location | None) -> None:
    """Refuse more than MAX_CALLS_PER_PROCESS calls in flight per `llm.processes` worker.

    Raises:
        ConfigError: at `loc` (the `llm` block of frames.yaml; None for a config built in code).
    """
    if llm.processes and llm.concurrency > llm.processes * MAX_CALLS_PER_PROCESS:
        need = -(-llm.concurrency // MAX_CALLS_PER_PROCESS)
        raise ConfigError(
            f"`llm.concurrency` {llm.concurrency} needs `llm.processes` of at least {need} ({MAX_CALLS_PER_PROCESS} "
            "calls in flight per worker process at most)",
            loc,
        )


def parse_config(text: str, path: Path | str = CONFIG_FILE) -> FramesConfig:
    """Parse the text of a `frames.yaml`; missing keys take their defaults, and a retired key
    (`config.RETIRED_SETTINGS`) is ignored with a `RetiredSetting` warning.

    Raises:
        ConfigError: YAML syntax error, a text too large, too deep or an alias bomb
            (formats/yamlbounds.py), unknown or duplicate key, wrong type, NaN or infinity,
            out-of-range value, a path setting outside the workspace, q above D; the message names
            `path` and the line.
    """
    path = Path(path)
    check_yaml_bounds(text, path, error=ConfigError, max_bytes=MAX_CONFIG_BYTES)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc.problem or exc}", Location(path, yaml_error_line(exc, text))) from None
    if node is None:
        return FramesConfig()
    return _build(FramesConfig, node, "", path)


def load_config(root: Path) -> FramesConfig:
    """Load `<root>/frames.yaml`, or the defaults when the file does not exist.

    Raises:
        ConfigError: the file is unreadable, not UTF-8, or invalid (see `parse_config`).
    """
    path = Path(root) / CONFIG_FILE
    if path.is_symlink() and not path.resolve().is_relative_to(Path(root).resolve()):
        raise ConfigError(
            f"is a symlink (to {os.readlink(path)}); frames reads its settings only from the workspace", Location(path)
        )
    if not path.exists():
        return FramesConfig()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", Location(path)) from None
    return parse_config(decode_utf8(data, path, error=ConfigError), path)


def yaml_scalar(value: Any) -> str:
    """A default value as one line of YAML (`null`, `[a, b]`), for frames.yaml and the settings reference."""
    if isinstance(value, list):
        return "[" + ", ".join(yaml_scalar(v) for v in value) + "]"
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("\n...").removesuffix("...").strip()


def render_config(config: FramesConfig | None = None, *, only: tuple[str, ...] | None = None) -> str:
    """Render `config` (default: the defaults) as commented YAML, each setting with its meaning.

    Args:
        config: the values to write.
        only: dotted keys (`budget.max_tokens`) to write, with their sections; None = every setting.
            `frames init` passes `TEAM_SETTINGS`; the header then points to the full reference.
    """
    config = config or FramesConfig()
    if only is None:
        lines = [
            "# frames settings. Every key is listed with its default; delete a key to use the default.",
            "# Reference: `frames init` writes this file; `frames validate` checks it.",
        ]
    else:
        lines = [
            "# frames settings: the ones a team sets first. Every other setting keeps its default;",
            f"# all of them, with their defaults and meaning, are in {SETTINGS_REFERENCE} of the frames",
            "# repository. Add a key under its section to change it; `frames validate` checks this file.",
        ]

    def wanted(key: str) -> bool:
        return only is None or any(k == key or k.startswith(key + ".") for k in only)

    def emit(obj: Any, indent: int, prefix: str) -> None:
        pad = "  " * indent
        for f in dataclasses.fields(obj):
            key = f"{prefix}{f.name}"
            if not wanted(key):
                continue
            value = getattr(obj, f.name)
            doc = f.metadata.get("doc", "")
            if dataclasses.is_dataclass(value):
                if indent == 0:
                    lines.append("")
                lines.append(f"{pad}{f.name}:  # {doc}" if doc else f"{pad}{f.name}:")
                emit(value, indent + 1, key + ".")
            else:
                lines.append(f"{pad}{f.name}: {yaml_scalar(value)}  # {doc}")

    emit(config, 0, "")
    return "\n".join(lines) + "\n"
