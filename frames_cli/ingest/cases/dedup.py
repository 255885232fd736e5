"""Case identity across sources: the content key, new-case ids, and merging duplicates into `also_from`.

Two cases are the same case when their input and expected output are the same after normalising
text (case-folded, whitespace collapsed) and key order; the category, the check and the diagnosis do
not take part, because two sources describing one situation often disagree on those. The first case
seen keeps its record; each later duplicate adds its `source` (and its own `also_from`) to the
first one's `also_from`, so no source is lost.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.formats.case_files import case_files, check_case_files, write_cases
from frames_cli.formats.problems import Problem


def _normal(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.casefold().split())
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items() if v not in (None, "", [], {})}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    return value


def content_key(task_input: dict[str, Any], expected: Any) -> str:
    """Hex sha256 of the normalised (input, expected) pair: equal for cases that are the same case."""
    canonical = json.dumps([_normal(task_input), _normal(expected)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def case_key(case: Case) -> str:
    """`content_key` of a case's task."""
    return content_key(case.task.input, case.task.expected)


def today() -> str:
    """The UTC date as ``YYYY-MM-DD``, the `created` stamp of ingested cases."""
    return _dt.datetime.now(_dt.UTC).date().isoformat()


# Expected text up to this many words is a verdict ("refuse", "transfer to a human agent") the
# answer must contain; longer text is a reference answer an agent will not repeat word for word.
SHORT_ANSWER_WORDS = 5


def default_check(expected: Any) -> Check:
    """The check for an expected answer whose source names none.

    A list → ``set``; text of at most `SHORT_ANSWER_WORDS` words → ``contains``; longer text →
    ``rubric`` (the judge compares the answer with it in substance: an approved free-text reply
    checked with ``exact`` would fail on any rewording and poison the regression pool); anything
    else (numbers, mappings) → ``exact``.
    """
    if isinstance(expected, list):
        return Check("set")
    if isinstance(expected, str):
        return Check("contains" if len(expected.split()) <= SHORT_ANSWER_WORDS else "rubric")
    return Check("exact")


def make_case(
    kind: str,
    ref: str,
    *,
    text: str,
    expected: Any,
    category: str,
    check: Check | None = None,
    fields: dict[str, Any] | None = None,
    answer_format: str = "",
    diagnosis: Diagnosis | None = None,
    generated: bool = False,
    reviewed: bool = True,
) -> Case:
    """A new case with a content-derived id ``<kind>-<first 10 hex of content_key>``.

    The id depends only on input and expected output, so importing the same row twice yields the
    same id and `merge_duplicates` folds it away. `check` defaults to `default_check(expected)`.
    """
    task_input = {"text": text, "fields": dict(fields or {})}
    check = check or default_check(expected)
    return Case(
        id=f"{kind}-{content_key(task_input, expected)[:10]}",
        category=category,
        source=Source(kind, ref),
        created=today(),
        task=Task(task_input, expected, check, answer_format),
        diagnosis=diagnosis or Diagnosis(),
        generated=generated,
        reviewed=reviewed,
    )


def fair_check(expected: Any, proposed: Check | None) -> Check:
    """`proposed` unless it grades `expected` more strictly than its source can mean: `exact` or
    `contains` on text longer than `SHORT_ANSWER_WORDS` words (no agent repeats a reference sentence
    word for word), and `exact` on short text (an agent's "I must refuse: ..." is a refusal), become
    `default_check(expected)`; None gives `default_check` too."""
    if proposed is None:
        return default_check(expected)
    if isinstance(expected, str) and (
        proposed.kind == "exact" or (proposed.kind == "contains" and len(expected.split()) > SHORT_ANSWER_WORDS)
    ):
        return default_check(expected)
    return proposed


@dataclass
class MergeResult:
    """Outcome of `merge_duplicates`.

    Attributes:
        added: new cases that are not duplicates, in input order (ids made unique).
        grown: existing cases that gained sources (or diagnosis parts), by id.
        duplicates: (source ref of the folded case, id of the case it was merged into), one per folded case.
    """

    added: list[Case] = field(default_factory=list)
    grown: dict[str, Case] = field(default_factory=dict)
    duplicates: list[tuple[str, str]] = field(default_factory=list)


def _absorb(into: Case, other: Case) -> bool:
    """Record `other`'s sources on `into`, and the parts of its diagnosis `into` lacks (a failed
    trial's trajectory and symptom must survive a passing trial of the same task that came
    first); True when `into` changed."""
    known = {(into.source.kind, into.source.ref), *((s.kind, s.ref) for s in into.also_from)}
    grew = False
    mine, theirs = into.diagnosis, other.diagnosis
    for name in ("symptom", "cause", "notes", "trajectory"):
        if not getattr(mine, name) and getattr(theirs, name):
            setattr(mine, name, getattr(theirs, name))
            grew = True
    new_evidence = [e for e in theirs.evidence if e not in mine.evidence]
    if new_evidence:
        mine.evidence.extend(new_evidence)
        grew = True
    for source in (other.source, *other.also_from):
        if (source.kind, source.ref) not in known:
            into.also_from.append(Source(source.kind, source.ref))
            known.add((source.kind, source.ref))
            grew = True
    return grew


