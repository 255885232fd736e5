"""What the gate, the early rejection, the scores and attribution read of the candidates' evaluations:
per-case outcomes on the selection set or on E, lost cases, the sequential gate's samples so far.

`RunOutcomes` is a frozen view over the read-only candidate store, made for the cases that count at
the moment (disputed ones left out); it reads and computes, never writes. Shapes: `Outcomes` is case
id → `CaseOutcome` (evolution/compare/verdict.py), `Drawn` the sequential gate's samples
(evolution/compare/sequential.py). A candidate without a kept evaluation raises FileNotFoundError.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.evolution.compare.verdict import Outcomes, outcomes_from_results
from frames_cli.evolution.compare.sequential import Drawn, drawn_outcomes

if TYPE_CHECKING:
    from frames_cli.evolution.round.candidate_store import CandidateStore
    from frames_cli.evolution.state.splits import Split
    from frames_cli.formats.case import Case


@dataclass(frozen=True)
class RunOutcomes:
    """The candidates' outcomes as the run's judgements read them.

    Attributes:
        store: the run's candidate store (evaluations and files).
        split: the run's diagnosis / selection / test sets.
        cases: case id → Case, every case of the run's sets (their must-pass marks).
        excluded: cases that count in no set now (disputed, or `label: disputed`).
        eval_case_ids: E, what every candidate is evaluated on.
        attribution_steps: `evolution.attribution_steps` (0: attribution is off).
    """

    store: CandidateStore
    split: Split
    cases: Mapping[str, Case]
    excluded: frozenset[str]
    eval_case_ids: tuple[str, ...]
    attribution_steps: int

    def must_pass(self) -> set[str]:
        """Ids of the cases marked must-pass in their case files."""
        from frames_cli.formats.case import must_pass_ids

        return must_pass_ids(self.cases.values())

    def lost(self, cid: str) -> set[str]:
        """Ids of the cases with a lost result in candidate `cid`'s evaluation on E."""
        return {r["case_id"] for r in self.store.evaluation(cid).results if r.get("lost")}

    def selection(self, cid: str, leave_out: frozenset[str] | set[str] = frozenset()) -> Outcomes:
        """Candidate `cid`'s per-case outcomes on the selection set (what the gate judges), with the
        must-pass marks of the case files; cases in `leave_out` are not compared."""
        gated = set(self.split.selection) - self.excluded - leave_out
        results = [r for r in self.store.evaluation(cid).results if r["case_id"] in gated]
        return outcomes_from_results(results, self.must_pass())

    def counted(self, cid: str, leave_out: frozenset[str] | set[str] = frozenset()) -> Outcomes:
        """Candidate `cid`'s per-case outcomes on E (what attribution compares), cases in `leave_out` not counted."""
        counted = set(self.eval_case_ids) - self.excluded - leave_out
        results = [x for x in self.store.evaluation(cid).results if x["case_id"] in counted]
        return outcomes_from_results(results, self.must_pass())

    def drawn(self, cid: str) -> Drawn:
        """Candidate `cid`'s samples on the selection set so far, its evaluation's and the sequential gate's."""
        gated = set(self.split.selection) - self.excluded
        ev = self.store.evaluation(cid)
        return drawn_outcomes(
            (r for r in [*ev.results, *ev.gate_samples] if r["case_id"] in gated), self.must_pass()
        )

    def attributable(self, parent: str, files: Mapping[str, bytes]) -> bool:
        """Whether attribution may analyse the child of `parent` made of `files`: it is on and the
        child changes several skills (then a rejection's failing categories must be the full evaluation's)."""
        before = self.store.files(parent)
        changed = {path.split("/")[1] for path in set(files) | set(before) if files.get(path) != before.get(path)}
        return self.attribution_steps > 0 and len(changed) >= 2
