"""The case-value index (`CaseValues`): what the cases hold, and the checks that read a text against it.

The proposal and rewrite guards (evolution/propose/guards.py) ask it why a text may not become skill
text (docs/decisions/0025-guards-on-proposals-and-rewrites.md):

- case values (`evolution.guards.case_values`): a proposed rule, or a line a rewrite adds, may not carry a value that
  a case's record holds (a reservation or order id, a person's name, a place, an amount, a date or
  time, written as digits or in words, from that case's input, expected answer or evidence). Such a
  line is a fact of that case: it cannot help an unseen case, and a reviewer rejects it. A value
  held by a few cases is still instance data (in τ², one user's reservation ids appear in every task
  of that user), so "one case" is not required. Values and words the policy itself states are rule
  values and always allowed. Nor may a rule read as a sentence whose values were cut out ("The total
  cost is between and.", `grammar.cut_value`): a reviewer cannot merge it and no reader can follow it.
- rule form (`evolution.guards.rule_form`), also in `CaseValues.findings`: a proposed rule, or an
  added line, that is not a rule for the agent: a note to a grader ("Check that agent refunds ..."),
  a description of a case's user ("Also user is not a native speaker.", `ruleform.not_a_rule`), or a
  case's evaluator note copied with its values cut out ("Agent update reservation to economy." from
  "Agent update reservation OWZ4XL to economy."; `CaseValues.copied_note`). A proposal must also be
  whole sentences (`grammar.fragment`), no story (`grammar.narrates`), no evaluator's assertion
  ("Agent should not make any changes.", `ruleform.evaluator_assertion`), no statement of one case's
  facts ("The agent identifies that user is not a Gold member ...", `ruleform.case_fact`), and about its failure and
  the policy (`CaseValues.ungrounded`); measured on real text by bench/guards.py (issue 27).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from frames_cli.casevalues import (
    TOKEN,
    case_texts,
    case_values,
    holds_value,
    is_rule_word,
    name_phrases,
    phrases,
    policy_values,
    value_of,
    values_in,
    without_values,
)
from frames_cli.grammar import content_words, cut_value, fragment, narrates
from frames_cli.ruleform import case_fact, evaluator_assertion, first_non_rule, note_sentences
from frames_cli.secretscan import REDACTED, find_secrets
from frames_cli.words import sentences, token_set

if TYPE_CHECKING:
    from frames_cli.formats.case import Case

#: An evaluator note with fewer content words than this, once its values are out, is no text a
#: rule could copy.
MIN_RULE_WORDS = 3
#: A rule sentence and a case's evaluator note (each with its values out) that share at least this
#: share of the larger one's content words are one text: the rule copies the note.
NOTE_OVERLAP = 0.8
#: The guards `CaseValues.findings` applies, in the order it applies them (bench/guards.py reports
#: each).
GUARD_NAMES = (
    "case values", "stub", "fragment", "narrative", "rule form", "evaluator's note", "case fact", "copied note",
    "off the failure", "not in the policy",
)
#: A proposed rule at least this share of whose content words (`grammar.content_words`) neither
#: the policy nor the cases it cites use is about something else: a style rule no policy states
#: ("Use a friendly and professional tone throughout.": 0.0 of 3) or one written for the grader
#: ("… write it as plain digits with no thousands separators or commas.": 0.3 of 10). The
#: real-model trials' rules of the tune part use 0.62 or more (bench/guards.py).
GROUNDED_SHARE = 0.55
#: Values named per reason at most; the rest are counted ("and 27 more values").
MAX_NAMED_VALUES = 5


@dataclass(frozen=True)
class Note:
    """A sentence of a case's evidence that is a fact of that case, not a rule: one that carries a
    value of the case, or a sentence of an evaluator's note that states no obligation
    (`ruleform.note_sentences`). Its content words with the values cut out, as a copy would read."""

    words: frozenset[str]
    text: str
    case_id: str


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
        notes: the evidence sentences that are facts of their case (`Note`), for `copied_note`.
        policy_words: the policy texts' words (`words.token_set`), for `ungrounded`.
        case_words: case id → the words of everything its record holds, for `ungrounded`.
        check_values: `why_not` refuses case values and stubs (`evolution.guards.case_values`).
        check_form: `why_not` refuses what is not a rule for the agent (`evolution.guards.rule_form`).
    """

    holders: dict[str, set[str]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)
    policy: set[str] = field(default_factory=set)
    secret: set[str] = field(default_factory=set)
    notes: list[Note] = field(default_factory=list)
    policy_words: frozenset[str] = frozenset()
    case_words: dict[str, frozenset[str]] = field(default_factory=dict)
    check_values: bool = True
    check_form: bool = True

    @classmethod
    def build(
        cls, cases: Iterable[Case], policy_texts: Iterable[str] = (), *, check_values: bool = True,
        check_form: bool = True,
    ) -> CaseValues:
        """Index `cases` (everything a case holds: input, expected, diagnosis) and the policy texts."""
        texts = list(policy_texts)
        index = cls(policy=policy_values(texts), check_values=check_values, check_form=check_form)
        index.policy_words = frozenset().union(*(_words(t) for t in texts))
        for case in cases:
            index.case_words[case.id] = frozenset().union(*(_words(t) for _k, t in case_texts(case)))
            for _key, text in case_texts(case):
                index.secret |= {v for hit in find_secrets(text) for v in values_in(text[hit.start:hit.end])}
            values, names = case_values(case)
            for value in values:
                index.holders.setdefault(value, set()).add(case.id)
            for word in names:
                index.names.setdefault(word, set()).add(case.id)
            drop = values - index.policy
            own = {n for n in names if not is_rule_word(n, index.policy)}
            for item in case.diagnosis.evidence:
                rules, other = note_sentences(item)
                # A note's sentences that describe the case, and every sentence that carries a value
                # of it: a rule that copies one, values cut out or not, is no rule.
                for sentence in [*other, *(s for s in rules if holds_value(s, drop, own))]:
                    words = token_set(without_values(sentence, drop, own))
                    if len(words) >= MIN_RULE_WORDS:
                        index.notes.append(Note(words, sentence, case.id))
        return index

    def copied_note(self, text: str) -> tuple[str, Note] | None:
        """(sentence of `text`, note) for the first sentence that copies a case's evaluator note with
        its values cut out: both share at least NOTE_OVERLAP of the larger one's content words. A
        general rule says more, or other things, than one case's note: it does not match."""
        for sentence in sentences(text):
            words = token_set(sentence)
            if len(words) < MIN_RULE_WORDS:
                continue
            for note in self.notes:
                if len(words & note.words) >= NOTE_OVERLAP * max(len(words), len(note.words)):
                    return sentence, note
        return None

    def why_not(
        self, text: str, skill: str | None = None, cases: Sequence[str] = (), rules: Sequence[str] = ()
    ) -> str | None:
        """Why `text` (a proposal's words or an added line) may not become skill text, or None: the
        reason of the first guard that refuses it (`findings`)."""
        found = self.findings(text, skill, cases, rules)
        return found[0][1] if found else None

    def findings(
        self, text: str, skill: str | None = None, cases: Sequence[str] = (), rules: Sequence[str] = ()
    ) -> list[tuple[str, str]]:
        """(guard, reason) for every guard of GUARD_NAMES that refuses `text`, in that order.

        As switched on: a case value (`specific`), a stub (`stub_reason`), a sentence that is not a
        rule for the agent (`ruleform.not_a_rule`), a case's evaluator note copied with its values
        cut out (`copied_note`). A proposal (`skill` given: the skill it is for, `cases` the case
        ids it cites) must also be whole sentences (`grammar.fragment`), not a story
        (`grammar.narrates`), and about its failure and the policy (`ungrounded`); a line a rewrite
        adds is not held to these (it may be a heading, a list item or a table row). When `rules`
        (the sentences a proposal adds, `Proposal.rules`) are given, only they are read as rules;
        values are looked for in `text` and `rules` alike.
        """
        out = self._value_findings(text, rules) if self.check_values else []
        if not self.check_form:
            return out
        rules = list(rules) or [text]
        proposal = skill is not None
        if proposal:
            out += _sentence_findings(rules)
        joined = " ".join(rules)
        out += self._form_findings(joined, proposal)
        if proposal:
            out += self.ungrounded(joined, cases)
        return out

    def _value_findings(self, text: str, rules: Sequence[str]) -> list[tuple[str, str]]:
        """The case values of `text` and `rules`, and whether they are a stub (`stub_reason`)."""
        out = []
        hits = self.specific("\n".join(dict.fromkeys([text, *rules])))
        if hits:
            out.append(("case values", self.reason(hits)))
        why = stub_reason(text, rules)
        if why is not None:
            out.append(("stub", why))
        return out

    def _form_findings(self, joined: str, proposal: bool) -> list[tuple[str, str]]:
        """A sentence of the rules `joined` that is no rule for the agent, an evaluator's assertion (in
        a proposal) and a case's evaluator note copied."""
        out = []
        found = first_non_rule(joined)
        if found is not None:
            out.append(("rule form", f"is not a rule: {found[0]!r} {found[1]}"))
        if proposal:
            out += _case_findings(joined)
        copied = self.copied_note(joined)
        if copied is not None:
            sentence, note = copied
            out.append(
                (
                    "copied note",
                    f"is not a rule: {sentence!r} copies the evaluator's note on case {note.case_id} ({note.text!r}), "
                    "a fact of that case; a rule must say what to do in words that hold for every case of its kind",
                )
            )
        return out

    def ungrounded(self, rule: str, cases: Sequence[str]) -> list[tuple[str, str]]:
        """("off the failure", why) when `rule` shares no content word (`grammar.content_words`)
        with the records of the cases it cites (when the index holds any of them), and ("not in the
        policy", why) when more than 1 − GROUNDED_SHARE of its content words are neither the
        policy's nor those cases' (when the workspace has a policy): a rule about something its
        failure and the policy never mention."""
        words = content_words(rule)
        if not words:
            return []
        known = [self.case_words[c] for c in cases if c in self.case_words]
        cited = frozenset().union(*known)
        out = []
        if known and not words & cited:
            out.append(
                (
                    "off the failure",
                    f"is not about the failure it cites: it shares no word with case {', '.join(cases)}",
                )
            )
        foreign = sorted(words - cited - self.policy_words)
        # A workspace with no policy text has nothing a rule could follow from but its cases.
        if self.policy_words and len(foreign) > (1 - GROUNDED_SHARE) * len(words):
            out.append(
                (
                    "not in the policy",
                    "is about what neither the policy nor its cases mention "
                    f"({', '.join(foreign[:MAX_NAMED_VALUES])}); a rule must follow from the policy",
                )
            )
        return out

    def specific(self, text: str) -> list[Hit]:
        """The values of `text` that some case holds and the policy does not state, in text order."""
        covered: list[tuple[int, int]] = []
        # In this order: a phrase's or a name's span is covered before the tokens are read.
        found = self._phrase_hits(text, covered) + self._name_hits(text, covered) + self._token_hits(text, covered)
        hits: list[Hit] = []
        for _, hit in sorted(found, key=lambda f: f[0]):
            if hit not in hits:
                hits.append(hit)
        return hits

    def _phrase_hits(self, text: str, covered: list[tuple[int, int]]) -> list[tuple[int, Hit]]:
        """(offset, hit) of the value phrases (dates, amounts) some case holds and the policy does not;
        every phrase's span is added to `covered`."""
        found = []
        for match, value in phrases(text):
            covered.append(match.span())
            holders = self.holders.get(value, set())
            if holders and value not in self.policy:
                found.append((match.start(), Hit(match.group(0).strip(), tuple(sorted(holders)))))
        return found

    def _name_hits(self, text: str, covered: list[tuple[int, int]]) -> list[tuple[int, Hit]]:
        """(offset, hit) of the cases' names outside `covered` that are no rule word; their spans are
        added to `covered`."""
        found = []
        for phrase in name_phrases(self.names):
            for match in re.finditer(r"(?<![\w])" + r"\s+".join(map(re.escape, phrase.split())) + r"(?![\w])", text):
                if not any(a <= match.start() < b for a, b in covered) and not is_rule_word(phrase, self.policy):
                    covered.append(match.span())
                    found.append((match.start(), Hit(match.group(0), tuple(sorted(self.names[phrase])))))
        return found

    def _token_hits(self, text: str, covered: list[tuple[int, int]]) -> list[tuple[int, Hit]]:
        """(offset, hit) of the tokens outside `covered` that are a case's value or name."""
        found = []
        for match in TOKEN.finditer(text):
            if any(a <= match.start() < b for a, b in covered):
                continue  # the "17" of "May 17" is part of the date, "York" of "New York" part of the name
            token = match.group(0)
            normal = value_of(token)
            if normal is not None:
                holders = self.holders.get(normal, set()) if normal not in self.policy else set()
            else:
                holders = self.names.get(token, set()) if not is_rule_word(token, self.policy) else set()
            if holders:
                found.append((match.start(), Hit(token, tuple(sorted(holders)))))
        return found

    def reason(self, hits: Sequence[Hit]) -> str:
        """One line naming the values and their cases, for people and for the model's retry."""
        def held(ids: tuple[str, ...]) -> str:
            shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
            return f"case {shown}" if len(ids) == 1 else f"cases {shown}"

        def shown(token: str) -> str:
            return REDACTED if value_of(token) in self.secret else token

        found = ", ".join(f"`{shown(h.value)}` (from {held(h.case_ids)})" for h in hits[:MAX_NAMED_VALUES])
        more = len(hits) - MAX_NAMED_VALUES
        if more > 0:
            found += f" and {more} more value{'s' if more > 1 else ''}"
        kind = "a case value" if len(hits) == 1 else f"{len(hits)} case values"
        return f"carries {kind}: {found}; a rule must hold for every case of its kind"


