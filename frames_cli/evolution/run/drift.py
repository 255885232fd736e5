"""What evolve's S0 leaves out: skills of the base commit that do not load, and uncommitted skill edits."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from frames_cli.evolution.state.run_warnings import SkillsDrift, SkillsLeftOut
from frames_cli.formats.skill import SKILL_FILE, SKILLS_DIR
from frames_cli.formats.skill_set import SkillSet

if TYPE_CHECKING:
    from frames_cli.workspace.layout import Workspace


def base_warnings(ws: Workspace, base_files: Mapping[str, bytes], base: str) -> list[SkillsLeftOut | SkillsDrift]:
    """One warning per thing a user must hear before a run on `base` starts (empty when none).

    - Skill files of the base commit that do not load: the run leaves them out of S0 (and keeps
      them in every candidate commit unchanged), it does not refuse the whole set.
    - `skills/` in the working tree differs from the base commit: evolve reads S0 from the commit,
      so an uncommitted edit, a new skill not yet added, or a deleted one is not part of the run.

    Args:
        base_files: `{"skills/<name>/SKILL.md": bytes, ...}` of the base commit (GitStore.read_files).
        base: the base commit's sha (shown shortened).
    """
    out: list[SkillsLeftOut | SkillsDrift] = []
    skills, dropped = SkillSet.load_valid(base_files, base=Path(f"{base[:12]}:"))
    if dropped:
        out.append(SkillsLeftOut(tuple(dropped), len(skills)))
    drift = skills_drift(base_files, SkillSet.read_dir(ws.skills_dir))
    if drift:
        out.append(SkillsDrift(base, tuple(drift)))
    return out


def skills_drift(base_files: Mapping[str, bytes], tree_files: Mapping[str, bytes]) -> list[str]:
    """How the working tree's SKILL.md files differ from the base commit's, one phrase per kind.

    Both maps are `{"skills/<folder>/SKILL.md": bytes}`; other files of a skill folder are not
    compared (evolve reads only SKILL.md). Returns phrases such as "edited: a, b", "not committed: c",
    "deleted: d"; empty when the two agree byte for byte.
    """
    base = {folder: data for p, data in base_files.items() if (folder := _folder(p))}
    tree = {folder: data for p, data in tree_files.items() if (folder := _folder(p))}
    kinds = (
        ("edited", sorted(n for n in base.keys() & tree.keys() if base[n] != tree[n])),
        ("not committed", sorted(tree.keys() - base.keys())),
        ("deleted", sorted(base.keys() - tree.keys())),
    )
    return [f"{kind}: {', '.join(names)}" for kind, names in kinds if names]


def _folder(path: str) -> str | None:
    parts = path.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == SKILLS_DIR and parts[2] == SKILL_FILE else None
