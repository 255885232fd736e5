"""Prospective validation: a pending review branch judged on cases added after its run.

A run's recommendation is *pending* when its member's gain is significant only with the fresh
samples of cases its diagnosers saw (evolution/compare/evidence.py). Cases that entered the workspace after
the run (any counted case whose id the run never held) were seen by none of its diagnosers or
rewriters, so they test whether the gain carries. `frames evolve` (from cron) looks at every pending
branch before it starts its own run, once `evolution.pending.min_new_cases` new cases arrived since
the run or its last look: S0 (the run's base) and the member are scored on all the new cases, k
samples each, and

- the gain on the run's unseen selection cases and the new cases together is significant at
  α / L (L = `evolution.pending.max_looks`, Bonferroni over the looks): **final**;
- the member is worse than S0 on the new cases at α / L: **withdrawn** (its branch is deleted);
- after L looks with neither: **unconfirmed** (the branch stays, with in-sample evidence only);
- otherwise it stays **pending**.

Each look is recorded in the run's state (`recommendation.looks`), its calls in its own folder
`.frames/runs/<run>/look-<n>/` (exchanges and ledger), and the run's reports are written again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frames_cli.evolution.compare.evidence import Recommendation, Tally, answered_outcomes, look_words
from frames_cli.evolution.compare.verdict import CaseOutcome
from frames_cli.evolution.state.events import Event, PendingLook, PendingLooked, PendingWaiting
from frames_cli.evolution.state.records import utc_now
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.state.run_warnings import BranchMoved, PendingSkipped

if TYPE_CHECKING:
    from frames_cli.evolution.state.records import RunState
    from frames_cli.formats.case import Case
    from frames_cli.gitstore.store import GitStore
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace


@dataclass(frozen=True)
class Wait:
    """Where a pending branch stands: `new` cases added since its run, `needed` for its next look."""

    run_id: str
    member: str
    branch: str | None
    new: int
    needed: int
    looks: int
    words: str

    def line(self) -> str:
        """"frames/<run> (r2c1): pending, 3 of 10 new cases for look 1 of 3; <evidence>"."""
        return (
            f"{self.branch or self.run_id} ({self.member}): pending, {self.new} of {self.needed} new cases for its "
            f"next look ({self.looks} done); {self.words}"
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (`frames status --json`)."""
        return {
            "run_id": self.run_id, "member": self.member, "branch": self.branch, "new_cases": self.new,
            "needed": self.needed, "looks": self.looks, "evidence": self.words,
        }


def pending_settings(state: RunState) -> tuple[int, int]:
    """(min_new_cases, max_looks) the run started with (`evolution.pending`)."""
    pending = state.settings.pending
    return int(pending["min_new_cases"]), int(pending["max_looks"])


def held_case_keys(cases: Mapping[str, Case], ids: Iterable[str]) -> list[str]:
    """The content keys (evaluation/samples.case_key) of the cases `ids`, sorted: what a run held."""
    from frames_cli.evaluation.samples import case_key

    return sorted({case_key(cases[cid]) for cid in ids if cid in cases})


def new_cases(state: RunState, cases: Mapping[str, Case], sealed: Iterable[str] = ()) -> list[str]:
    """Ids of the counted cases no diagnoser of the run could have seen, sorted: not among the run's
    ids, not the content of one of its cases under a new id (LoopMemory.case_keys; id alone for runs
    recorded before it), and not sealed (`evolution.split.test_cases`: the sealed set decides nothing)."""
    from frames_cli.evaluation.samples import case_key

    split = state.checkpoint.get("split") or {}
    held = set(split.get("diagnosis", [])) | set(split.get("selection", [])) | set(split.get("test", []))
    held |= set(state.checkpoint.get("eval_case_ids", []))
    keys, shut = set(state.checkpoint.get("case_keys", [])), set(sealed)
    return sorted(
        cid for cid, case in cases.items() if cid not in held and cid not in shut and case_key(case) not in keys
    )


def waiting(state: RunState, cases: Mapping[str, Case], sealed: Iterable[str] = ()) -> Wait | None:
    """The pending branch of `state` and how far it is from its next look; None when it has none."""
    rec = state.recommended()
    if rec is None or rec.status != "pending" or rec.member is None:
        return None
    step, _ = pending_settings(state)
    last = int(rec.looks[-1]["new_cases"]) if rec.looks else 0
    return Wait(
        state.run_id, rec.member, state.branch, len(new_cases(state, cases, sealed)), last + step, len(rec.looks),
        rec.words(),
    )


def decide_look(
    rec: Recommendation, unseen: tuple[Mapping[str, CaseOutcome], Mapping[str, CaseOutcome]],
    new: tuple[Mapping[str, CaseOutcome], Mapping[str, CaseOutcome]], k: int, max_looks: int,
) -> Recommendation:
    """The recommendation after one more look, from (S0, member) outcomes on the run's unseen
    selection cases and on the new cases (see the module docstring).

    Raises:
        ValueError: k < 1 or max_looks < 1.
    """
    if max_looks < 1:
        raise ValueError("max_looks must be at least 1")
    level = rec.alpha / max_looks
    gain = Tally.of({**unseen[0], **new[0]}, {**unseen[1], **new[1]}, k)
    on_new = Tally.of(new[0], new[1], k)
    loss = Tally.of(new[1], new[0], k)  # S0 in the member's place: evidence that the member is worse
    number = len(rec.looks) + 1
    if gain.p <= level:
        status = "final"
    elif loss.p <= level:
        status = "withdrawn"
    elif number >= max_looks:
        status = "unconfirmed"
    else:
        status = "pending"
    look = {
        "look": number, "at": utc_now(), "new_cases": on_new.cases, "new": on_new.to_json(),
        "unseen_and_new": gain.to_json(), "p_gain": gain.p, "p_loss": loss.p, "level": level, "status": status,
    }
    return Recommendation(rec.member, status, rec.alpha, rec.steps, rec.lacks, rec.rule, (*rec.looks, look), rec.note)


