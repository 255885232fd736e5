"""The skill catalog the built-in agent sees first: its size, then one `id: name — description` line per skill."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from frames_cli.formats.skill import Skill
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.messages.prompts import Block
from frames_cli.sanitize import escape_tags

ID_DIGITS = 4
#: The tag coldstart gives boilerplate and reference sections.
REFERENCE_TAG = "reference"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Catalog:
    """Short, stable ids for the skills of one set.

    An id is "s" + the first 4 hex digits of sha256(name), longer only where two names of the set
    share those digits: a skill keeps its id when others are added, removed or rewritten, so
    prompts (and cached answers) change only where the skills did.
    """

    skills: SkillSet
    ids: dict[str, str]  # id -> skill name

    @classmethod
    def of(cls, skills: SkillSet) -> Catalog:
        """The catalog of `skills`: procedures first, then skills tagged `reference` (definitions,
        scope, roles: looked up, not followed), each group in the set's order (by name)."""
        names = sorted(skills, key=lambda n: REFERENCE_TAG in skills[n].tags)
        digests = {name: _digest(name) for name in names}
        ids: dict[str, str] = {}
        for name, digest in digests.items():
            width = ID_DIGITS
            while any(other != name and d[:width] == digest[:width] for other, d in digests.items()):
                width += 1
            ids[f"s{digest[:width]}"] = name
        return cls(skills, ids)

    def id_of(self, name: str) -> str:
        """The id of skill `name` (KeyError if not in the set)."""
        return next(i for i, n in self.ids.items() if n == name)

    def text(self) -> str:
        """The catalog as shown to the agent: a count line, then `- id: name — description` lines."""
        lines = [f"{len(self.ids)} skills available:"]
        lines += [f"- {sid}: {self.skills[name].summary()}" for sid, name in self.ids.items()]
        return "\n".join(lines)

    def resolve(self, requested: Iterable[str]) -> tuple[list[str], list[str]]:
        """Split requested ids into (known ids, unknown ones), each de-duplicated in order."""
        known: list[str] = []
        unknown: list[str] = []
        for sid in dict.fromkeys(str(r).strip() for r in requested):
            (known if sid in self.ids else unknown).append(sid)
        return known, unknown

    def names(self, used: Iterable[object]) -> list[str]:
        """Skill names from what an agent reports as used: names or ids; unknown entries dropped."""
        out = []
        for item in used:
            item = str(item).strip()
            name = self.ids.get(item, item)
            if name in self.skills and name not in out:
                out.append(name)
        return out

    def block(self, sid: str) -> Block:
        """The skill as the agent reads it: `<skill id=".." name="..">` body `</skill>`, structure
        tags in the body escaped (a body cannot close its block or open another)."""
        skill: Skill = self.skills[self.ids[sid]]
        return Block(f'<skill id="{sid}" name="{skill.name}">\n{escape_tags(skill.body.strip())}\n</skill>')
