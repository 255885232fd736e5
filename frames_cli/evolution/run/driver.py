"""Opening an evolve run: base commit, new run or resume, the diagnosis / selection
/ test sets, the lock (its collaborators: evolution/run/collaborators.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.errors import ConfigError, InputError, Location, ModelSetupError
from frames_cli.evolution.decide.prospective import look_at_pending
from frames_cli.evolution.run.collaborators import build_context
from frames_cli.evolution.run.drift import base_warnings
from frames_cli.evolution.run.loop import EvolutionRun
from frames_cli.evolution.run.opening import new_split, resumed_events, run_sets, start_events
from frames_cli.evolution.run.snapshot import run_fingerprint, run_settings, run_snapshot
from frames_cli.evolution.round.record import LoopMemory
from frames_cli.evolution.state.checkpoint import Checkpointer, find_unfinished, latest_finished
from frames_cli.evolution.state.events import AskingAgain, EndingRebuilt, Event, PolicyAmended
from frames_cli.evolution.state.records import RunState
from frames_cli.evolution.state.run_ids import new_run_id
from frames_cli.evolution.state.run_warnings import InputLeftOut
from frames_cli.evolution.state.runs import load_run, run_dir
from frames_cli.evolution.state.settings import Settings
from frames_cli.llm.client.check import require_keys
from frames_cli.llm.transport.batch import wait_for_batches

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace


@dataclass(frozen=True)
class EvolveOptions:
    """What `frames evolve` was asked for.

    Attributes:
        base: the revision whose skills are S0 (default HEAD).
        resume: a run id to resume (a failed one too); None resumes the newest running or stopped
            run of the same base, if any.
        max_rounds / seed: override `evolution.max_rounds` / `evolution.seed` (None = frames.yaml).
            A resumed run honours `max_rounds` and keeps its own seed (a different `seed` is refused).
        use_cache: reuse cached model answers (`--no-cache` turns it off for this run).
        force: start a new run even when the latest finished run already evolved the same base with
            the same fingerprint (an unfinished run is still resumed first).
    """

    base: str = "HEAD"
    resume: str | None = None
    max_rounds: int | None = None
    seed: int | None = None
    use_cache: bool = True
    force: bool = False


@dataclass
class EvolveOutcome:
    """How a run ended.

    Attributes:
        state: the run's final state.
        resumed: the run was resumed rather than started.
        branch: the review branch `frames/<run>` (None when no child beat S0).
        menu: the deploy menu rows (MenuRow of evolution/report/menu.py, one per front member).
        reports: {"json" | "markdown" | "junit": path} of the run reports.
        up_to_date: no run was made: `state` is the latest finished run, which already evolved this
            base with these cases and settings (then `menu` and `reports` are empty).
    """

    state: RunState
    resumed: bool
    branch: str | None
    menu: list[Any]
    reports: dict[str, Path]
    up_to_date: bool = False


def evolve(ws: Workspace, options: EvolveOptions, *, on_event: Callable[[Event], None] = lambda _m: None,
           progress: Any = None) -> EvolveOutcome:
    """Run (or resume) one evolve run on `ws` under the workspace lock.

    Under the lock, earlier runs' pending review branches with enough cases added since are looked
    at first (evolution/decide/prospective.py). Order: `options.resume`; else the newest unfinished run of
    the base; else, unless `options.force`, nothing when the latest finished run has this base and this
    `run_fingerprint` (outcome `up_to_date`: no lock, run folder, ref or model call); else a new run.

    Args:
        progress: called with (cases done, cases in the evaluation, tokens the run spent so far) as
            each evaluation goes (None = quiet).

    Raises:
        LockedError: another frames run holds the lock (exit 75).
        BatchPending: batch mode (`llm.batch`): a provider batch is still running, found before
            anything is replayed, or sent by this run's stage (exit 75; the run resumes later).
        InputError / ConfigError: bad cases, skills or settings, or a `seed` other than the resumed
            run's (exit 2); nothing is written.
        GitError: the base revision does not exist.
    """
    from frames_cli.gitstore.store import GitStore
    from frames_cli.workspace.lock import workspace_lock
    from frames_cli.workspace.preflight import refuse_invalid_inputs

    config = ws.config()
    store = GitStore(ws.root)
    base_sha = store.resolve(options.base)
    cases, sealed = _load_cases(ws, config)
    snapshot = run_snapshot(config, seed=options.seed, max_rounds=options.max_rounds)
    fingerprint = run_fingerprint(cases.values(), snapshot)
    _require_models(ws, config, cases.values())
    for problem in refuse_invalid_inputs(ws):
        on_event(InputLeftOut(problem))
    run_id = options.resume or find_unfinished(ws, base_sha)
    if run_id is None:
        _require_committed_skills(ws, store, options.base, base_sha)
        done = None if options.force else _up_to_date(ws, store, base_sha, fingerprint, on_event)
        if done is not None:
            return done
    # After the up-to-date check, so a cron job with nothing to do does not import litellm.
    require_keys(ws, config, _roles(config, cases.values()))
    if run_id is not None:
        # Its checks only (read-only), so a run that cannot be resumed is refused before the lock.
        _open_state(ws, options, run_id, base_sha, snapshot, fingerprint)
    run_id = run_id or new_run_id()
    with workspace_lock(ws, run_id, "evolve"):
        # Batch mode: while a provider batch runs, stop at once (exit 75) rather than replay to it.
        wait_for_batches(ws, config)
        # Cron's tick decides earlier runs' pending branches first, on the cases added since.
        from frames_cli.evolution.report.report import write_run_reports

        look_at_pending(ws, config, store, cases, sealed, on_event, write_run_reports, use_cache=options.use_cache)
        state, memory, resumed = _open_state(ws, options, run_id, base_sha, snapshot, fingerprint)
        if resumed and options.max_rounds is not None:
            memory.max_rounds = options.max_rounds
        settings = run_settings(state, memory, config.llm.concurrency)
        base_files = store.read_files(state.base)
        split = run_sets(ws, run_id, cases, sealed, settings, memory)
        for event in start_events(ws, config, store, state, settings, cases, split, base_files, resumed):
            on_event(event)
        ctx = build_context(ws, config, store, state, memory, settings, cases, options.use_cache, on_event, progress)
        ctx.amendments = _amendments(store, state.base, base_files, on_event)
        if resumed:
            for event in resumed_events(state, snapshot, cases):
                on_event(event)
        _run(ws, store, ctx, EvolutionRun(ctx, state, memory, settings, base_files), resumed)
        from frames_cli.evolution.report.menu import deploy_menu
        from frames_cli.evolution.round.commit import publish_best

        branch = publish_best(store, state)
        ctx.checkpointer.save(state, memory)
        reports = write_run_reports(ws, store, state)
        return EvolveOutcome(state, resumed, branch, deploy_menu(state, store), reports)


def _up_to_date(
    ws: Workspace, store: Any, base_sha: str, fingerprint: str, on_event: Callable[[Event], None]
) -> EvolveOutcome | None:
    """The outcome `up_to_date` when the latest finished run has this base and fingerprint and lost no
    answer (its ending rebuilt first when a kill left it without reports); None when a new run is due."""
    last = latest_finished(ws)
    if last is not None and _reports_missing(ws, last):
        last = _rebuild_ending(ws, store, last, on_event)
    if last is None or last.base != base_sha or last.fingerprint != fingerprint:
        return None
    if last.lost_results():
        # Its lost answers were never cached: a new run asks for them again (the rest is cached).
        on_event(AskingAgain(last.run_id, last.lost_results()))
        return None
    for warning in base_warnings(ws, store.read_files(base_sha), base_sha):
        on_event(warning)
    return EvolveOutcome(last, False, last.branch, [], {}, up_to_date=True)


def _run(ws: Workspace, store: Any, ctx: RunContext, run: EvolutionRun, resumed: bool) -> None:
    """Run `run` with the stop signals installed; close the model client after. A new run a provider
    refused (ModelSetupError) is discarded: nothing of it is worth keeping (its answers are in the cache),
    and `frames runs` must not list a failed run for a typo or a key."""
    restore = ctx.stop.install()
    refused = False
    try:
        run.run()
    except ModelSetupError:
        refused = not resumed
        raise
    finally:
        restore()
        ctx.client.close()
        if refused:
            # After close(), which writes the ledger into the run folder.
            _discard(ws, store, run.state)


def estimate(ws: Workspace, options: EvolveOptions) -> Any:
    """`frames evolve --estimate`: the `evaluation.estimate.Estimate` of a new run on `options.base`
    with its `--seed` / `--max-rounds` overrides, split as the run would split the cases. Reads
    frames.yaml, the cases and the base commit; writes nothing, calls no model.

    Raises:
        InputError / ConfigError: bad cases or settings, or a role the run would call has no model
            (the run itself would refuse, `_require_models`). UnknownRevisionError: no such base.
    """
    from frames_cli.evolution.run.estimate import evolve_estimate
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.gitstore.store import GitStore

    config = ws.config()
    store = GitStore(ws.root)
    base = store.resolve(options.base)
    cases, sealed = _load_cases(ws, config)
    _require_models(ws, config, cases.values())
    settings = Settings.from_json(run_snapshot(config, seed=options.seed, max_rounds=options.max_rounds)["evolution"])
    return evolve_estimate(
        cases, new_split(cases, sealed, settings), SkillSet.load_valid(store.read_files(base))[0], config, settings,
        store.read_files(base, "policies/"),
    )


def _discard(ws: Workspace, store: Any, state: RunState) -> None:
    """Remove a new run's record: its folder under .frames/runs/, its refs and its note entries."""
    import shutil

    from frames_cli.evolution.round.commit import discard_run

    discard_run(store, state)
    shutil.rmtree(run_dir(ws, state.run_id), ignore_errors=True)


