"""Cases f = (m, t) (DESIGN §2): the dataclasses (a record is read by formats/case_record.py, files by case_files.py).

A case file is either YAML holding a list of case mappings (``cases/*.yaml``) or JSON Lines with one
case object per line (``cases/*.jsonl``). One record::

    id: tau2-airline-0
    category: refuse
    source: {kind: tau2, ref: "tasks.json#0"}
    created: "2026-11-29"
    task:                       # t: what the agent sees (input, answer_format) and how it is scored
      input: {text: "...", fields: {...}}     # or a plain string
      answer_format: "..."      # the answer's shape, told to the agent
      expected: {actions: []}
      check: {kind: set, field: actions}      # kind + options, see evaluation/checks.py
    diagnosis:                  # m: never shown to the agent under test
      symptom: ""; cause: ""; notes: ""; trajectory: []; evidence: ["..."]
    priors: []                  # advice that cannot be turned into a check
    generated: false
    reviewed: true
    also_from: []               # the same case found in other sources
    must_pass: true             # optional: the gate rejects any child that breaks this case;
                                # `category` marks every case of its category must-pass
    label: confirmed            # optional, a person's decision on a label a diagnoser disputed:
                                # `confirmed` (the expected result stands) or `disputed` (it is wrong)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from frames_cli.errors import Location


@dataclass
class Check:
    """How an output is compared with `expected`: a kind from `registry.CHECKS` and its options."""

    kind: str
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The `task.check` mapping as a case file holds it: {"kind": kind, **options}."""
        return {"kind": self.kind, **self.options}


@dataclass
class Task:
    """t: what the agent under test sees and how it is scored.

    Attributes:
        input: ``{"text": str, "fields": {...}}`` (a plain string in a file becomes ``text``).
        expected: the ground truth, in the shape `answer_format` describes.
        check: the comparison.
        answer_format: the answer's shape in words; shown to the agent.
    """

    input: dict[str, Any]
    expected: Any
    check: Check
    answer_format: str = ""


@dataclass
class Diagnosis:
    """m: the diagnosis record, read by diagnosers and never by the agent under test.

    Attributes:
        evidence: the one or few sentences of rule that decide the case.
        trajectory: steps ``{"state", "action", "result"}`` of a recorded failure.
    """

    symptom: str = ""
    cause: str = ""
    notes: str = ""
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


@dataclass
class Source:
    """Where a case came from: `kind` (a converter name, "manual", ...) and a reference inside it."""

    kind: str
    ref: str = ""


@dataclass(frozen=True)
class AgentCase:
    """The only view of a case the agent under test gets: no expected answer, no diagnosis."""

    id: str
    input: dict[str, Any]
    answer_format: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: {"id", "input", "answer_format"}; nothing else of the case."""
        return {"id": self.id, "input": self.input, "answer_format": self.answer_format}


@dataclass
class Case:
    """One case f = (m, t); `location` is where it was read and is never written back.

    `must_pass`: False, True (no child may turn this case from pass to fail) or "category" (the
    same for every case of its category); see `must_pass_ids`.
    `label`: None (nobody decided), "confirmed" or "disputed": a person's decision after a diagnoser
    said the expected result contradicts the policy (evolution/state/disputes.py). A disputed case counts
    in no gate, front or diagnosis until it is `confirmed`.
    `review`: None, "needed" (the converter was unsure of the expected answer, e.g. the key it read
    from a reviewer's comment; the case counts nowhere, like a disputed one) or "confirmed" (a
    person checked it); see `counts`.
    """

    id: str
    category: str
    source: Source
    created: str
    task: Task
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    priors: list[str] = field(default_factory=list)
    generated: bool = False
    reviewed: bool = True
    also_from: list[Source] = field(default_factory=list)
    must_pass: bool | str = False
    label: str | None = None
    review: str | None = None
    location: Location | None = field(default=None, compare=False)

    @property
    def counts(self) -> bool:
        """Whether the case counts in evaluation and evolution: not a generated case waiting for
        review (`reviewed: false`), nor one whose expected answer waits for a person (`review: needed`)."""
        return self.reviewed and self.review != "needed"

    def agent_view(self) -> AgentCase:
        """The case as the agent under test sees it: id, input and answer format only."""
        return AgentCase(self.id, self.task.input, self.task.answer_format)

    def to_dict(self) -> dict[str, Any]:
        """The record as written to a case file (key order fixed, `location` left out; `must_pass`
        `label` and `review` only when set, so files without them are written as they were)."""
        record = {
            "id": self.id,
            "category": self.category,
            "source": {"kind": self.source.kind, "ref": self.source.ref},
            "created": self.created,
            "task": {
                "input": self.task.input,
                "answer_format": self.task.answer_format,
                "expected": self.task.expected,
                "check": self.task.check.to_dict(),
            },
            "diagnosis": {
                "symptom": self.diagnosis.symptom,
                "cause": self.diagnosis.cause,
                "notes": self.diagnosis.notes,
                "trajectory": self.diagnosis.trajectory,
                "evidence": self.diagnosis.evidence,
            },
            "priors": self.priors,
            "generated": self.generated,
            "reviewed": self.reviewed,
            "also_from": [{"kind": s.kind, "ref": s.ref} for s in self.also_from],
        }
        if self.must_pass is not False:
            record["must_pass"] = self.must_pass
        if self.label is not None:
            record["label"] = self.label
        if self.review is not None:
            record["review"] = self.review
        return record


#: A person's decisions on a disputed label (`Case.label`).
LABELS = ("confirmed", "disputed")
#: The states of `Case.review`: a converter's doubt, and a person's confirmation.
REVIEW_STATES = ("needed", "confirmed")


def must_pass_ids(cases: Iterable[Case]) -> set[str]:
    """Ids of the must-pass cases: those marked `must_pass: true`, and every case of a category in
    which some case is marked `must_pass: category`."""
    cases = list(cases)
    whole = {c.category for c in cases if c.must_pass == "category"}
    return {c.id for c in cases if c.must_pass is True or c.category in whole}
