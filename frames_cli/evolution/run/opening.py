"""What an evolve run checks and says as it opens: its diagnosis / selection / test sets (split for a
new run, as recorded for a resumed one), the lines it prints before the first model call (sets, the
base's warnings, a new run's estimate and budget, categories too small to judge) and, resumed, what
changed since it started. Reads and computes; writes only the sets into a new run's loop memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from frames_cli.errors import InputError, Location
from frames_cli.evolution.decide.prospective import held_case_keys
from frames_cli.evolution.run.collaborators import gates
from frames_cli.evolution.run.drift import base_warnings
from frames_cli.evolution.run.snapshot import changed_since, guard_rules_note
from frames_cli.evolution.state.disputes import load_disputes, open_disputes
from frames_cli.evolution.state.events import BatchNotice, Budget, Estimated, Event, OverBudget, RunStarted
from frames_cli.evolution.state.run_warnings import RunChangedSince, SmallCategories
from frames_cli.evolution.state.settings import Settings
from frames_cli.evolution.state.splits import Split, describe_split, split_cases
from frames_cli.llm.transport.batch_models import batch_notices

if TYPE_CHECKING:
    from frames_cli.evolution.round.record import LoopMemory
    from frames_cli.evolution.state.records import RunState
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace


def run_sets(
    ws: Workspace, run_id: str, cases: dict[str, Case], sealed: Any, settings: Settings, memory: LoopMemory
) -> Split:
    """The run's sets: split now for a new run (and the case keys and open disputes recorded in `memory`),
    else as recorded.

    Raises:
        InputError: a case the run holds is gone.
    """
    if not memory.eval_case_ids:
        split = new_split(cases, sealed, settings)
        memory.split, memory.eval_case_ids = split.to_json(), split.evaluated()
        memory.case_keys = held_case_keys(cases, [*split.evaluated(), *split.test])
        # Disputes earlier runs recorded and nobody decided yet: those cases stay out of this run too.
        memory.disputes = open_disputes(cases, load_disputes(ws))
    split = Split.from_json(memory.split) if memory.split else Split.single(memory.eval_case_ids)
    missing = [c for c in [*memory.eval_case_ids, *split.test] if c not in cases]
    if missing:
        raise InputError(
            f"cases of run {run_id} are gone ({', '.join(missing[:5])}); start a new run", Location(ws.cases_dir)
        )
    return split


def start_events(
    ws: Workspace, config: FramesConfig, store: Any, state: RunState, settings: Settings, cases: dict[str, Case],
    split: Split, base_files: dict[str, bytes], resumed: bool,
) -> Iterator[Event]:
    """What a run says as it starts, each as soon as it is known: its sets and their warnings, the base's
    warnings, a new run's estimate and batch notices, and categories too small to judge."""
    yield RunStarted(state.run_id, state.base, resumed, describe_split(split))
    yield from split.warnings()
    yield from base_warnings(ws, base_files, state.base)
    if not resumed:
        policy_files = store.read_files(state.base, "policies/")
        yield from estimate_events(config, settings, cases, split, base_files, policy_files)
        yield from (BatchNotice(line) for line in batch_notices(config))
    small = small_categories(cases, list(split.selection), settings)
    if small:
        yield small


def resumed_events(state: RunState, snapshot: dict[str, Any], cases: dict[str, Case]) -> list[Event]:
    """What a resumed run says of what changed since it started, and of its guards' rules."""
    changed = changed_since(state, snapshot, cases.values())
    rules = guard_rules_note(state, snapshot)
    return [*([RunChangedSince(state.run_id, tuple(changed))] if changed else []), *([rules] if rules else [])]


def estimate_events(config: FramesConfig, settings: Settings, cases: dict[str, Case], split: Split,
                     base_files: dict[str, bytes], policy_files: dict[str, bytes]) -> list[Event]:
    """The new run's estimate (evolution/run/estimate.py) and the budget beside it, a warning when the
    estimate exceeds it: before the first call."""
    from frames_cli.evaluation.estimate import budget_warning
    from frames_cli.evolution.run.estimate import evolve_estimate
    from frames_cli.formats.skill_set import SkillSet

    estimate = evolve_estimate(cases, split, SkillSet.load_valid(base_files)[0], config, settings, policy_files)
    limits = (config.budget.max_tokens, config.budget.max_usd)
    budget = OverBudget if budget_warning(estimate, *limits) else Budget
    return [Estimated(estimate), budget(estimate, *limits)]


def new_split(cases: dict[str, Case], sealed: Any, settings: Settings) -> Split:
    """The sets of a new run (splits.split_cases over `evolution.split`; `sealed` ids are test cases)."""
    from frames_cli.workspace.config import SplitConfig

    return split_cases(
        [c for c in cases.values() if c.id not in sealed], SplitConfig(**settings.split), [cases[c] for c in sealed]
    )


def small_categories(cases: dict[str, Case], gated: list[str], settings: Settings) -> SmallCategories | None:
    """The warning naming every category of the gated cases too small to judge, or None (before any model call)."""
    from frames_cli.evolution.compare.gate import too_small_categories

    counts: dict[str, int] = {}
    for cid in gated:
        counts[cases[cid].category] = counts.get(cases[cid].category, 0) + 1
    seq = gates(settings)["sequential"]
    looks = list(zip(seq.looks, seq.alphas)) if seq else []
    small = too_small_categories(counts, settings.samples, settings.gate_alpha, looks)
    if not small:
        return None
    return SmallCategories(tuple(small), seq.looks[-1] if seq else settings.samples, settings.gate, seq is not None)
