"""The simulator's world: the workspace's cases, the rules they turn on, and the policy's values.

A case turns on rules that other cases share. Each sentence of a case's evidence that carries none
of the case's own values (its ids, names, amounts, dates: `casevalues`) and has at least
MIN_RULE_WORDS content words is a rule ("Agent should refuse to proceed with the cancellation.");
another case whose evidence says the same in most of the same words needs the same rule. A sentence
that carries a value ("Agent update reservation OWZ4XL to economy.") is a fact of its case, not a
rule: with the value cut out it reads as a remnant ("Agent update reservation to economy."), which
no real model's rule looks like (the real-model trial), and only the case's own line can state it.
Nor is a sentence a rule that `ruleform.not_a_rule` refuses: a note to a grader ("Test that agent
refuses ...") or about the case's user ("Also user is not a native speaker."); of the other
sentences of such a note only an obligation or a prohibition is (`ruleform.note_sentences`). The
proposal guard drops all of these, so the world and the guard agree on what a rule is.

A case is also decided by a passage of the policy: the section (split at headings) its evidence
matches best (BM25+), which every case about the same procedure shares. A model that reads policy prose
(`simulator.policy_reading` > 0, the strong profile of README) knows a case to the share of that
section's statements the case turns on (those its evidence touches, `needed`) that its loaded
skills hold, whether or not any rule of the case is stated: the
real-model trial's model passed 29 of 30 train cases on the verbatim policy and half of them once
the four procedure skills were cut to one line. A weak model (0) gets nothing from prose. So
putting a section's statements back into a cut skill helps every case that turns on the section,
including cases no diagnoser saw.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frames_cli.casevalues import case_values, holds_value, is_rule_word, policy_values
from frames_cli.grammar import cut_value
from frames_cli.words import sentences, token_set, tokens
from frames_cli.ruleform import note_sentences

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: Content words an evidence sentence must keep, once its case's values are out, to be a rule.
MIN_RULE_WORDS = 3
#: Content words a case's evidence must share with a policy passage for the passage to decide it.
PASSAGE_WORDS = 2
#: Content words a statement of the deciding passage must share with the case's evidence for the
#: case to turn on it (on the bundled cases: 4.5 of a section's 3-26 statements on average).
NEEDED_WORDS = 3


@dataclass(frozen=True)
class CaseFacts:
    """What the world derives from one case.

    Attributes:
        values: the values and person names its record holds (`casevalues.case_values`).
        rules: its evidence sentences as rules (the case's values taken out), in evidence order.
        statements: the statements it turns on of the policy passage that decides it
            (`SimWorld.deciding`, `needed`); () when the world has no policy or none matches.
    """

    values: frozenset[str]
    rules: tuple[str, ...]
    statements: tuple[str, ...] = ()


@dataclass
class SimWorld:
    """What the simulated models "know": every case with its expected answer and evidence, the
    values the policy states (rule values, which a line may carry and still be general) and the
    policy's sections as their statements (`passages_of`; the passages that decide cases).

    The executor simulator finds its case by the `Case id:` line of the prompt; the judge grades
    against `task.expected`. The world is read once and shared by every call of a client.
    """

    cases: dict[str, Case] = field(default_factory=dict)
    policy: frozenset[str] = frozenset()
    passages: tuple[tuple[str, ...], ...] = ()
    # No lock: the world is pickled to `llm.processes` workers, and two threads that race here
    # compute the same facts (one dict assignment wins).
    _facts: dict[str, tuple[Case, CaseFacts]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_cases(cls, cases: Iterable[Case], policy_texts: Iterable[str] = ()) -> SimWorld:
        """A world of `cases` (a later duplicate id wins) and the policy documents' texts."""
        texts = list(policy_texts)
        return cls(
            {c.id: c for c in cases}, frozenset(policy_values(texts)),
            tuple(p for text in texts for p in passages_of(text)),
        )

    @classmethod
    def from_workspace(cls, workspace: Workspace, config: FramesConfig) -> SimWorld:
        """The cases matched by `eval.cases` (a glob relative to the workspace root) and the policy
        documents under `policies/`.

        Raises:
            InputError: a case file is malformed (path and line in the message).
        """
        from frames_cli.formats.case_files import case_files, load_cases

        return cls.from_cases(load_cases(case_files(workspace.root, config.eval.cases)), policy_texts(workspace))

    def get(self, case_id: str | None) -> Case | None:
        """The case with `case_id`, or None (unknown or no id)."""
        return self.cases.get(case_id) if case_id else None

    def facts(self, case: Case) -> CaseFacts:
        """The values and rules of `case`, derived once per case object (a world's cases may be replaced)."""
        known = self._facts.get(case.id)
        if known is not None and known[0] is case:
            return known[1]
        values, names = case_values(case)
        drop = values - self.policy
        own_names = {n for n in names if not is_rule_word(n, self.policy)}
        rules = []
        for sentence in (s for item in case.diagnosis.evidence for s in note_sentences(item)[0]):
            if holds_value(sentence, drop, own_names):
                continue
            if len(token_set(sentence)) >= MIN_RULE_WORDS and cut_value(sentence) is None and sentence not in rules:
                rules.append(sentence)
        evidence = " ".join(case.diagnosis.evidence)
        passage = self.deciding(evidence)
        facts = CaseFacts(frozenset(values | own_names), tuple(rules), needed(passage, evidence) if passage else ())
        self._facts[case.id] = (case, facts)
        return facts

    def deciding(self, evidence: str) -> tuple[str, ...] | None:
        """The policy passage (a section's statements) that decides a case with this `evidence`, or None.

        The passage of the highest BM25+ score for the evidence (rank-bm25's `BM25Plus`, k1 = 1.5,
        b = 0.75, δ = 1, idf = ln((N + 1)/n); Lv & Zhai 2011, "Lower-bounding term frequency
        normalization"; each passage one document), if it shares at least PASSAGE_WORDS content
        words with it; ties go to the earlier passage. None when the world has no policy. Not the
        executor's Okapi BM25: over a handful of sections Okapi's idf is ≤ 0 for a word most of
        them use, so "cancel" told the Cancel section from no other and 2 of the 13 bundled
        cancellation cases went to it (BM25+ : 8).
        """
        if not self.passages:
            return None
        scores = _passage_index(self.passages).get_scores(tokens(evidence))
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        if len(token_set(" ".join(self.passages[best])) & token_set(evidence)) >= PASSAGE_WORDS:
            return self.passages[best]
        return None


def needed(passage: tuple[str, ...], evidence: str) -> tuple[str, ...]:
    """The statements of `passage` that a case with this `evidence` turns on: those sharing at
    least NEEDED_WORDS content words with it (the rules it touches, not the whole section), or
    the whole passage when none does."""
    words = token_set(evidence)
    touched = tuple(s for s in passage if len(token_set(s) & words) >= NEEDED_WORDS)
    return touched or passage


@functools.lru_cache(maxsize=8)
def _passage_index(passages: tuple[tuple[str, ...], ...]) -> Any:
    # A world's passages are fixed: index them once per process (a pickled world rebuilds it).
    from rank_bm25 import BM25Plus

    return BM25Plus([tokens(" ".join(p)) for p in passages])


def passages_of(text: str) -> list[tuple[str, ...]]:
    """The sections of a policy text as their statements, in document order.

    Each heading's own lines (up to its first sub-heading), read as `formats.policy.parse_policy`
    reads a Markdown policy (ATX and setext headings; a `#` line inside fenced code is no heading;
    front matter, template tags and HTML comments are not text), split into `words.py`
    sentences of MIN_RULE_WORDS content words or more; the preamble before the first heading is a
    section too, and a section without one statement is dropped.
    """
    from frames_cli.formats.policy import parse_policy, split_lines

    doc = parse_policy(split_lines(text), "policy.md")
    out: list[tuple[str, ...]] = []
    stack = [doc.root]
    while stack:
        section = stack.pop()
        own = doc.view[section.start - 1 + doc.heading_lines(section) : section.own_end]
        statements = tuple(s for s in sentences("\n".join(own)) if len(token_set(s)) >= MIN_RULE_WORDS)
        if statements:
            out.append(statements)
        stack.extend(reversed(section.children))
    return out


def policy_texts(workspace: Workspace) -> list[str]:
    """The texts of the workspace's policy documents (UTF-8, undecodable bytes replaced); [] without any."""
    from frames_cli.formats.policy import policy_files

    folder = workspace.policies_dir
    if not folder.is_dir():
        return []
    return [p.read_text(encoding="utf-8", errors="replace") for p in policy_files(folder)]
