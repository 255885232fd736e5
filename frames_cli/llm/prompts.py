"""Prompt templates (`llm/prompts/<name>.txt`) and `render(name, **vars)`.

Templates use `str.format` fields: `{var}` is replaced, `{{`/`}}` are literal braces. Values are
inserted as they are (never re-parsed), so braces inside skill text or JSON are safe.
"""

from __future__ import annotations

import functools
from importlib import resources


@functools.lru_cache(maxsize=None)
def _template(name: str) -> str:
    path = resources.files("frames_cli.llm").joinpath("prompts", f"{name}.txt")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"no prompt template {name!r}; known: {', '.join(template_names())}") from None


def template_names() -> list[str]:
    """Names of the packaged templates (file names without `.txt`), sorted."""
    folder = resources.files("frames_cli.llm").joinpath("prompts")
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


def render(name: str, /, **variables: object) -> str:
    """The template `name` with its `{fields}` filled from `variables` (`name` is positional-only,
    so a template may itself use a `{name}` field).

    Raises:
        ValueError: no template of that name, or a field the template uses was not given.
    """
    try:
        return _template(name).format(**variables)
    except KeyError as exc:
        raise ValueError(f"prompt template {name!r} needs the variable {exc.args[0]!r}") from None
