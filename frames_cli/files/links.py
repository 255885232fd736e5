"""Nothing outside the workspace is read or written through a symlink: the one check every reader uses."""

from __future__ import annotations

import os
from pathlib import Path

from frames_cli.errors import InputError, Location


def first_symlink(root: Path, path: Path) -> Path | None:
    """The first symlink among the components of `path` below `root` (`path` itself included)
    that leads outside `root`, or None. `path` is `root / relative`; `root` itself may lie behind
    links (macOS /tmp). A link that stays inside (a monorepo's shared policy folder) is allowed."""
    root, path = Path(root), Path(path)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink() and not current.resolve().is_relative_to(root.resolve()):
            return current
    return None


def refuse_symlink(root: Path, path: Path, shown: Path | str | None = None) -> None:
    """Refuse `path` when it, or a folder between `root` and it, is a symlink leading outside `root`.

    A link can point anywhere (another user's file, a secret, /dev/zero), so frames follows none:
    a policy or case read through one would be cut into skills or sent to a model, a state folder
    written through one would write outside the workspace.

    Raises:
        InputError: naming the link and its target (exit 2); `shown` is how the link's path is shown.
    """
    link = first_symlink(root, path)
    if link is None:
        return
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    name = shown if shown is not None and link == Path(path) else link.relative_to(root).as_posix()
    raise InputError(
        f"is a symlink (to {target}); frames reads and writes nothing through a symlink: put the file or folder "
        "itself here",
        Location(name),
    )
