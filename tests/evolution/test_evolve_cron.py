"""`frames evolve` run again and again (cron), in real temporary git repositories on the simulator.

Invariants:
1. A second `frames evolve` on the same base, cases and settings prints one "up to date" line and
   exits 0 without a new run folder, ref or model call (nothing under .frames/ changes);
   `--force` makes a new run.
2. A new case, a changed setting or a new base commit each start a new run; unchanged again, none.
3. A resumed run honours an explicit `--max-rounds`: the round in progress beyond it is dropped
   without a model call and the run ends with that many rounds.
4. A resumed run keeps its seed: a different `--seed` is refused with exit 2 and nothing is written.
5. A state.json from before the fingerprint still loads (fingerprint None) and is never up to date.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml


from helpers.airline import EvolveRepo, build_repo, make_cases, one_round_config, run_cli


def written(repo: EvolveRepo) -> tuple[dict[str, tuple[int, int]], str]:
    """(every file under .frames/ → (size, mtime ns), every ref with its commit)."""
    files = {str(p.relative_to(repo.root)): (p.stat().st_size, p.stat().st_mtime_ns)
             for p in (repo.root / ".frames").rglob("*") if p.is_file()}
    return files, repo.git("for-each-ref", "--format=%(refname) %(objectname)")


def run_ids(repo: EvolveRepo) -> list[str]:
    return sorted(p.name for p in (repo.root / ".frames" / "runs").iterdir())


def requests(repo: EvolveRepo, run_id: str) -> int:
    """Model requests of a run so far, answered by the provider or from the cache."""
    ledger = json.loads((repo.root / ".frames" / "runs" / run_id / "ledger.json").read_text())
    return sum(role["calls"] + role["cached"] for role in ledger["roles"].values())


def up_to_date_line(run_id: str, base: str) -> str:
    return (
        f"up to date: run {run_id} already evolved {base[:12]} with these cases and settings; use --force for a new run"
    )


def test_unchanged_inputs_make_no_run_and_force_makes_one(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws", one_round_config())
    first = run_cli(repo, "--json")
    assert first.exit_code == 0, first.output
    run_id = json.loads(first.stdout)["run_id"]
    before = written(repo)

    again = run_cli(repo)

    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines() == [up_to_date_line(run_id, repo.git("rev-parse", "HEAD"))]
    assert written(repo) == before
    as_json = json.loads(run_cli(repo, "--json").stdout)
    assert (as_json["up_to_date"], as_json["run_id"]) == (True, run_id)
    forced = run_cli(repo, "--force", "--json")
    assert forced.exit_code == 0, forced.output
    new = json.loads(forced.stdout)
    assert new["run_id"] != run_id and not new["resumed"] and not new["up_to_date"] and new["status"] == "finished"
    assert run_ids(repo) == sorted([run_id, new["run_id"]])
    assert requests(repo, new["run_id"]) > 0


def test_new_case_new_setting_or_new_base_start_a_new_run(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws", one_round_config())
    assert run_cli(repo).exit_code == 0
    cases = make_cases()
    cases.append({**cases[0], "id": "cancel-extra"})
    (repo.root / "cases" / "airline.yaml").write_text(yaml.safe_dump(cases, sort_keys=False))
    assert run_cli(repo).exit_code == 0
    assert len(run_ids(repo)) == 2
    config = one_round_config()
    config["evolution"]["patience"] = 1
    (repo.root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    assert run_cli(repo).exit_code == 0
    assert len(run_ids(repo)) == 3
    skill = repo.root / "skills" / "baggage" / "SKILL.md"
    skill.write_text(skill.read_text() + "- Silver members get two free checked bags.\n")
    repo.git("commit", "-q", "-am", "baggage: silver tier")
    before = set(run_ids(repo))
    assert run_cli(repo).exit_code == 0
    assert len(run_ids(repo)) == 4
    # Ids made within one second sort by their random suffix, so find the new one by difference.
    (fourth,) = set(run_ids(repo)) - before

    last = run_cli(repo)

    assert last.stdout.splitlines() == [up_to_date_line(fourth, repo.git("rev-parse", "HEAD"))]
    assert len(run_ids(repo)) == 4


def test_resume_honours_max_rounds_and_keeps_its_seed(evolve_repo: EvolveRepo) -> None:
    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.evolution.state.events import Event
    from frames_cli.evolution.state.round_events import RoundEvent
    from frames_cli.evolution.state.runs import load_run
    from frames_cli.workspace.layout import Workspace

    ws = Workspace.open(evolve_repo.root)
    stop_file = evolve_repo.root / ".frames" / "STOP"

    def stop_in_round_two(event: Event) -> None:
        if isinstance(event, RoundEvent) and event.round == 2:
            stop_file.touch()

    stopped = evolve(ws, EvolveOptions(), on_event=stop_in_round_two).state
    assert (stopped.status, stopped.round, stopped.checkpoint["pending"]["round"]) == ("stopped", 1, 2)
    before, calls = written(evolve_repo), requests(evolve_repo, stopped.run_id)

    refused = run_cli(evolve_repo, "--seed", "9")

    assert refused.exit_code == 2
    assert f"run {stopped.run_id} is unfinished (stopped) and keeps its seed 1" in refused.stderr
    assert written(evolve_repo) == before
    resumed = run_cli(evolve_repo, "--max-rounds", "1", "--seed", "1", "--json")
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout)
    assert (out["run_id"], out["resumed"], out["status"], out["stop_reason"]) == (
        stopped.run_id,
        True,
        "finished",
        "max_rounds",
    )
    state = load_run(ws, stopped.run_id)
    assert state.round == 1 and state.checkpoint["pending"] is None
    assert max(c.round for c in state.candidates) <= 1
    assert requests(evolve_repo, stopped.run_id) == calls


def test_a_state_without_fingerprint_loads_and_is_never_up_to_date(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws", one_round_config())
    first = json.loads(run_cli(repo, "--json").stdout)
    path = repo.root / ".frames" / "runs" / first["run_id"] / "state.json"
    old = json.loads(path.read_text())
    del old["fingerprint"]
    path.write_text(json.dumps(old))

    again = run_cli(repo, "--json")

    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["run_id"] != first["run_id"]
    from frames_cli.evolution.state.runs import read_state

    assert read_state(path).fingerprint is None