def _open_state(ws: Workspace, options: EvolveOptions, run_id: str, base_sha: str, snapshot: dict[str, Any],
                fingerprint: str) -> tuple[RunState, LoopMemory, bool]:
    """Load the run to resume, or make a new one fixed to `snapshot` (see `snapshot.run_snapshot`).

    Raises:
        InputError: the run is not resumable, or `options.seed` differs from the resumed run's seed.
    """
    if (run_dir(ws, run_id) / "state.json").is_file():
        state = load_run(ws, run_id)
        resumable = ("running", "stopped", "failed") if options.resume else ("running", "stopped")
        if state.status not in resumable:
            raise InputError(f"run {run_id} is {state.status} ({state.stop_reason}); nothing to resume")
        seed = state.settings.seed
        if options.seed is not None and options.seed != seed:
            # The seed fixed the batches of the rounds already run; a resumed run with another seed
            # would be neither the old run nor a new one.
            raise InputError(
                f"run {run_id} is unfinished ({state.status}) and keeps its seed {seed}: run `frames evolve` "
                f"without --seed to finish it, then `frames evolve --seed {options.seed}` starts a new run"
            )
        return state, LoopMemory.stored(ws, state), True
    if options.resume:
        load_run(ws, run_id)  # raises with the list of known runs
    state = RunState(run_id=run_id, base=base_sha, config=snapshot, fingerprint=fingerprint)
    return state, LoopMemory(), False


