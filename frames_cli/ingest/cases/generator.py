"""Cold-start case generator: the policy sections and skills no case covers, and new cases for them.

Coverage. The units are the policy sections (each heading's own lines, up to its first
sub-heading; sections with no text besides the heading are skipped) and the skills that have no
back-link (a skill cut from policy is covered through its section). A case *covers* the unit its
evidence matches best: for each evidence sentence, the share of its content words found in the
unit's text (`text.overlap`), kept when at least `ingest.evidence_match`. Only the best unit counts,
so a generic sentence does not cover every section at once, and evidence of fewer than three
content words (a heading, a list item) covers nothing.

Generation (`CaseGenerator`). For each uncovered unit, the generator model (`models.generator`)
gets `llm/messages/prompts/generator_cases.txt` with the unit in a `<policy lines=..>` block and answers in
the `GENERATED_CASES` schema. Each proposed case is validated: non-empty input text, an expected
value, a known check kind, a category, and evidence found in the unit (each a sentence of three or
more content words, quoted or matched to the unit's sentence it paraphrases, which replaces it, so
evidence is always the policy's own words);
failures are reported and dropped. Survivors are marked ``generated: true, reviewed: false``:
they do not count in evaluations until a person reviews them and sets ``reviewed: true``.
Duplicates (with each other and existing cases) are folded by `dedup.store_cases`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from frames_cli.errors import Location
from frames_cli.formats.case import Case, Check, Diagnosis
from frames_cli.formats.policy import PolicyDocument, Section
from frames_cli.formats.problems import Problem
from frames_cli.formats.skill_set import SkillSet
from frames_cli.ingest.cases.dedup import fair_check, make_case
from frames_cli.words import best_sentence, overlap, sentences, token_set
from frames_cli.llm.messages.types import ChatReply, ChatRequest, Usage
from frames_cli.registry import CHECKS


KIND = "generator"
PROMPT = "generator_cases"
# A rule is a sentence: evidence of fewer content words ("User", "email") is a heading or a list
# item, matches half the policy equally well, and decides no case.
MIN_EVIDENCE_WORDS = 3


@dataclass(frozen=True)
class Unit:
    """A piece of rule text a case can cover: a policy section's own lines, or a skill's body.

    Attributes:
        file: workspace-relative POSIX path (a policy file, or `skills/<name>/SKILL.md`).
        heading: " > "-joined heading path (for a skill: its name).
        start, end: 1-based inclusive line span in `file`.
        text: the span's text.
        skill: the skill's name when the unit is a skill body, else None.
    """

    file: str
    heading: str
    start: int
    end: int
    text: str
    skill: str | None = None

    @property
    def ref(self) -> str:
        """``file:start-end``, the unit's reference in messages and case sources."""
        return f"{self.file}:{self.start}-{self.end}"


def _walk(section: Section) -> Iterable[Section]:
    yield section
    for child in section.children:
        yield from _walk(child)


def section_units(documents: Sequence[PolicyDocument]) -> list[Unit]:
    """Each section's own lines (heading down to its first sub-heading) that hold text besides the heading."""
    units: list[Unit] = []
    for doc in documents:
        for section in _walk(doc.root):
            body_from = section.start + 1 if section.level else section.start
            if doc.content_lines(body_from, section.own_end) == 0:
                continue
            text = "\n".join(doc.lines[section.start - 1 : section.own_end])
            heading = " > ".join(section.path) or doc.title
            units.append(Unit(doc.file, heading, section.start, section.own_end, text))
    return units


def skill_units(skills: SkillSet) -> list[Unit]:
    """The bodies of skills without back-links (skills cut from policy are covered via their sections)."""
    units: list[Unit] = []
    for name, skill in skills.items():
        if skill.backlinks or not skill.body.strip():
            continue
        first = skill.source.body_line if skill.source else 1
        lines = skill.body.splitlines()
        units.append(Unit(skill.file_path(), name, first, first + len(lines) - 1, "\n".join(lines), name))
    return units


@dataclass
class Coverage:
    """Which units the cases cover.

    Attributes:
        units: every unit, in file and line order.
        covered_by: unit ref → ids of the cases that cover it (only covered units appear).
    """

    units: list[Unit]
    covered_by: dict[str, list[str]] = field(default_factory=dict)

    def uncovered(self) -> list[Unit]:
        """The units no case covers, in order."""
        return [u for u in self.units if u.ref not in self.covered_by]


def compute_coverage(units: Sequence[Unit], cases: Iterable[Case], threshold: float) -> Coverage:
    """Assign each case to the unit(s) its evidence matches best (see the module docstring)."""
    unit_tokens = [token_set(u.text) for u in units]
    coverage = Coverage(list(units))
    for case in cases:
        for sentence in case.diagnosis.evidence:
            if len(token_set(sentence)) < MIN_EVIDENCE_WORDS:
                continue
            scores = [overlap(sentence, t) for t in unit_tokens]
            best = max(scores, default=0.0)
            if best < threshold:
                continue
            for unit, score in zip(units, scores):
                if score == best and case.id not in coverage.covered_by.setdefault(unit.ref, []):
                    coverage.covered_by[unit.ref].append(case.id)
    return coverage


def generator_request(unit: Unit, count: int, categories: Sequence[str]) -> ChatRequest:
    """The generator model's request for `count` cases testing `unit` (prompt `generator_cases`)."""
    from frames_cli.llm.messages.prompts import render
    from frames_cli.llm.messages.schemas import GENERATED_CASES
    prompt = render(
        PROMPT,
        count=count,
        category=re.sub(r"[^a-z0-9]+", "-", unit.heading.split(" > ")[-1].casefold()).strip("-") or "general",
        categories=", ".join(categories) or "(none yet)",
        file=unit.file,
        start=unit.start,
        end=unit.end,
        heading=unit.heading.replace('"', "'"),
        section=unit.text,
    )
    return ChatRequest("generator", [{"role": "user", "content": prompt}], GENERATED_CASES, tag=f"generate {unit.ref}")