def look_at_pending(
    ws: Workspace, config: FramesConfig, store: GitStore, cases: Mapping[str, Case], sealed: Iterable[str],
    on_event: Callable[[Event], None], write_reports: Callable[[Workspace, GitStore, RunState], object],
    use_cache: bool = True,
) -> list[str]:
    """Look at every pending branch of the workspace that has enough new cases (under the caller's
    workspace lock); returns the ids of the runs looked at. `sealed` are the ids of the sealed test
    cases, which never count as new; `write_reports` writes a looked-at run's reports again (the
    caller's, evolution/report/report.py, which reads this rule's results and so sits
    above it). A run whose base or member commit is gone from the repository (refs/frames
    not fetched in a CI clone, say) is skipped with a warning: it blocks no later run.

    Raises:
        BudgetExceeded / ModelError: from the model calls (the run's state is unchanged).
    """
    from frames_cli.errors import GitError, InputError
    from frames_cli.evolution.state.runs import load_runs, save_state

    looked, sealed = [], set(sealed)
    for state in load_runs(ws, problems=[]):
        wait = waiting(state, cases, sealed)
        if wait is None:
            continue
        if wait.new < wait.needed:
            on_event(PendingWaiting(wait.line()))
            continue
        ids = new_cases(state, cases, sealed)
        rec = state.recommended()
        assert rec is not None and rec.member is not None
        _, max_looks = pending_settings(state)
        on_event(PendingLook(wait.branch, rec.member, len(ids), state.run_id))
        try:
            base_new, member_new = _score(
                ws, config, store, state, rec.member, [cases[c] for c in ids], len(rec.looks) + 1, use_cache
            )
        except (GitError, InputError) as exc:
            on_event(PendingSkipped(wait.branch, state.run_id, str(exc)))
            continue
        unseen = _unseen(ws, state, rec.member)
        after = decide_look(rec, unseen, (base_new, member_new), state.settings.samples, max_looks)
        state.recommendation = after.to_json()
        _after_look(store, state, after, on_event)
        write_reports(ws, store, state)
        save_state(ws, state)
        on_event(PendingLooked(wait.branch, rec.member, look_words(after.looks[-1])))
        looked.append(state.run_id)
    return looked


def _score(
    ws: Workspace, config: FramesConfig, store: GitStore, state: RunState, member: str, chosen: list[Case], number: int,
    use_cache: bool,
) -> tuple[dict[str, CaseOutcome], dict[str, CaseOutcome]]:
    """S0's and the member's outcomes on `chosen`, the run's k samples each, with the model client of the look's
    folder."""
    from frames_cli.evaluation.runner import evaluate
    from frames_cli.evolution.state.runs import run_dir
    from frames_cli.executor.factory import make_executor
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.sim.world import SimWorld, policy_texts
    from frames_cli.files.atomic import atomic_write_json

    k = state.settings.samples
    folder = run_dir(ws, state.run_id) / f"look-{number}"
    client = ModelClient(
        ws, config, run_dir=folder, use_cache=use_cache, sim_world=SimWorld.from_cases(chosen, policy_texts(ws))
    )
    try:
        executor = make_executor(ws, config, client)
        judge = client if config.models.judge else None
        out = []
        for cid, commit in ((BASE_ID, state.base), (member, state.candidate(member).commit)):
            skills = SkillSet.load_valid(store.read_files(commit))[0]
            results = [r.to_dict() for r in evaluate(chosen, skills, executor, samples=k, judge=judge).results]
            # Kept for the run's results.jsonl ("new" lines), so a recording replays the look.
            atomic_write_json(folder / f"{cid}.json", {"results": results})
            out.append(answered_outcomes(results))
    finally:
        client.close()
    return out[0], out[1]


def _unseen(ws: Workspace, state: RunState, member: str) -> tuple[dict[str, CaseOutcome], dict[str, CaseOutcome]]:
    """(S0, member) outcomes on the run's selection cases no diagnoser saw, from its kept evaluations."""
    import json

    from frames_cli.evolution.state.runs import run_dir

    split = state.checkpoint.get("split") or {}
    unseen = set(split.get("selection", [])) - set(split.get("diagnosis", []))
    evals = run_dir(ws, state.run_id) / "evals"
    out = []
    for cid in (BASE_ID, member):
        path = evals / f"{cid}.json"
        results = json.loads(path.read_text(encoding="utf-8"))["results"] if path.is_file() else []
        out.append({c: o for c, o in answered_outcomes(results).items() if c in unseen})
    return out[0], out[1]


def _after_look(store: GitStore, state: RunState, rec: Recommendation, on_event: Callable[[Event], None]) -> None:
    """A withdrawn branch is deleted (it no longer carries a recommendation) unless someone moved it,
    which is said and left as it is."""
    if rec.status == "withdrawn" and state.branch:
        if store.delete_branch(state.branch, state.candidate(rec.member or BASE_ID).commit):
            state.branch = None
        else:
            on_event(BranchMoved(state.branch, rec.member))
