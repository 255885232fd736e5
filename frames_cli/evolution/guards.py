"""Guards on what evolution may write: no case facts as rules, no policy sentence dropped silently.

Two checks, each switched by `evolution.guards.*` in frames.yaml (docs/DECISIONS.md 2026-12-01):

- `CaseValues` (`case_values`): a proposed rule, or a line a rewrite adds, may not carry a value that
  a case's record holds (a reservation or order id, a person's name, a place, an amount, a date or
  time, written as digits or in words, from that case's input, expected answer or evidence). Such a
  line is a fact of that case: it cannot help an unseen case, and a reviewer rejects it. A value
  held by a few cases is still instance data (in τ², one user's reservation ids appear in every task
  of that user), so "one case" is not required. Values and words the policy itself states are rule
  values and always allowed. Nor may a rule read as a sentence whose values were cut out ("The total
  cost is between and.", `casevalues.stub`): a reviewer cannot merge it and no reader can follow it.
- `PolicyKeeper` (`policy_sentences`): a rewrite may not remove or change a sentence its skill held
  from the policy at S0 (the back-linked span's sentences that the S0 body contains) unless the
  blueprint asked for exactly that, quoting the sentence and citing cases. Each allowed removal is
  reported with the blueprint line that asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from frames_cli.casevalues import TOKEN, case_texts, case_values, is_rule_word, phrases, policy_values, stub, value_of, values_in
from frames_cli.ingest.text import overlap, sentences, token_set
from frames_cli.secretscan import REDACTED, find_secrets

if TYPE_CHECKING:
    from frames_cli.evolution.consensus import Blueprint
    from frames_cli.evolution.diagnose import DiagnoserResult
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill import Skill
    from frames_cli.formats.skill_set import SkillSet

#: Policy sentences with fewer content words than this are headings or labels ("Refund:"), not rules;
#: a list item is kept whatever its length ("- date of birth" is one field of the profile's list).
MIN_RULE_WORDS = 3
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")
#: A sentence of the rewrite that holds this share of a removed policy sentence's words (both ways)
#: is the same rule reworded: reported as "changed" rather than "removed".
CHANGED_OVERLAP = 0.6


@dataclass(frozen=True)
class Hit:
    """One case value found in a text: the value as written there and the cases whose records hold it."""

    value: str
    case_ids: tuple[str, ...]


@dataclass
class CaseValues:
    """Which cases hold which values: the index the case-value guard checks rule text against.

    Attributes:
        holders: normalised value → ids of the cases whose record holds it (input text and fields,
            expected answer, diagnosis record; written-out dates and times included).
        names: proper nouns (person names, places, codes, as written; `casevalues.case_values`) →
            ids of the cases holding them.
        policy: values the policy text states and its words, case-folded; never flagged.
        secret: values that lie inside a credential in a case's text (secretscan): still flagged,
            but named `[REDACTED]` in every reason. Cut out of its context ("aws_secret_access_key
            = …"), such a value no longer looks like a credential to the scanner that redacts
            what frames writes, so the reason must not print it.
    """

    holders: dict[str, set[str]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)
    policy: set[str] = field(default_factory=set)
    secret: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, cases: Iterable[Case], policy_texts: Iterable[str] = ()) -> CaseValues:
        """Index `cases` (everything a case holds: input, expected, diagnosis) and the policy texts."""
        index = cls()
        for case in cases:
            for _key, text in case_texts(case):
                index.secret |= {v for hit in find_secrets(text) for v in values_in(text[hit.start:hit.end])}
            values, names = case_values(case)
            for value in values:
                index.holders.setdefault(value, set()).add(case.id)
            for word in names:
                index.names.setdefault(word, set()).add(case.id)
        index.policy = policy_values(policy_texts)
        return index

    def specific(self, text: str) -> list[Hit]:
        """The values of `text` that some case holds and the policy does not state, in text order."""
        found: list[tuple[int, Hit]] = []
        covered: list[tuple[int, int]] = []
        for match, value in phrases(text):
            covered.append(match.span())
            holders = self.holders.get(value, set())
            if holders and value not in self.policy:
                found.append((match.start(), Hit(match.group(0).strip(), tuple(sorted(holders)))))
        for match in TOKEN.finditer(text):
            if any(a <= match.start() < b for a, b in covered):
                continue  # the "17" of "May 17" is part of the date
            token = match.group(0)
            value = value_of(token)
            if value is not None:
                holders = self.holders.get(value, set()) if value not in self.policy else set()
            else:
                holders = self.names.get(token, set()) if not is_rule_word(token, self.policy) else set()
            if holders:
                found.append((match.start(), Hit(token, tuple(sorted(holders)))))
        hits: list[Hit] = []
        for _, hit in sorted(found, key=lambda f: f[0]):
            if hit not in hits:
                hits.append(hit)
        return hits

    def reason(self, hits: Sequence[Hit]) -> str:
        """One line naming the values and their cases, for people and for the model's retry."""
        def held(ids: tuple[str, ...]) -> str:
            shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
            return f"case {shown}" if len(ids) == 1 else f"cases {shown}"

        def shown(token: str) -> str:
            return REDACTED if value_of(token) in self.secret else token

        found = ", ".join(f"`{shown(h.value)}` (from {held(h.case_ids)})" for h in hits)
        return f"carries a case value: {found}; a rule must hold for every case of its kind"


_QUOTED = re.compile(r'"([^"\n]+)"')


def stub_reason(text: str) -> str | None:
    """Why `text` is no rule because its values were cut out (`casevalues.stub`), or None.

    When `text` quotes rule text (`Add the rule: "..."`), only the quoted rules are read: the words
    around them are an instruction to the rewriter, not skill text.
    """
    quoted = _QUOTED.findall(text)
    # A quoted rule that ends in a colon lost what followed it ("Agent uses the payment id:").
    words = next((w for w in (stub(q) or (q[-1] if q.endswith(":") else None) for q in quoted) if w is not None), None) if quoted else stub(text)
    return None if words is None else f"reads as a sentence with its values cut out ({words!r}): a rule must say what to do in words that hold for every case of its kind"


def guard_proposals(results: Sequence[DiagnoserResult], values: CaseValues) -> list[str]:
    """Drop every proposal whose rule text (its change, and a new skill's description) carries a
    value some case holds, or reads as a sentence with its values cut out (`stub_reason`); the reason
    goes to the diagnoser result's `dropped`, as other drops do.

    Mutates `results` in place (their `proposals` and `dropped`).

    Returns:
        The lines added to `dropped`, in diagnoser order (for the round's record and the review).
    """
    lines: list[str] = []
    for result in results:
        kept = []
        for p in result.proposals:
            text = f"{p.change}\n{p.description}"
            hits = values.specific(text)
            why = values.reason(hits) if hits else stub_reason(text)
            if why is None:
                kept.append(p)
                continue
            line = f"proposal {p.position} for `{p.skill}` (diagnoser {p.diagnoser}): {why}"
            result.dropped.append(line)
            lines.append(line)
        result.proposals = kept
    return lines


def added_line_errors(original: Skill | None, body: str, values: CaseValues) -> list[str]:
    """Errors for the lines a rewrite adds (lines not in the original body) that carry a case value
    or read as a sentence with its values cut out."""
    before = set(original.body.splitlines()) if original is not None else set()
    errors = []
    for line in body.splitlines():
        if line in before or not line.strip():
            continue
        hits = values.specific(line)
        why = values.reason(hits) if hits else stub_reason(line)
        if why is not None:
            errors.append(f"the added line {line.strip()!r} {why}; state the rule in general terms")
    return errors


# --- policy sentences ----------------------------------------------------------------------------

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
                candidates = [PolicySentence(s, source) for s in sentences(span) if len(token_set(s)) >= MIN_RULE_WORDS]
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

    def check(self, parent: Skill | None, body: str, blueprint: Blueprint) -> tuple[list[str], list[PolicyChange]]:
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
        errors: list[str] = []
        changes: list[PolicyChange] = []
        new_sentences = sentences(body)
        for ps in self.kept.get(parent.name, []):
            if not ps.held_by(parent.body) or ps.held_by(body):
                continue
            reworded = any(min(overlap(ps.text, s), overlap(s, ps.text)) >= CHANGED_OVERLAP for s in new_sentences)
            kind = "changed" if reworded else "removed"
            asking = next((c for c in blueprint.changes if c.case_ids and _asks_for(c.change, ps.text)), None)
            if asking is None:
                errors.append(
                    f"{kind} the policy sentence {ps.text!r} ({ps.source}): a sentence from the policy must stay word for "
                    "word unless the blueprint asks for exactly that change, quoting it; put it back"
                )
            else:
                changes.append(PolicyChange(parent.name, ps.text, ps.source, kind, asking.change, tuple(asking.case_ids)))
        return errors, changes


# What a change must say to be a request to remove or reword a sentence (beyond quoting it).
_EDIT_VERB = re.compile(r"\b(remov|delet|drop|replac|reword|rewrit|chang|correct|amend|narrow|relax|weaken)\w*", re.IGNORECASE)


def _asks_for(change: str, sentence: str) -> bool:
    """Whether a blueprint change asks to edit `sentence`: it quotes the sentence word for word and
    says to remove, replace or reword it ('Add the rule: "<policy sentence>"' does not)."""
    return _norm(sentence) in _norm(change) and _EDIT_VERB.search(change) is not None


@dataclass
class RewriteGuard:
    """The guards a rewrite passes after `rewrite.validate_rewrite`; each is None when switched off.

    Attributes:
        keeper: policy sentences of S0 (`evolution.guards.policy_sentences`).
        values: the case-value index (`evolution.guards.case_values`), applied to added lines.
    """

    keeper: PolicyKeeper | None = None
    values: CaseValues | None = None

    def check(self, parent: Skill | None, body: str, blueprint: Blueprint) -> tuple[list[str], list[PolicyChange]]:
        """(errors, allowed policy changes) of one rewrite of `parent` into `body`; see the two guards."""
        errors: list[str] = []
        changes: list[PolicyChange] = []
        if self.keeper is not None:
            errors, changes = self.keeper.check(parent, body, blueprint)
        if self.values is not None:
            errors += added_line_errors(parent, body, self.values)
        return errors, changes
