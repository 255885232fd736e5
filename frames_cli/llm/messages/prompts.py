"""Prompt templates (`llm/messages/prompts/<name>.txt`) and `render(name, **vars)`.

Templates use `str.format` fields: `{var}` is replaced, `{{`/`}}` are literal braces. Values are
inserted once (never re-parsed), so braces inside skill text or JSON are safe. Every value is data:
its prompt structure tags are escaped (`sanitize.escape_tags`), except a `Block`, the structure
frames itself built around data it escaped already.
"""

from __future__ import annotations

import functools
from importlib import resources

from frames_cli.sanitize import escape_tags


class Block(str):
    """Prompt structure frames built (`<skill ...>` blocks, the retrieved block, answer formats):
    `render` inserts it as it is. Whoever makes one escapes the data inside it."""


@functools.cache
def _template(name: str) -> str:
    path = resources.files("frames_cli.llm.messages").joinpath("prompts", f"{name}.txt")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"no prompt template {name!r}; known: {', '.join(template_names())}") from None


def template_names() -> list[str]:
    """Names of the packaged templates (file names without `.txt`), sorted."""
    folder = resources.files("frames_cli.llm.messages").joinpath("prompts")
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


def render(name: str, /, **variables: object) -> str:
    """The template `name` with its `{fields}` filled from `variables` (`name` is positional-only,
    so a template may itself use a `{name}` field); structure tags in values other than a `Block`
    are escaped.

    Raises:
        ValueError: no template of that name, or a field the template uses was not given.
    """
    try:
        return _template(name).format(
            **{k: v if isinstance(v, Block) else escape_tags(str(v)) for k, v in variables.items()}
        )
    except KeyError as exc:
        raise ValueError(f"prompt template {name!r} needs the variable {exc.args[0]!r}") from None