def merge_duplicates(existing: Sequence[Case], new: Iterable[Case]) -> MergeResult:
    """Fold each new case into an earlier case with the same `case_key`, existing cases first.

    `existing` cases are changed in place when they gain sources (and listed in `grown`); a new
    case whose id collides with a different case gets a ``-2``, ``-3`` ... suffix.
    """
    result = MergeResult()
    by_key: dict[str, Case] = {case_key(c): c for c in reversed(existing)}
    existing_ids = {id(c) for c in existing}
    taken = {c.id for c in existing}
    for case in new:
        key = case_key(case)
        first = by_key.get(key)
        if first is not None:
            if _absorb(first, case) and id(first) in existing_ids:
                result.grown[first.id] = first
            result.duplicates.append((case.source.ref, first.id))
            continue
        base, n = case.id, 1
        while case.id in taken:
            n += 1
            case.id = f"{base}-{n}"
        taken.add(case.id)
        by_key[key] = case
        result.added.append(case)
    return result


def _keep_decisions(case: Case, earlier: Case | None) -> None:
    """Carry over to a re-imported `case` what the same case (same id: same input and expected
    answer) already had: its `created` stamp and a person's decisions (`review: confirmed`, a
    `label`, `must_pass`), so importing a source again never undoes a review."""
    if earlier is None:
        return
    case.created = earlier.created
    if earlier.review == "confirmed":
        case.review = "confirmed"
    case.label = case.label or earlier.label
    case.must_pass = case.must_pass or earlier.must_pass


@dataclass
class StoreResult:
    """What `store_cases` wrote (or would write, with `dry_run`).

    Attributes:
        path: the case file the new cases went to.
        written: the new cases now in `path` (duplicates folded away).
        merged: (source ref of a new case, id of the case it was folded into), one per duplicate.
        updated_files: other case files rewritten because a case in them gained `also_from` sources.
        problems: problems in other case files (their bad records are left untouched).
    """

    path: Path
    written: list[Case]
    merged: list[tuple[str, str]]
    updated_files: list[Path]
    problems: list[Problem]


def store_cases(
    cases_dir: Path, path: Path, new: Sequence[Case], *, replace: bool, dry_run: bool = False
) -> StoreResult:
    """Write `new` to the case file `path`, folding duplicates of any workspace case into the first one.

    Args:
        cases_dir: the workspace's `cases/`; every case file in it takes part in duplicate detection.
        path: the output file (usually in `cases_dir`).
        new: the conversion's cases, in order.
        replace: True: `path` ends up holding exactly this conversion's cases (a source re-imported
            replaces its previous import; `created` stamps of unchanged ids are kept, and so are
            a person's decisions on them: `review: confirmed`, `label`, `must_pass`). False: the
            new cases are appended to what `path` holds (the generator's file, where reviewers set
            `reviewed: true` by hand).
        dry_run: compute everything, write nothing.

    Another file holding a case that gains sources is rewritten atomically with the grown record,
    unless it has bad records: then it is left as it is (rewriting would drop them) and the
    duplicate is still folded, its source noted only in the result.

    Raises:
        InputError: `path` exists but has bad records, or has an unsupported suffix (nothing written).
    """
    path = Path(path)
    per_file: dict[Path, list[Case]] = {}
    problems: list[Problem] = []
    broken: set[Path] = set()
    for file in case_files(cases_dir, "*"):
        if file.resolve() == path.resolve():
            continue
        per_file[file], file_problems = check_case_files([file])
        problems.extend(file_problems)
        if any(p.severity == "error" for p in file_problems):
            broken.add(file)
    own: list[Case] = []
    if path.exists():
        own, own_problems = check_case_files([path])
        bad = [p for p in own_problems if p.severity == "error"]
        if bad:
            raise InputError(f"has bad records ({bad[0]}); fix them before importing into it", Location(path))
    before = {c.id: c for c in own}
    base = [] if replace else own
    merged = merge_duplicates([c for cases in per_file.values() for c in cases] + base, new)
    for case in merged.added:
        _keep_decisions(case, before.get(case.id))
    updated = [f for f, cases in per_file.items() if f not in broken and any(c.id in merged.grown for c in cases)]
    if not dry_run:
        if replace or merged.added or any(c.id in merged.grown for c in base):
            write_cases(path, base + merged.added)
        for file in updated:
            write_cases(file, per_file[file])
    return StoreResult(path, merged.added, merged.duplicates, updated, problems)
