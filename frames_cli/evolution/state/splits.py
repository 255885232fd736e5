"""Held-out discipline: the counted cases divided per category,
stably by case id, into diagnosis, selection and sealed test sets.

The FRAMES paper diagnoses, gates and selects on one evaluation set E, so its gains are in-sample.
Here each case gets a place from a hash of its id alone (`place`), so adding, removing or editing
one case never moves another; the shares and the salt are `evolution.split` in frames.yaml. A
category too small to split is kept whole (every case diagnosed and gated, as in E; none sealed)
and named in a warning. See docs/decisions/0027-held-out-selection-sealed-test.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from frames_cli.evolution.state.run_warnings import CategoriesKeptWhole

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig, SplitConfig

#: The sets, in the order reports show them.
SETS = ("diagnosis", "selection", "test")


def place(case_id: str, selection: float, test: float, salt: int = 0) -> str:
    """The set a case of a split category belongs to: "test", "selection" or "diagnosis".

    u = the first 8 bytes of sha256("frames-split:<salt>:<case id>") as a fraction of 2⁶⁴, uniform in
    [0, 1); u < test → test, u < test + selection → selection, else diagnosis. It depends on the id
    and the settings only, never on the other cases.
    """
    digest = hashlib.sha256(f"frames-split:{salt}:{case_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < test:
        return "test"
    return "selection" if u < test + selection else "diagnosis"


@dataclass(frozen=True)
class Split:
    """Which cases a run diagnoses, gates on and seals, by id (each tuple sorted).

    A case of a category kept whole is in both `diagnosis` and `selection`; every other case is in
    exactly one set. With `selection` share 0 every category is whole: the paper's single set E.

    Attributes:
        diagnosis: the only failures diagnosers and rewriters see, and the only anchor cases.
        selection: what the gate and the Pareto front are computed on (blind).
        test: scored once at the end for S0 and every front member; never used for a decision.
        whole: categories kept whole because they are too small to split (named in `warnings`).
        paper: True when the settings ask for the paper's single set E (no warning then).
        min_cases: `split.min_cases` the split was made with (for the warning).
        counts: {set: {category: cases}} for every set, categories sorted ({} when unknown: a run
            recorded before held-out sets existed).
    """

    diagnosis: tuple[str, ...]
    selection: tuple[str, ...]
    test: tuple[str, ...] = ()
    whole: tuple[str, ...] = ()
    paper: bool = False
    min_cases: int = 0
    counts: dict = field(default_factory=dict, compare=False)

    def ids(self, name: str) -> tuple[str, ...]:
        """The case ids of set `name` (one of SETS)."""
        return getattr(self, name)

    def evaluated(self) -> list[str]:
        """Diagnosis ∪ selection, sorted: what every candidate is evaluated on during the run."""
        return sorted(set(self.diagnosis) | set(self.selection))

    def warnings(self) -> list[CategoriesKeptWhole]:
        """One warning naming every category kept whole with its size (empty when none is, and for the
        paper's single set, which was asked for): one, not one per category, so a workspace of many
        small categories gets one warning."""
        if self.paper or not self.whole:
            return []
        sizes = self.counts.get("diagnosis", {})
        return [CategoriesKeptWhole(tuple((cat, sizes.get(cat, 0)) for cat in self.whole), self.min_cases)]

    def to_json(self) -> dict:
        """Plain JSON for the run checkpoint (every field)."""
        return {"diagnosis": list(self.diagnosis), "selection": list(self.selection), "test": list(self.test),
                "whole": list(self.whole), "paper": self.paper, "min_cases": self.min_cases, "counts": self.counts}

    @classmethod
    def from_json(cls, obj: dict) -> Split:
        """Inverse of `to_json`."""
        return cls(
            tuple(obj["diagnosis"]), tuple(obj["selection"]), tuple(obj.get("test", ())), tuple(obj.get("whole", ())),
            bool(obj.get("paper", False)), int(obj.get("min_cases", 0)), dict(obj.get("counts", {})),
        )

    @classmethod
    def single(cls, case_ids: Iterable[str]) -> Split:
        """The paper's single evaluation set E (every case diagnosed and gated, none sealed), without
        counts: the form of a run recorded before held-out sets existed."""
        ids = tuple(sorted(set(case_ids)))
        return cls(ids, ids, paper=True)


def split_cases(cases: Iterable[Case], config: SplitConfig, sealed: Iterable[Case] = ()) -> Split:
    """Divide `cases` per category by `place`; `sealed` cases
    (from `split.test_cases`) are test cases whatever their hash.

    A category is kept whole when it has fewer than `config.min_cases` cases (sealed ones not
    counted) or when hashing would leave its diagnosis or its selection part empty; its cases are
    then in both sets and none is sealed. A category can only leave "whole" by growing, so adding a
    case never moves a case of a split category (docs/decisions/0027-held-out-selection-sealed-test.md).

    Args:
        cases: the counted cases of the run (ids unique).
        config: `evolution.split`.
        sealed: cases that form the test set as a whole; a case listed in both is only sealed.
    """
    sealed = list(sealed)
    sealed_ids = {c.id for c in sealed}
    category_of = {c.id: c.category for c in sealed}
    by_category: dict[str, list[str]] = {}
    for case in cases:
        if case.id not in sealed_ids:
            by_category.setdefault(case.category, []).append(case.id)
            category_of[case.id] = case.category
    if config.selection == 0 and config.test == 0:
        single = Split.single(cid for ids in by_category.values() for cid in ids)
        test = tuple(sorted(sealed_ids))
        return Split(
            single.diagnosis, single.selection, test, paper=not sealed_ids,
            counts=_counts(category_of, single.diagnosis, single.selection, test),
        )
    sets: dict[str, set[str]] = {name: set() for name in SETS}
    whole: list[str] = []
    for category in sorted(by_category):
        ids = by_category[category]
        placed = {
            name: [c for c in ids if place(c, config.selection, config.test, config.seed) == name] for name in SETS
        }
        too_small = (
            len(ids) < config.min_cases or not placed["diagnosis"] or (config.selection > 0 and not placed["selection"])
        )
        if too_small:
            whole.append(category)
            sets["diagnosis"].update(ids)
            sets["selection"].update(ids)
            continue
        for name in SETS:
            sets[name].update(placed[name])
    if config.selection == 0:
        # No held-out selection set: the gate runs on the diagnosis set (only the test set is sealed).
        sets["selection"] = set(sets["diagnosis"])
    sets["test"] |= sealed_ids
    diagnosis, selection, test = (tuple(sorted(sets[name])) for name in SETS)
    return Split(
        diagnosis, selection, test, tuple(whole), min_cases=config.min_cases,
        counts=_counts(category_of, diagnosis, selection, test),
    )


def _counts(category_of: Mapping[str, str], *sets: Iterable[str]) -> dict[str, dict[str, int]]:
    """{set name: {category: cases}} for the sets given in SETS order; categories sorted."""
    out: dict[str, dict[str, int]] = {}
    for name, ids in zip(SETS, sets):
        per: dict[str, int] = {}
        for cid in ids:
            per[category_of[cid]] = per.get(category_of[cid], 0) + 1
        out[name] = dict(sorted(per.items()))
    return out


def load_split_cases(root: Path, config: FramesConfig) -> tuple[dict[str, Case], set[str]]:
    """The counted cases of a workspace by id (globs `eval.cases` and `evolution.split.test_cases`)
    and the ids of those from `test_cases`, which are sealed whatever their hash.

    Raises:
        InputError: a case file is bad (path:line), `test_cases` matches no file, or no case counts.
    """
    from frames_cli.formats.case_files import load_counted_cases

    cases = {c.id: c for c in load_counted_cases(root, config.eval.cases)}
    sealed: set[str] = set()
    if config.evolution.split.test_cases:
        for case in load_counted_cases(root, config.evolution.split.test_cases):
            cases[case.id] = case
            sealed.add(case.id)
    return cases, sealed


def describe_split(split: Split) -> str:
    """One line: the cases per set ("diagnosis 28, selection 12,
    test 10 cases"; "E: 50 cases" for the paper's single set)."""
    if split.paper:
        return f"one evaluation set E of {len(split.diagnosis)} cases, as in the paper"
    parts = [f"diagnosis {len(split.diagnosis)}", f"selection {len(split.selection)}"]
    if split.test:
        parts.append(f"sealed test {len(split.test)}")
    line = ", ".join(parts) + " cases"
    if split.whole:
        line += f"; kept whole: {', '.join(split.whole)}"
    return line
