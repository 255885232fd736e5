"""The commit stage's git side: candidate commits with DESIGN §6 messages, metric notes, run refs, the review branch."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from frames_cli.evolution.compare.verdict import gate_detail
from frames_cli.evolution.propose.consensus import Blueprint
from frames_cli.evolution.round.record import RoundRecord
from frames_cli.evolution.state.records import Candidate, RunState
from frames_cli.evolution.state.run_ids import BASE_ID, candidate_ref, review_branch
from frames_cli.sanitize import one_line

if TYPE_CHECKING:
    from frames_cli.gitstore.identity import Identity
    from frames_cli.gitstore.store import GitStore


def front_ref(run_id: str, cid: str) -> str:
    """`refs/frames/runs/<run>/front/<cid>`: the tag of a current front member."""
    return f"refs/frames/runs/{run_id}/front/{cid}"


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.1f}%"


def candidate_message(state: RunState, child: Candidate, r: RoundRecord, models: dict[str, str | None]) -> str:
    """The commit message of a child (DESIGN §6).

    Summary line; per skill what changed and why, the motivating case ids and the votes; changes
    the validator dropped and skills below the vote threshold; pass rates per category for S0, the
    parent and the child; mean tokens per case; the gate verdict; trailers Frames-Run,
    Frames-Parent, Frames-Candidate and Frames-Models. Credentials are redacted (DESIGN §10); model
    text (changes, rationales, drop reasons) is `sanitize.one_line` after a prefix, so it cannot
    add a trailer, a comment line or a control character.
    """
    from frames_cli.gitstore.message import commit_message

    s0, parent = state.candidate(BASE_ID), state.candidate(child.parent_id or BASE_ID)
    verdict = "pass" if child.gate_passed else "fail"
    cut = f" ({child.cut_from} without {', '.join(sorted(child.left_out))})" if child.cut_from else ""
    summary = (
        f"frames: {child.id} rewrites {', '.join(child.changed_skills)}{cut} "
        f"({_pct(parent.pass_rate)} → {_pct(child.pass_rate)}, gate {verdict})"
    )
    d = child.diagnosers
    lines = [
        f"Blueprint: what the diagnosers proposed and the rewriter was asked to do; the diff is what it wrote"
        f" (a skill is rewritten only when at least {child.votes_needed} of {d} diagnosers propose it):"
    ]
    for bp in (Blueprint.from_json(b) for b in child.blueprints):
        kind = "new skill" if bp.new_skill else "changed"
        lines.append(f"- {bp.skill} ({kind}; votes {bp.votes} of {d}; cases {', '.join(bp.case_ids)})")
        for ch in bp.changes:
            # Model text, one line behind a prefix: it can never form a trailer or a comment line.
            conflict = f"conflict ({one_line(ch.conflict)}): " if ch.conflict else ""
            lines.append(f"  - {conflict}{one_line(ch.change)}")
            lines.append(
                f"    votes {ch.votes}: diagnosers {', '.join(map(str, ch.diagnosers))}; cases {', '.join(ch.case_ids)}"
            )
            if len(ch.wordings) > 1:
                lines += [f"    worded as: {one_line(w)}" for w in ch.wordings]
            lines += [f"    why: {one_line(why)}" for why in ch.rationales] or ["    why: no rationale given"]
    lines += [f"- {skill}: change dropped ({one_line(why)})" for skill, why in sorted(child.dropped.items())]
    lines += _left_out_lines(child)
    if r.rejected:
        lines.append(
            "Below the vote threshold: " + ", ".join(f"{k} ({v} of {d})" for k, v in sorted(r.rejected.items()))
        )
    held_out = not (state.checkpoint.get("split") or {}).get("paper", True)
    lines += [
        "",
        f"Pass rate per category{' on the selection set' if held_out else ''} (S0 {s0.id} → parent {parent.id} → "
        f"child {child.id}):",
    ]
    for cat in sorted(s0.per_category):
        lines.append(
            f"- {cat}: {_pct(s0.per_category[cat])} → {_pct(parent.per_category.get(cat))} → "
            f"{_pct(child.per_category.get(cat))}"
        )
    lines.append(f"- overall: {_pct(s0.pass_rate)} → {_pct(parent.pass_rate)} → {_pct(child.pass_rate)}")
    lines += _set_lines(state, s0, parent, child)
    lines.append(f"Mean tokens per case: {s0.mean_tokens:.0f} → {parent.mean_tokens:.0f} → {child.mean_tokens:.0f}")
    gate = child.gate_details
    detail = gate_detail(gate)
    rule = " and a significant drop (noise-aware)" if gate.get("rule") == "noise-aware" else ""
    lines.append(f"Gate (PR_c(child) ≥ (1 − ε)·PR_c(S0){rule}, ε = {gate.get('tolerance', 0):g}): {verdict}, {detail}")
    trailers = {
        "Frames-Run": state.run_id,
        "Frames-Parent": f"{parent.id} {parent.commit}",
        "Frames-Candidate": child.id,
        "Frames-Models": ", ".join(f"{role}={m}" for role, m in sorted(models.items()) if m) or "none",
    }
    # Rationales are model text: redact credentials a model may echo before they reach git.
    from frames_cli.llm.store.audit import Redactor

    return Redactor()(commit_message(summary, "\n".join(lines), trailers))


def _left_out_lines(child: Candidate) -> list[str]:
    """For a sub-child: which rewrites of the child it was cut from
    it leaves out, and the broken cases that implicated each."""
    if not child.cut_from:
        return []
    lines = [
        f"Left out of {child.cut_from} (it failed the gate or is off the front; its broken cases loaded these "
        "rewrites):"
    ]
    return lines + [
        f"- {skill}: rewrite left out; implicated by {', '.join(cases)}"
        for skill, cases in sorted(child.left_out.items())
    ]


def _set_lines(state: RunState, s0: Candidate, parent: Candidate, child: Candidate) -> list[str]:
    """Pass rate on each set side by side (S0 → parent → child); none for a run on the paper's single set E."""
    if (state.checkpoint.get("split") or {}).get("paper", True):
        return []
    lines = ["Pass rate per set (the gate and the front use the selection set; diagnosers saw only the diagnosis set):"]
    for name in ("diagnosis", "selection"):
        rates = [c.sets.get(name, {}).get("pass_rate") for c in (s0, parent, child)]
        lines.append(
            f"- {name} set ({child.sets.get(name, {}).get('cases', 0)} cases): " + " → ".join(_pct(r) for r in rates)
        )
    return lines