def stub_reason(text: str, rules: Sequence[str] = ()) -> str | None:
    """Why `text` is no rule because its values were cut out (`grammar.cut_value`), or None.

    When `rules` (the sentences a proposal adds) are given, only they are read: the change's other
    words are an instruction to the rewriter, not skill text.
    """
    # A rule that ends in a colon lost what followed it ("Agent uses the payment id:").
    words = (
        next((w for w in (cut(r) or (r[-1] if r.endswith(":") else None) for r in rules) if w is not None), None)
        if rules else cut(text)
    )
    return (
        None if words is None
        else (
            f"reads as a sentence with its values cut out ({words!r}): a rule must say what to do in words that hold "
            "for every case of its kind"
        )
    )


def cut(text: str) -> str | None:
    """The words of the first sentence of `text` whose values were cut out (`grammar.cut_value`)."""
    return next((w for s in sentences(text) if (w := cut_value(s)) is not None), None)


def _words(text: str) -> frozenset[str]:
    """A text's words for `CaseValues.ungrounded` (possessives split off: "user's" → "user")."""
    return token_set(text.replace("'", " "))


def _case_findings(joined: str) -> list[tuple[str, str]]:
    """A proposed rule's sentence that asserts what one case expected or held: an evaluator's assertion
    (a bare "Agent", `ruleform.evaluator_assertion`) or one case's facts (`ruleform.case_fact`).

    A proposal only, as the other grammar checks: a line a rewrite adds may be an item of a list whose
    lead-in, on another line, holds the condition ("- The booking was made within the last 24 hrs")."""
    out = []
    asserted = evaluator_assertion(joined)
    if asserted is not None:
        out.append(
            (
                "evaluator's note",
                f'is not a rule: {asserted!r} is an evaluator\'s assertion about one case (a bare "Agent" '
                "as its subject); a rule says what the agent must do in every case of its kind",
            )
        )
    fact = case_fact(joined)
    if fact is not None:
        out.append(("case fact", f"is not a rule: {fact[0]!r} {fact[1]}; a rule puts such a fact under a condition"))
    return out


def _sentence_findings(rules: list[str]) -> list[tuple[str, str]]:
    """A proposed rule that is not a whole sentence, and a sentence of one that tells a story."""
    out = []
    broken = next(((r, w) for r in rules if (w := fragment(r)) is not None), None)
    if broken is not None:
        out.append(("fragment", f"is not a rule: {broken[0]!r} {broken[1]}"))
    told = next(((s, w) for r in rules for s in sentences(r) if (w := narrates(s)) is not None), None)
    if told is not None:
        out.append(
            (
                "narrative",
                f"is not a rule: {told[0]!r} tells what happened ({told[1]!r}); a rule says what to do, in the "
                "present",
            )
        )
    return out
