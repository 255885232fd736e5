"""The skill catalog the built-in agent sees first: its size, then one `id: name — description` line per skill;
and the skills it is given without asking (rules for every task of their policy)."""

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
#: The tag coldstart gives a policy's preamble that states rules for the sections after it
#: (`coldstart.describe.general_rules`): such a skill is given to the agent with every case.
GENERAL_TAG = "general-rules"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Catalog:
    """Short, stable ids for the skills of one set.

    An id is "s" + the first 4 hex digits of sha256(name), longer only where two names of the set
    share those digits: a skill keeps its id when others are added, removed or rewritten, so
    prompts (and cached answers) change only where the skills did.

    Skills tagged `general-rules` are *given*: shown in full before the listing on the first turn
    (`given_text`) and not listed, so every case reads them and none spends a load on them. A model
    that sees "rules for every request" in a listing loads that skill first (99 of 100 first turns
    of the recorded real-model airline run), which costs a load and pushes the task's own skill
    second (decision 0099).
    """

    skills: SkillSet
    ids: dict[str, str]  # id -> skill name, every skill of the set

    @classmethod
    def of(cls, skills: SkillSet) -> Catalog:
        """The catalog of `skills`: given skills first, then procedures, then skills tagged
        `reference` (definitions, scope, roles: looked up, not followed), each group in the set's
        order (by name)."""
        names = sorted(skills, key=lambda n: (GENERAL_TAG not in skills[n].tags, REFERENCE_TAG in skills[n].tags))
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

    @property
    def given(self) -> list[str]:
        """Ids of the skills given with every case (tagged `general-rules`), in catalog order."""
        return [sid for sid, name in self.ids.items() if GENERAL_TAG in self.skills[name].tags]

    @property
    def listed(self) -> dict[str, str]:
        """Id → name of the skills the listing shows (every skill that is not given), in catalog order."""
        given = set(self.given)
        return {sid: name for sid, name in self.ids.items() if sid not in given}

    def text(self) -> str:
        """The listing as shown to the agent: a count line, then `- id: name — description` lines,
        one per listed skill."""
        lines = [f"{len(self.listed)} skills available:"]
        lines += [f"- {sid}: {self.skills[name].summary()}" for sid, name in self.listed.items()]
        return "\n".join(lines)

    def given_text(self) -> Block:
        """What the first turn shows before the listing: the given skills' blocks under a line that
        says they hold rules for every task of their policy and are loaded already, then a blank
        line; "" when no skill is given (the first turn is then as it was before decision 0099)."""
        if not self.given:
            return Block("")
        blocks = "\n\n".join(self.block(sid) for sid in self.given)
        return Block(f"Rules for every task of their policy, loaded already (do not ask for them):\n\n{blocks}\n\n")

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