def commit_candidate(
    store: GitStore, state: RunState, child: Candidate, r: RoundRecord, changes: dict[str, bytes],
    models: dict[str, str | None],
) -> str:
    """Commit the child on top of its parent's commit under `refs/frames/runs/<run>/<id>`; returns the sha.

    The commit date is the run's start time, so redoing this step after a crash gives the same sha.
    """
    parent_sha = state.candidate(r.parent).commit
    message = candidate_message(state, child, r, models)
    ref = candidate_ref(state.run_id, child.id)
    # under="skills/": the storage layer refuses any other path, a second guard behind plan_changes.
    return store.commit_files(
        parent_sha, dict(changes), message, ref, date=datetime.fromisoformat(state.started), under="skills/"
    )


def add_metrics_note(store: GitStore, state: RunState, cand: Candidate) -> None:
    """Put the candidate's metrics in its git note (refs/notes/frames), keyed by run id.

    The note is JSON `{"runs": {<run>: {...}}, "gate_overrides": [...]}`; entries of other runs on
    the same commit (the base commit is S0 of every run started from it, in any workspace of the
    repository) and the gate overrides (`record_gate_override`) are kept.
    """
    metrics = {
        "candidate": cand.id,
        "parent": cand.parent_id,
        "pass_rate": cand.pass_rate,
        "per_category": cand.per_category,
        "mean_tokens": cand.mean_tokens,
        "cost_usd": cand.cost_usd,
        "gate": cand.gate_details or None,
        "changed_skills": cand.changed_skills,
        "sets": cand.sets,
    }
    if cand.attribution:
        metrics["attribution"] = cand.attribution
    if cand.cut_from:
        metrics.update(cut_from=cand.cut_from, left_out=cand.left_out)

    def edit(note: dict[str, Any]) -> dict[str, Any]:
        runs = _dict_at(note, "runs")
        return {**note, "runs": {**runs, state.run_id: metrics}}

    _edit_note(store, cand.commit, edit)