def _load_cases(ws: Workspace, config: FramesConfig) -> tuple[dict[str, Case], set[str]]:
    """Every case that counts (reviewed) of the workspace by id (globs `eval.cases` and
    `evolution.split.test_cases`), and the ids of the sealed ones (those of `test_cases`).

    Raises:
        InputError: a case file is bad (path:line), or there are no cases at all.
    """
    from frames_cli.evolution.state.splits import load_split_cases

    return load_split_cases(ws.root, config)


def _amendments(store: Any, base: str, base_files: dict[str, bytes], on_event: Callable[[Event], None]) -> str:
    """What the diagnosers are told about policy amendments: the back-linked policy lines of the
    base's skills that changed since the skills were written, read at the base commit with its
    history (workspace/amendments.py); "" when none. One event line names the stale skills, so the
    reconciliation is never silent."""
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.workspace.amendments import diagnoser_notice, workspace_stale_links

    try:
        skills = SkillSet.from_files(base_files)
    except InputError:
        return ""  # base_warnings names the skill that does not load
    policies = store.read_files(base, "policies/")
    links = workspace_stale_links(policies.get, store, skills.values(), ref=base)
    if links:
        names = sorted({link.skill for link in links})
        on_event(PolicyAmended(tuple(names)))
    return diagnoser_notice(links)