def _quoted_evidence(claims: Sequence[str], unit: Unit, threshold: float) -> list[str]:
    """The evidence as the unit's own words: a verbatim quote is kept, a paraphrase becomes the
    unit's sentence it matches (`text.best_sentence`).

    Raises:
        ValueError: a claim the unit neither contains nor paraphrases, or no evidence at all.
    """
    flat = " ".join(unit.text.split())
    unit_sentences = sentences(unit.text)
    evidence: list[str] = []
    for claim in claims:
        quote = " ".join(str(claim).split())
        if len(token_set(quote)) < MIN_EVIDENCE_WORDS:
            raise ValueError(
                f"evidence {claim!r} is not a rule sentence (fewer than {MIN_EVIDENCE_WORDS} content words)"
            )
        if quote and quote in flat:
            found = quote
        else:
            match = best_sentence(quote, unit_sentences, threshold)
            if match is None:
                raise ValueError(f"evidence {claim!r} is not in {unit.ref}")
            found = match[0]
        if found not in evidence:
            evidence.append(found)
    if not evidence:
        raise ValueError("no evidence")
    return evidence


def validate_generated(
    raw: dict[str, Any], unit: Unit, threshold: float, kind: str = KIND, ref: str | None = None
) -> Case:
    """Turn one proposed case into a Case marked generated and unreviewed (source `kind`, `ref` or the unit's).

    Evidence sentences are replaced by the unit's sentence they quote. The proposed check is kept
    unless it grades text more strictly than the policy means (`dedup.fair_check`).

    Raises:
        ValueError: empty input text, no expected value, unknown check kind, empty category, or an
            evidence sentence the unit does not contain.
    """
    task_input = raw.get("input") or {}
    given_text, given_fields = task_input.get("text"), task_input.get("fields")
    text = given_text if isinstance(given_text, str) else ""
    fields = given_fields if isinstance(given_fields, dict) else {}
    if not text.strip():
        raise ValueError("no input text")
    expected = raw.get("expected")
    if expected in (None, "", [], {}):
        raise ValueError("no expected outcome")
    given_check = raw.get("check")
    check_raw = given_check if isinstance(given_check, dict) else {}
    check_kind = check_raw.get("kind")
    if check_kind is not None and check_kind not in CHECKS.builtins:
        raise ValueError(f"unknown check kind {check_kind!r}")
    category = str(raw.get("category") or "").strip().lower()
    if not category:
        raise ValueError("no category")
    evidence = _quoted_evidence(raw.get("evidence") or [], unit, threshold)
    options = {k: v for k, v in check_raw.items() if k != "kind"}
    return make_case(
        kind,
        ref or unit.ref,
        text=text.strip(),
        fields=fields,
        expected=expected,
        category=category,
        check=fair_check(expected, Check(check_kind, options) if check_kind else None),
        diagnosis=Diagnosis(notes=f"generated for {unit.heading}", evidence=evidence),
        generated=True,
        reviewed=False,
    )


@dataclass
class CaseGenerator:
    """Asks the generator model for cases that test uncovered units, and validates them.

    Args:
        chat_many: the model client's `chat_many` (replies in request order; failures are replies
            with `error`, never exceptions).
        threshold: `ingest.evidence_match`.
        per_unit: cases asked for per unit (`ingest.generated_per_section`).
        kind: source kind of the cases ("generator", or "amendment").
        ref_prefix: put before each unit's ref in the cases' source ref (an amendment's git range).

    After `generate`: `cases`, `problems` (failed calls and dropped cases, as warnings) and `usage`
    (prompt and completion tokens, USD, summed over the replies).
    """

    chat_many: Any
    threshold: float = 0.6
    per_unit: int = 2
    kind: str = KIND
    ref_prefix: str = ""
    cases: list[Case] = field(default_factory=list, init=False)
    problems: list[Problem] = field(default_factory=list, init=False)
    usage: Usage = field(default_factory=Usage, init=False)

    def generate(self, units: Sequence[Unit], categories: Sequence[str], limit: int) -> list[Case]:
        """At most `limit` validated cases for `units`, spread over the units in order.

        Each unit is asked for `per_unit` cases (fewer for the last ones when `limit` runs out);
        answers beyond what was asked are ignored.
        """
        self.cases, self.problems, self.usage = [], [], Usage()
        plan: list[tuple[Unit, int]] = []
        left = limit
        for unit in units:
            if left <= 0:
                break
            plan.append((unit, min(self.per_unit, left)))
            left -= plan[-1][1]
        replies: list[ChatReply] = (
            self.chat_many([generator_request(u, n, categories) for u, n in plan]) if plan else []
        )
        for (unit, wanted), reply in zip(plan, replies):
            self.usage.add(reply.usage)
            where = Location(unit.file, unit.start)
            if not reply.ok:
                self.problems.append(Problem(where, f"generator failed for {unit.heading}: {reply.error}", "warning"))
                continue
            for i, raw in enumerate(reply.data["cases"][:wanted], start=1):
                try:
                    self.cases.append(
                        validate_generated(raw, unit, self.threshold, self.kind, self.ref_prefix + unit.ref)
                    )
                except ValueError as exc:
                    self.problems.append(
                        Problem(where, f"generated case {i} for {unit.heading} dropped: {exc}", "warning")
                    )
        return self.cases