def record_gate_override(
    store: GitStore, state: RunState, cand: Candidate, *, reason: str, branch: str, by: Identity
) -> dict[str, Any]:
    """Record in the candidate's note that `by` promoted it to `branch` although it failed the gate.

    The entry `{"run", "candidate", "branch", "failed" (categories), "reason", "by" ("Name <email>"),
    "at" (ISO 8601 UTC)}` is appended to the note's `gate_overrides`, and the note commit under
    refs/notes/frames is authored by `by`, so `git log refs/notes/frames` names them too. The same
    override again (run, candidate, branch, reason and person) is not recorded twice. Returns the
    entry (the earlier one when it was already there).

    Raises:
        GitError: git refused to write the note.
    """
    from frames_cli.evolution.state.records import utc_now

    entry = {"run": state.run_id, "candidate": cand.id, "branch": branch, "failed": cand.failed_categories(),
             "reason": reason, "by": f"{by.name} <{by.email}>", "at": utc_now()}
    same = ("run", "candidate", "branch", "reason", "by")
    found: list[dict[str, Any]] = []

    def edit(note: dict[str, Any]) -> dict[str, Any] | None:
        overrides = _list_at(note, "gate_overrides")
        found[:] = [o for o in overrides if isinstance(o, dict) and all(o.get(k) == entry[k] for k in same)][:1]
        return None if found else {**note, "gate_overrides": [*overrides, entry]}

    _edit_note(store, cand.commit, edit, author=by)
    return found[0] if found else entry


def gate_overrides(store: GitStore, state: RunState, cand: Candidate) -> list[dict[str, Any]]:
    """The `record_gate_override` entries of this run's candidate `cand`, oldest first."""
    overrides = _note_object(store.read_note(cand.commit)).get("gate_overrides")
    if not isinstance(overrides, list):
        return []
    return [
        o for o in overrides if isinstance(o, dict) and o.get("run") == state.run_id and o.get("candidate") == cand.id
    ]


def merge_note_texts(ours: str, theirs: str) -> str:
    """One frames note from two versions of the same commit's note: ours (local) and theirs (a
    remote's, written by another host: an earlier CI job started from the same base commit).

    `runs` is united (ours wins a run both hold, as the local run is the one being published),
    `gate_overrides` and `published` keep every entry of both in order, other keys are ours. A side
    that is not a JSON object yields to the other; when neither is, ours is kept as it is.
    """
    mine, other = _note_object(ours), _note_object(theirs)
    if not mine and not other:
        return ours
    merged = {**other, **mine}
    runs = [_dict_at(n, "runs") for n in (other, mine)]
    if any(runs):
        merged["runs"] = {**runs[0], **runs[1]}
    for key in ("gate_overrides", "published"):
        lists = [_list_at(n, key) for n in (mine, other)]
        if any(lists):
            merged[key] = lists[0] + [entry for entry in lists[1] if entry not in lists[0]]
    return json.dumps(merged, indent=2, sort_keys=True) + "\n"


def record_publication(store: GitStore, state: RunState, cand: Candidate, *, branch: str, remote: str) -> None:
    """Record in the candidate's note that `frames publish` pushed it as `branch` to `remote` (a URL
    without credentials): `{"run", "candidate", "branch", "remote", "commit", "at"}` appended to the
    note's `published` list, once per run, branch, remote and commit.

    Raises:
        GitError: git refused to write the note.
    """
    from frames_cli.evolution.state.records import utc_now

    entry = {"run": state.run_id, "candidate": cand.id, "branch": branch, "remote": remote, "commit": cand.commit}

    def edit(note: dict[str, Any]) -> dict[str, Any] | None:
        done = _list_at(note, "published")
        if any(isinstance(p, dict) and all(p.get(k) == v for k, v in entry.items()) for p in done):
            return None
        return {**note, "published": [*done, {**entry, "at": utc_now()}]}

    _edit_note(store, cand.commit, edit)


