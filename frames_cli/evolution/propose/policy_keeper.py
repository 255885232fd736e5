"""The policy keeper: no sentence a skill holds from the policy leaves silently (issue #11 item 3).

A rewrite may not remove or change a sentence its skill held from the policy at S0 (the
back-linked span's sentences that the S0 body contains) unless the blueprint asked for exactly
that, quoting the sentence and citing cases. Each allowed removal is reported with the blueprint
line that asked. Switched by `evolution.guards.policy_sentences`; `guards.RewriteGuard` applies it
with the text guards. See docs/decisions/0025-guards-on-proposals-and-rewrites.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from frames_cli.evolution.propose.rewrite_errors import RewriteError
from frames_cli.words import overlap, sentences, token_set

if TYPE_CHECKING:
    from frames_cli.evolution.propose.consensus import Blueprint, Change
    from frames_cli.formats.skill import Skill
    from frames_cli.formats.skill_set import SkillSet

#: Policy sentences with fewer content words than this are headings or labels ("Refund:"), not rules;
#: a list item is kept whatever its length ("- date of birth" is one field of the profile's list).
MIN_RULE_WORDS = 3
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")
#: A sentence of the rewrite that holds this share of a removed policy sentence's words (both ways)
#: is the same rule reworded: reported as "changed" rather than "removed".
CHANGED_OVERLAP = 0.6

_MARKUP = re.compile(r"[*_`]+")


def _norm(text: str) -> str:
    """Text as compared: Markdown emphasis and code marks out, whitespace collapsed, case-folded,
    trailing sentence punctuation dropped (rewrapping a line or bulleting it keeps a sentence)."""
    return " ".join(_MARKUP.sub("", text).split()).casefold().rstrip(".;:!? ")


def holds(body: str, sentence: str) -> bool:
    """Whether `body` contains `sentence` word for word (up to markup, wrapping, case and end punctuation)."""
    wanted = _norm(sentence)
    return any(wanted in _norm(part) for part in [" ".join(sentences(body)), *sentences(body)])


def _items(body: str) -> set[str]:
    """The list items of a body, compared as `_norm` compares sentences."""
    return {_norm(m.group(1)) for m in map(_LIST_ITEM.match, body.splitlines()) if m}


def _joined_sentences(span: str) -> list[str]:
    """The sentences of a policy span, a short one (fewer than MIN_RULE_WORDS content words, ending
    in punctuation) joined to the sentence before it on the same line: "... send the message 'YOU
    ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.' to the user." is one rule, and a
    rewrite that cuts its tail changes it (alone, the tail would be too short to keep)."""
    out: list[str] = []
    for sentence in sentences(span):
        if (out and len(token_set(sentence)) < MIN_RULE_WORDS and sentence[-1:] in ".!?'\""
                and re.search(re.escape(out[-1]) + r"[ \t]+" + re.escape(sentence), span)):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


@dataclass(frozen=True)
class PolicySentence:
    """A sentence a skill holds from the policy: its text and the back-link span it came from.

    `item`: a short list item of the policy ("date of birth"), held as a list item of its own, since
    its words alone occur all over a body."""

    text: str
    source: str  # "policies/airline.md:133-152"
    item: bool = False

    def held_by(self, body: str) -> bool:
        """Whether `body` still holds this sentence (`holds`; a short item as one of its list items)."""
        return _norm(self.text) in _items(body) if self.item else holds(body, self.text)


@dataclass(frozen=True)
class PolicyChange:
    """A policy sentence a rewrite removed or changed, and the blueprint change that asked for it."""

    skill: str
    sentence: str
    source: str
    kind: str  # "removed" | "changed"
    asked_by: str
    case_ids: tuple[str, ...]

    def to_json(self) -> dict:
        """Plain JSON for the run state and the review."""
        return {**vars(self), "case_ids": list(self.case_ids)}


@dataclass
class PolicyKeeper:
    """The policy sentences each S0 skill holds (back-linked text, as of S0), and the check of a rewrite.

    Attributes:
        kept: skill name → the policy sentences its S0 body holds, in body order.
    """

    kept: dict[str, list[PolicySentence]] = field(default_factory=dict)

    @classmethod
    def build(cls, s0: SkillSet, policy_files: Mapping[str, bytes]) -> PolicyKeeper:
        """For every S0 skill, the sentences of its back-linked policy spans that its body holds.

        Args:
            s0: the base commit's skills.
            policy_files: workspace-relative path ("policies/airline.md") → bytes at the base commit;
                a back-link to a file not in it contributes nothing.
        """
        keeper = cls()
        for skill in s0.values():
            found: list[PolicySentence] = []
            for link in skill.backlinks:
                data = policy_files.get(link.file)
                if data is None:
                    continue
                span = "\n".join(data.decode("utf-8", errors="replace").splitlines()[link.start - 1 : link.end])
                source = f"{link.file}:{link.start}-{link.end}"
                candidates = [
                    PolicySentence(s, source) for s in _joined_sentences(span) if len(token_set(s)) >= MIN_RULE_WORDS
                ]
                candidates += [
                    PolicySentence(m.group(1), source, item=True)
                    for m in map(_LIST_ITEM.match, span.splitlines())
                    if m and 0 < len(token_set(m.group(1))) < MIN_RULE_WORDS
                ]
                for ps in candidates:
                    if ps.held_by(skill.body) and all(p.text != ps.text for p in found):
                        found.append(ps)
            if found:
                keeper.kept[skill.name] = found
        return keeper

    def check(
        self, parent: Skill | None, body: str, blueprint: Blueprint
    ) -> tuple[list[RewriteError], list[PolicyChange]]:
        """Check one rewrite of `parent` (the parent's skill; None for a new skill) into `body`.

        Only sentences the parent still holds are checked (one removed earlier, as a blueprint asked,
        is not asked for again). A sentence the new body no longer holds is allowed when a change of
        the blueprint quotes it, asks to remove or reword it, and cites at least one case; otherwise
        it is an error naming the sentence and its source.

        Returns:
            (errors, allowed changes): errors for the rewriter's retry; the allowed removals or
            rewordings, each with the blueprint line that asked.
        """
        if parent is None:
            return [], []
        from frames_cli.evolution.propose.rewrite import skill_path

        errors: list[RewriteError] = []
        changes: list[PolicyChange] = []
        new_sentences = sentences(body)
        for ps in self.kept.get(parent.name, []):
            if not ps.held_by(parent.body) or ps.held_by(body):
                continue
            reworded = any(min(overlap(ps.text, s), overlap(s, ps.text)) >= CHANGED_OVERLAP for s in new_sentences)
            kind = "changed" if reworded else "removed"
            asking = next((c for c in blueprint.changes if c.case_ids and _asks_for(c, ps.text)), None)
            if asking is None:
                errors.append(RewriteError(
                    "policy-sentence",
                    f"{kind} the policy sentence {ps.text!r} ({ps.source}): a sentence from the policy must stay word "
                    "for word unless the blueprint asks for exactly that change, quoting it; put it back",
                    skill_path(parent.name), text=ps.text,
                ))
            else:
                changes.append(
                    PolicyChange(parent.name, ps.text, ps.source, kind, asking.change, tuple(asking.case_ids))
                )
        return errors, changes


# What a change must say to be a request to remove or reword a sentence (beyond quoting it).
_EDIT_VERB = re.compile(
    r"\b(remov|delet|drop|replac|reword|rewrit|chang|correct|amend|narrow|relax|weaken)\w*", re.IGNORECASE
)


def _asks_for(change: Change, sentence: str) -> bool:
    """Whether a blueprint change asks to edit `sentence`: its words, outside the rules it adds,
    quote the sentence word for word and say to remove, replace or reword it (a change whose rule
    restates a policy sentence does not ask to remove it, whatever verbs the rule uses)."""
    words = change.change
    for rule in change.rules:
        words = words.replace(rule, " ")
    return _norm(sentence) in _norm(words) and _EDIT_VERB.search(words) is not None