def _reports_missing(ws: Workspace, state: RunState) -> list[str]:
    """Names of the finished run's report files that are not in its folder."""
    from frames_cli.evolution.state.runs import REPORT_FILES

    return [name for name in REPORT_FILES.values() if not (run_dir(ws, state.run_id) / name).is_file()]


def _rebuild_ending(ws: Workspace, store: Any, state: RunState, on_event: Callable[[Event], None]) -> RunState:
    """Redo the end of a finished run from its state: the review branch and the reports.

    A run killed after its final checkpoint (status "finished") but before its branch and reports
    were written would otherwise stay without them: the next `frames evolve` finds it up to date.
    Both are functions of the state, so rebuilding them later gives what the run would have written.
    Under the workspace lock (LockedError, exit 75, while another run holds it).
    """
    from frames_cli.evolution.report.report import write_run_reports
    from frames_cli.evolution.round.commit import publish_best
    from frames_cli.workspace.lock import workspace_lock

    with workspace_lock(ws, state.run_id, "evolve"):
        state = load_run(ws, state.run_id)
        missing = _reports_missing(ws, state)
        if not missing:
            return state
        checkpointer = Checkpointer(ws)
        publish_best(store, state)
        checkpointer.save(state, LoopMemory.stored(ws, state))
        write_run_reports(ws, store, state)
    on_event(EndingRebuilt(state.run_id, tuple(missing)))
    return state


def _require_models(ws: Workspace, config: FramesConfig, cases: Iterable[Case]) -> None:
    """Refuse to start (or resume) a run when a role it will call has no model, before anything is written.

    Found on its first call instead, the missing model failed the run after its state was saved,
    and `frames runs` listed a failed run with 0 rounds. Roles: the executor (built-in executor
    only), diagnoser and rewriter, and the judge when a case has a rubric check.

    Raises:
        ConfigError: naming `frames.yaml` and every role without a model (exit 2).
    """
    missing = [role for role in _roles(config, cases) if not getattr(config.models, role)]
    if missing:
        names = ", ".join(f"`models.{role}`" for role in missing)
        raise ConfigError(
            f"frames evolve needs a model for {names} (any litellm model string, or frames-sim/<role> offline)",
            Location(ws.config_path),
        )


def _roles(config: FramesConfig, cases: Iterable[Case]) -> list[str]:
    """The roles a run calls: the executor (built-in executor only), diagnoser, rewriter, and the
    judge when a case has a rubric check."""
    roles = (["executor"] if config.executor.kind == "builtin" else []) + ["diagnoser", "rewriter"]
    return roles + (["judge"] if any(case.task.check.kind == "rubric" for case in cases) else [])


def _require_committed_skills(ws: Workspace, store: Any, base: str, base_sha: str) -> None:
    """Refuse a new run whose base has no skill while the working tree has some.

    Evolution reads S0 from the base commit; a workspace whose skills were never committed (a new
    folder of a monorepo, most often) would be evaluated as an empty skill set, every round paid
    for, and end in "no candidate beat S0".

    Raises:
        InputError: the base commit has no file under the workspace's `skills/`, the working tree has a SKILL.md.
    """
    if store.read_files(base_sha) or not any(ws.skills_dir.glob("*/SKILL.md")):
        return
    raise InputError(
        f"{base} ({base_sha[:12]}) has no skills here, but the working tree has: commit them first "
        "(frames evolve reads S0's skills from the base commit)",
        Location(ws.skills_dir),
    )