def published_to(store: GitStore, cand: Candidate, branch: str, remote: str) -> bool:
    """Whether the candidate's note records that `branch` was published to `remote` before."""
    done = _note_object(store.read_note(cand.commit)).get("published")
    return isinstance(done, list) and any(
        isinstance(p, dict) and p.get("branch") == branch and p.get("remote") == remote for p in done
    )


def _dict_at(note: dict[str, Any], key: str) -> dict[str, Any]:
    """`note[key]` when it is a JSON object, else {}: a note another version or tool wrote may hold anything."""
    value = note.get(key)
    return value if isinstance(value, dict) else {}


def _list_at(note: dict[str, Any], key: str) -> list[Any]:
    """`note[key]` when it is a JSON array, else []."""
    value = note.get(key)
    return value if isinstance(value, list) else []


def _note_object(text: str | None) -> dict[str, Any]:
    """The JSON object a note's `text` holds; {} for no note, bad JSON or JSON that is not an object."""
    try:
        note = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return note if isinstance(note, dict) else {}


def _edit_note(
    store: GitStore, sha: str, edit: Callable[[dict[str, Any]], dict[str, Any] | None], author: Identity | None = None
) -> None:
    """Replace commit `sha`'s frames note with `edit(its JSON object)` as stable, indented JSON,
    under the repository's notes lock (`GitStore.edit_note`: runs of other workspaces write notes
    too); nothing is written when `edit` returns None. Note author: frames unless `author` is given."""
    from frames_cli.gitstore.identity import FRAMES_IDENTITY

    def edit_text(text: str | None) -> str | None:
        note = edit(_note_object(text))
        return None if note is None else json.dumps(note, indent=2, sort_keys=True) + "\n"

    store.edit_note(sha, edit_text, author=author or FRAMES_IDENTITY)


def publish_s0(store: GitStore, state: RunState, c0: Candidate) -> None:
    """Record S0 (the base commit) under the run's refs and note its metrics."""
    store.set_ref(candidate_ref(state.run_id, c0.id), c0.commit)
    add_metrics_note(store, state, c0)


def discard_run(store: GitStore, state: RunState) -> None:
    """Remove what a run published in git: its refs under refs/frames/runs/<run>/ and its entry in
    its candidates' notes (other runs' entries and gate overrides stay). For a run that never got
    going (a provider refused the model), so it leaves no record."""
    for ref in store.list_refs(f"refs/frames/runs/{state.run_id}/"):
        store.delete_ref(ref)

    def edit(note: dict[str, Any]) -> dict[str, Any] | None:
        runs = _dict_at(note, "runs")
        if state.run_id not in runs:
            return None
        return {**note, "runs": {k: v for k, v in runs.items() if k != state.run_id}}

    for cand in state.candidates:
        if cand.commit:
            _edit_note(store, cand.commit, edit)


def publish_front(store: GitStore, state: RunState) -> None:
    """Make refs/frames/runs/<run>/front/ name exactly the current front members."""
    wanted = {front_ref(state.run_id, cid): state.candidate(cid).commit for cid in state.front}
    for ref in store.list_refs(f"refs/frames/runs/{state.run_id}/front/"):
        if ref not in wanted:
            store.delete_ref(ref)
    for ref, sha in wanted.items():
        store.set_ref(ref, sha)


def publish_best(store: GitStore, state: RunState) -> str | None:
    """Point branch `frames/<run>` at the best front member, unless that is S0 (nothing to review).

    Returns:
        The branch's short name (also stored in `state.branch`), or None when no child beat S0.
    """
    best = state.best()
    if best is None or best.id == BASE_ID:
        return None
    state.branch = review_branch(state.run_id)
    store.create_branch(state.branch, best.commit, force=True)
    return state.branch
