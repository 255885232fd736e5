"""A run's per-case results as one JSON Lines file (`results.jsonl` in the run folder), and the
recommendation rule applied to such a file.

One line per candidate, set, case and sample: {"candidate", "set", "case_id", "sample", "passed",
"category", "reason", "skills_used"}. `set` is "diagnosis", "selection", "diagnosis+selection"
(a category kept whole: one evaluation serves both), "test" (the sealed set), "fresh" (the
confirmation's new samples of diagnosed selection cases, evolution/compare/evidence.py) or "new" (cases
added after the run, scored by a prospective look). Lines of files recorded before `sample` was
written are sample 0. The format is the one of the real-model recordings in bench/data/, so a
recorded run and a live one go through the same rule (bench/recommend.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.evolution.compare.evidence import Confirmation, Ranked, Recommendation, decide, pass_rate
from frames_cli.evolution.compare.gate import PerCategoryGate
from frames_cli.evolution.compare.verdict import CaseOutcome, outcomes_from_results
from frames_cli.evolution.state.run_ids import BASE_ID

#: The file a run writes into its folder.
RESULTS_FILE = "results.jsonl"
#: The sets a line may name.
SETS = ("diagnosis", "selection", "diagnosis+selection", "test", "fresh", "new")
_KEYS = ("candidate", "set", "case_id", "passed", "category")


@dataclass
class RecordedRun:
    """The results of one run by candidate and set.

    Attributes:
        records: candidate id → set name → result records ({case_id, category, sample, passed}).
        order: candidate ids in the order they first appear (creation order in a run's file).
    """

    records: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> RecordedRun:
        """Read a results.jsonl file.

        Raises:
            InputError: at path:line, for a line that is not a JSON object with the keys above, an
                unknown set, or a file without S0 (candidate "r0c0").
        """
        run = cls()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the results: {exc}", Location(path)) from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = Location(path, number)
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc.msg}", where) from None
            if not isinstance(row, dict) or any(k not in row for k in _KEYS):
                raise InputError(f"a result line needs the keys {', '.join(_KEYS)}", where)
            if row["set"] not in SETS:
                raise InputError(f"unknown set {row['set']!r} (known: {', '.join(SETS)})", where)
            record = {
                "case_id": str(row["case_id"]), "category": str(row["category"]), "sample": int(row.get("sample", 0)),
                "passed": bool(row["passed"]),
            }
            if row["set"] == "new":
                record["look"] = int(row.get("look", 1))
            run.add(str(row["candidate"]), row["set"], record)
        if BASE_ID not in run.records:
            raise InputError(f"no result of S0 ({BASE_ID})", Location(path))
        return run

    def add(self, candidate: str, set_name: str, record: Mapping[str, Any]) -> None:
        """Add one result record of `candidate` on `set_name`."""
        if candidate not in self.records:
            self.records[candidate] = {}
            self.order.append(candidate)
        self.records[candidate].setdefault(set_name, []).append(dict(record))

    def outcomes(self, candidate: str, *sets: str) -> dict[str, CaseOutcome]:
        """Case id → outcome of `candidate` over the records of `sets`."""
        by_set = self.records.get(candidate, {})
        return outcomes_from_results(r for name in sets for r in by_set.get(name, []))

    def samples(self) -> int:
        """k, the samples per case of the run's evaluation: the fewest
        S0 holds of any selection or diagnosis case (1 when none)."""
        held = self.outcomes(BASE_ID, "selection", "diagnosis", "diagnosis+selection")
        return min((len(o.passes) for o in held.values()), default=1)

    def looked(self, candidate: str, look: int) -> dict[str, CaseOutcome]:
        """Case id → outcome of `candidate` on the cases a prospective look `look` scored ("new" lines)."""
        return outcomes_from_results(r for r in self.records.get(candidate, {}).get("new", []) if r.get("look") == look)

    def looks(self) -> list[int]:
        """The numbers of the prospective looks the recording holds, in order."""
        return sorted({r["look"] for sets in self.records.values() for r in sets.get("new", [])})

    def ids(self, *sets: str) -> set[str]:
        """The case ids S0 has a result for in `sets`."""
        return set(self.outcomes(BASE_ID, *sets))

    def children(self) -> list[str]:
        """Every candidate but S0 that has results on the selection set, in order."""
        return [c for c in self.order if c != BASE_ID and self.outcomes(c, "selection", "diagnosis+selection")]

    def write(self, path: Path) -> None:
        """Write the file (one line per record, candidates in order), atomically."""
        from frames_cli.files.atomic import atomic_write_text

        lines = [json.dumps({"candidate": cand, "set": name, **rec}, ensure_ascii=False, sort_keys=True)
                 for cand in self.order for name, recs in self.records[cand].items() for rec in recs]
        atomic_write_text(path, "".join(line + "\n" for line in lines))


def record_run(folder: Path, state: Any) -> RecordedRun:
    """The recorded form of a run from the evaluations kept in its folder (`<folder>/evals/`): S0 and
    every child on the diagnosis and selection sets, the sealed test set and the fresh samples where
    they were drawn. Cases left out of the run (disputed) are left out here too."""
    evals = folder / "evals"
    split = state.checkpoint.get("split") or {}
    diagnosis, selection = set(split.get("diagnosis", [])), set(split.get("selection", []))
    if not split:  # the paper's single set E: every case diagnosed and gated
        diagnosis = selection = set(state.checkpoint.get("eval_case_ids", []))
    sets = _Sets(diagnosis, selection, set(state.checkpoint.get("disputes") or {}))
    run = RecordedRun()
    for cand in state.candidates:
        # "-rest": the cases early rejection skipped, completed for the recommendation (same sets, same sample numbers).
        for suffix, fixed in (("", None), ("-rest", None), ("-fresh", "fresh"), ("-test", "test")):
            _add_results(run, sets, cand.id, evals / f"{cand.id}{suffix}.json", fixed, {})
    looks = sorted((p for p in folder.glob("look-*") if p.name[5:].isdigit()), key=lambda p: int(p.name[5:]))
    for look in looks:
        for cand in state.candidates:
            _add_results(run, sets, cand.id, look / f"{cand.id}.json", "new", {"look": int(look.name[5:])})
    return run


@dataclass(frozen=True)
class _Sets:
    """A run's diagnosis and selection sets by case id, and the cases it left out (disputed)."""

    diagnosis: set[str]
    selection: set[str]
    excluded: set[str]

    def of(self, case_id: str) -> str | None:
        """The recorded set a case's results go to; None for a case of neither set, or left out."""
        if case_id in self.excluded:
            return None
        both = case_id in self.diagnosis and case_id in self.selection
        return (
            "diagnosis+selection"
            if both
            else "diagnosis"
            if case_id in self.diagnosis
            else "selection"
            if case_id in self.selection
            else None
        )


def _add_results(run: RecordedRun, sets: _Sets, cid: str, path: Path, fixed: str | None, extra: dict[str, Any]) -> None:
    """Record `cid`'s answered results of the evaluation at `path` (none: nothing) in the set `fixed`, else
    in each case's own set; `extra` is added to every record."""
    if not path.is_file():
        return
    for r in json.loads(path.read_text(encoding="utf-8"))["results"]:
        name = fixed or sets.of(r["case_id"])
        if name is None or r.get("lost") or (fixed != "new" and r["case_id"] in sets.excluded):
            continue
        run.add(
            cid, name,
            {
                "case_id": r["case_id"], "category": r["category"], "sample": int(r.get("sample", 0)),
                "passed": bool(r["passed"]), "reason": r.get("reason", ""), "skills_used": r.get("skills_used", []),
                **extra,
            },
        )


def recommend_recorded(
    run: RecordedRun, alpha: float = 0.05, limit: int = 3, tolerance: float = 0.05, max_looks: int = 3
) -> Recommendation:
    """The recommendation rule (evolution/compare/evidence.py) on a recorded run, as the run would have
    decided it from what the recording holds.

    k is the recording's samples per case. The gate is recomputed with the paper's rule at
    `tolerance` on the selection set (a recording holds no verdict). Fresh samples come from the
    "fresh" lines, a child rejected early is ranked on its completed evaluation ("-rest" results
    are recorded in its sets), and a pending branch's prospective looks are replayed from the "new"
    lines (evolution/decide/prospective.decide_look, `max_looks` looks); whatever is missing is named in
    `lacks`. α ≥ 1 is the paper's rule: the gate-passed child of the highest selection pass rate.

    Raises:
        ValueError: alpha ≤ 0 or limit < 1.
    """
    from frames_cli.evolution.decide.prospective import decide_look

    k = run.samples()
    diagnosis = run.ids("diagnosis", "diagnosis+selection")
    selection = run.ids("selection", "diagnosis+selection")
    unseen, redrawn = selection - diagnosis, selection & diagnosis
    gate = PerCategoryGate(tolerance)
    base_sel = run.outcomes(BASE_ID, "selection", "diagnosis+selection")
    base_fresh = run.outcomes(BASE_ID, "fresh")
    ranked, partial = _ranked(run, gate, base_sel, diagnosis, selection, k)
    lacking: list[str] = []
    if alpha >= 1:
        passing = [(pass_rate(run.outcomes(c.member, "selection", "diagnosis+selection"), k), -i, c.member)
                   for i, c in enumerate(ranked) if c.gate_passed]
        member = max(passing)[2] if passing else None
        return Recommendation(member, "final" if member else "none", 1.0, rule="paper")
    if partial:
        lacking.append(
            f"complete evaluations of {', '.join(partial)} (rejected early, never completed): ranked without them"
        )

    def confirm(child: Ranked) -> Confirmation:
        child_sel = run.outcomes(child.member, "selection", "diagnosis+selection")
        child_fresh = run.outcomes(child.member, "fresh")
        pairs = (_only(base_sel, unseen), _only(child_sel, unseen))
        fresh = None
        if redrawn and (set(base_fresh) | set(child_fresh)) & redrawn:
            fresh = (_only(base_fresh, redrawn), _only(child_fresh, redrawn))
        elif redrawn and not any(x.startswith("fresh samples") for x in lacking):
            lacking.append(
                f"fresh samples of the {len(redrawn)} diagnosed selection cases (decided on the {len(unseen)} unseen "
                "ones)"
            )
        return Confirmation.of(child.member, child.in_sample, child.gate_passed, pairs, fresh, k, alpha)

    if not ranked:
        return Recommendation(None, "none", alpha, lacks=tuple(lacking), note="no child to test")
    rec = decide(ranked, confirm, alpha, limit)
    rec = Recommendation(rec.member, rec.status, rec.alpha, rec.steps, tuple(lacking), rec.rule)
    for look in run.looks():
        if rec.status != "pending" or rec.member is None:
            break
        pair = (_only(base_sel, unseen), _only(run.outcomes(rec.member, "selection", "diagnosis+selection"), unseen))
        rec = decide_look(rec, pair, (run.looked(BASE_ID, look), run.looked(rec.member, look)), k, max_looks)
    return rec


def _ranked(
    run: RecordedRun, gate: PerCategoryGate, base_sel: Mapping[str, CaseOutcome], diagnosis: set[str],
    selection: set[str], k: int,
) -> tuple[list[Ranked], list[str]]:
    """The children ranked by their diagnosis-set pass rate, with the gate's verdict on the selection
    set; and the children whose recording lacks cases of either set (rejected early, never completed)."""
    ranked, partial = [], []
    for cid in run.children():
        child_sel = run.outcomes(cid, "selection", "diagnosis+selection")
        passed = gate.check(base_sel, child_sel).passed
        diag = run.outcomes(cid, "diagnosis", "diagnosis+selection")
        if not diagnosis <= set(diag) or not selection <= set(child_sel):
            partial.append(cid)
            continue
        ranked.append(Ranked(cid, pass_rate(diag, k), passed))
    return ranked, partial


def _only(outcomes: Mapping[str, CaseOutcome], ids: Iterable[str]) -> dict[str, CaseOutcome]:
    keep = set(ids)
    return {cid: o for cid, o in outcomes.items() if cid in keep}


def sealed_change(run: RecordedRun, member: str | None, k: int = 1) -> float | None:
    """The member's pass rate on the sealed test set minus S0's, in points (0..100 scale); 0.0 for
    S0 itself; None when either has no test result."""
    base = run.outcomes(BASE_ID, "test")
    if not base:
        return None
    if member is None:
        return 0.0
    other = run.outcomes(member, "test")
    return 100 * (pass_rate(other, k) - pass_rate(base, k)) if other else None
