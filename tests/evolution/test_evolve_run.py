"""`frames evolve` end to end on the simulator, in real temporary git repositories.

Invariants:
1. The run ends with a front, candidate commits under refs/frames/runs/<run>/, front tags, metric
   notes, a review branch and a deploy menu; the user's branch, index and working tree are as before;
   each rewriter sees the reviewer advice (priors.yaml) attached to its skill and no other.
2. A second run while one holds the lock exits 75 and names the holder.
3. A run killed with SIGKILL at several checkpoints and resumed ends with the same front as an
   uninterrupted run with the same seed, without repeating a finished model call.
4. A stop file stops the run after the current step; the next `frames evolve` resumes it.
5. A spent budget ends the run between model calls, with the round in progress dropped.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.evolution.state.checkpoint import CRASH_ENV

from helpers import init_git_repo

from helpers.airline import CONFIG, EvolveRepo, build_repo, write_workspace

FORK = multiprocessing.get_context("fork")


def run_cli(repo: EvolveRepo, *args: str):
    return CliRunner().invoke(app, ["evolve", "--repo", str(repo.root), *args])


def test_evolve_leaves_the_checkout_alone_and_publishes_candidates(evolve_repo: EvolveRepo) -> None:
    repo = evolve_repo
    (repo.root / "skills" / "baggage" / "SKILL.md").write_text("edited by the user, not committed\n")
    (repo.root / "notes.txt").write_text("staged\n")
    repo.git("add", "notes.txt")
    advice = {name: f"Advice-{name}: mention the policy section by name."
              for name in ("cancel-flight", "baggage", "compensation")}
    (repo.root / "priors.yaml").write_text(
        "version: 1\nskills:\n" + "".join(f"  {n}:\n    - text: '{t}'\n      source: {{kind: test, ref: r}}\n"
                                          for n, t in advice.items())
    )
    repo.git("add", "priors.yaml")
    before = (repo.git("status", "--porcelain"), repo.git("rev-parse", "HEAD"), repo.git("symbolic-ref", "HEAD"),
              repo.git("diff", "--cached"))

    result = run_cli(repo, "--json")

    assert result.exit_code == 0, result.output
    after = (repo.git("status", "--porcelain"), repo.git("rev-parse", "HEAD"), repo.git("symbolic-ref", "HEAD"),
             repo.git("diff", "--cached"))
    assert after == before
    menu = json.loads(result.stdout)
    run_id = menu["run_id"]
    from frames_cli.evolution.state.runs import load_run
    from frames_cli.workspace.layout import Workspace

    state = load_run(Workspace.open(repo.root), run_id)
    assert state.status == "finished" and state.front
    refs = repo.git("for-each-ref", "--format=%(refname)", f"refs/frames/runs/{run_id}/").split()
    assert {f"refs/frames/runs/{run_id}/{c.id}" for c in state.candidates} <= set(refs)
    assert {f"refs/frames/runs/{run_id}/front/{cid}" for cid in state.front} == {r for r in refs if "/front/" in r}
    children = [c for c in state.candidates if c.parent_id is not None]
    assert children, "the simulator's S0 misses half the rules: some child must be made"
    for child in children:
        trailers = repo.git("log", "-1", "--format=%(trailers:only,unfold)", child.commit)
        assert f"Frames-Run: {run_id}" in trailers and f"Frames-Candidate: {child.id}" in trailers
        note = json.loads(repo.git("notes", "--ref", "refs/notes/frames", "show", child.commit))
        assert note["runs"][run_id]["pass_rate"] == child.pass_rate
    from frames_cli.llm.store.audit import read_exchanges

    rewrites = [e for e in read_exchanges(repo.root / ".frames" / "runs" / run_id / "exchanges.jsonl")
                if e["role"] == "rewriter"]
    assert rewrites, "some skill must have been rewritten"
    for exchange in rewrites:
        skill = exchange["tag"].split("/")[2]
        prompt = "\n".join(m["content"] for m in exchange["messages"])
        assert [name for name, text in advice.items() if text in prompt] == [skill]
    best = state.best()
    if best.id != "r0c0":
        assert menu["branch"] == f"frames/{run_id}"
        assert repo.git("rev-parse", f"refs/heads/frames/{run_id}") == best.commit
    base = state.base_candidate()
    for cid in state.front:
        cand = state.candidate(cid)
        assert cand.parent_id is None or cand.gate_passed
        for cat, rate in base.per_category.items():
            assert cand.per_category[cat] >= 0.95 * rate - 1e-12


def test_skills_not_committed_at_the_base_are_refused_before_any_call(tmp_path: Path) -> None:
    # A new workspace folder in a repository with commits: S0 would be an empty skill set.
    repo = init_git_repo(tmp_path / "repo")
    repo.write("README.md", "monorepo\n")
    repo.git("add", "README.md")
    repo.git("commit", "-qm", "readme")
    write_workspace(repo.root / "teams" / "new")

    result = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root / "teams" / "new")])

    assert result.exit_code == 2, result.output
    assert "skills" in result.output and "commit them first" in result.output
    assert not (repo.root / "teams" / "new" / ".frames" / "runs").exists() or not any(
        (repo.root / "teams" / "new" / ".frames" / "runs").iterdir()
    )


def test_a_role_without_a_model_is_refused_before_any_run_is_made(tmp_path: Path) -> None:
    # Found on the first call instead, it failed a run that `frames runs` then listed, 0 rounds.
    config = {**CONFIG, "models": {"executor": "frames-sim/executor", "diagnoser": None, "rewriter": None}}
    repo = build_repo(tmp_path / "ws", config)

    result = run_cli(repo)

    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: {repo.root / 'frames.yaml'}: frames evolve needs a model for `models.diagnoser`, `models.rewriter`"
        " (any litellm model string, or frames-sim/<role> offline)"
    )
    assert not (repo.root / ".frames" / "runs").exists() or not any((repo.root / ".frames" / "runs").iterdir())


def test_second_run_exits_75_naming_the_holder(evolve_repo: EvolveRepo) -> None:
    from frames_cli.workspace.layout import Workspace
    from frames_cli.workspace.lock import workspace_lock

    held, release = FORK.Event(), FORK.Event()

    def hold() -> None:
        with workspace_lock(Workspace.open(evolve_repo.root), "20261129-000000-abcdef", "evolve"):
            held.set()
            release.wait(30)

    holder = FORK.Process(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        result = run_cli(evolve_repo)
    finally:
        release.set()
        holder.join(30)
    assert result.exit_code == 75
    assert "20261129-000000-abcdef" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def _evolve_in_child(root: Path, crash_after: int | None) -> int:
    """Run the driver in a forked process (litellm is already imported); returns its exit code."""

    def target() -> None:
        if crash_after is not None:
            os.environ[CRASH_ENV] = str(crash_after)
        else:
            os.environ.pop(CRASH_ENV, None)
        from frames_cli.evolution.run.driver import EvolveOptions, evolve
        from frames_cli.workspace.layout import Workspace

        evolve(Workspace.open(root), EvolveOptions())

    child = FORK.Process(target=target)
    child.start()
    child.join(120)
    return child.exitcode


def _outcome(repo: EvolveRepo) -> tuple[list, int]:
    """(front as (id, pass rate, tokens, skills tree), real model calls) of the repo's only run."""
    from frames_cli.evolution.state.runs import load_runs
    from frames_cli.workspace.layout import Workspace

    (state,) = load_runs(Workspace.open(repo.root))
    assert state.status == "finished"
    front = [(c.id, c.pass_rate, c.mean_tokens, repo.git("rev-parse", f"{c.commit}:skills"))
             for c in state.front_candidates()]
    ledger = json.loads((repo.root / ".frames" / "runs" / state.run_id / "ledger.json").read_text())
    return front, sum(role["calls"] for role in ledger["roles"].values())


def test_killed_and_resumed_run_matches_an_uninterrupted_one(tmp_path: Path) -> None:
    from frames_cli.llm.transport.providers import litellm_module

    litellm_module()  # import once here, so forked runs start fast
    straight, crashed = build_repo(tmp_path / "a"), build_repo(tmp_path / "b")
    assert _evolve_in_child(straight.root, None) == 0
    # Kill after S0's checkpoint, then mid-round twice (stage checkpoints), then let it finish.
    for crash_after in (1, 3, 4):
        assert _evolve_in_child(crashed.root, crash_after) == -signal.SIGKILL
    assert _evolve_in_child(crashed.root, None) == 0
    front_a, calls_a = _outcome(straight)
    front_b, calls_b = _outcome(crashed)
    assert front_b == front_a
    assert calls_b == calls_a


def test_stop_file_stops_after_the_current_step_and_the_next_run_resumes(evolve_repo: EvolveRepo) -> None:
    (evolve_repo.root / ".frames").mkdir()
    (evolve_repo.root / ".frames" / "STOP").touch()
    first = run_cli(evolve_repo, "--json")
    assert first.exit_code == 0, first.output
    stopped = json.loads(first.stdout)
    assert (stopped["status"], stopped["stop_reason"]) == ("stopped", "stop file")
    assert not (evolve_repo.root / ".frames" / "STOP").exists()
    second = run_cli(evolve_repo, "--json")
    resumed = json.loads(second.stdout)
    assert resumed["resumed"] and resumed["run_id"] == stopped["run_id"] and resumed["status"] == "finished"
    assert "changed since" not in second.stderr  # nothing was edited, and --json is no edit


def test_resuming_after_settings_or_cases_changed_says_so(evolve_repo: EvolveRepo) -> None:
    import yaml

    (evolve_repo.root / ".frames").mkdir()
    (evolve_repo.root / ".frames" / "STOP").touch()
    stopped = json.loads(run_cli(evolve_repo, "--json").stdout)
    config_file = evolve_repo.root / "frames.yaml"
    config = yaml.safe_load(config_file.read_text())
    config["evolution"]["tolerance"] = 0.1
    config_file.write_text(yaml.safe_dump(config))
    case_file = next((evolve_repo.root / "cases").glob("*.yaml"))
    case_file.write_text(case_file.read_text().replace("Quick question: ", "Quick one: ", 1))

    resumed = run_cli(evolve_repo, "--max-rounds", "2")

    assert resumed.exit_code == 0, resumed.output
    assert (
        f"warning: frames.yaml's evolution settings, the cases changed since run {stopped['run_id']} started; it goes "
        f"on as "
        "it started, and the next `frames evolve` after it finishes uses the new ones"
    ) in " ".join(resumed.stderr.split())


def test_a_resumed_run_keeps_the_lost_retries_it_started_with(tmp_path: Path) -> None:
    # eval.lost_retries was once read from frames.yaml on every resume, unlike every other setting.
    import copy

    import yaml

    config = copy.deepcopy(CONFIG)
    config["llm"]["max_retries"] = 0  # attempt numbers are then the lost-result retry numbers
    config["eval"] = {"lost_retries": 0}
    config["simulator"]["faults"] = {"timeout": 0.1}
    repo = build_repo(tmp_path / "ws", config)
    (repo.root / ".frames").mkdir()
    (repo.root / ".frames" / "STOP").touch()
    stopped = json.loads(run_cli(repo, "--json").stdout)
    assert stopped["status"] == "stopped"
    config["eval"]["lost_retries"] = 3
    (repo.root / "frames.yaml").write_text(yaml.safe_dump(config))

    resumed = run_cli(repo, "--max-rounds", "1", "--json")

    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] and "changed since" in resumed.stderr
    run = repo.root / ".frames" / "runs" / stopped["run_id"]
    exchanges = [json.loads(line) for line in (run / "exchanges.jsonl").read_text().splitlines()]
    resumed_at = next(
        i for i, e in enumerate(exchanges) if e["role"] == "diagnoser"
    )  # the stop came after S0's evaluation
    assert any(
        e["role"] == "executor" and e.get("error") for e in exchanges[resumed_at:]
    )  # the resumed run lost results
    assert {e["attempt"] for e in exchanges} == {0}  # and asked for none of them again
    assert json.loads((run / "state.json").read_text())["config"]["evolution"]["lost_retries"] == 0


def test_a_resumed_run_stages_early_rejection_as_it_started(tmp_path: Path, monkeypatch) -> None:
    # Early rejection looks after each batch of llm.concurrency cases; read at each start, a resume
    # with another concurrency stopped a child after other cases than the run would have.
    import copy

    import yaml

    from frames_cli.evolution.compare.early import EarlyRejection

    batches: list[int] = []
    staging = EarlyRejection.staging
    monkeypatch.setattr(EarlyRejection, "staging", lambda self, batch: batches.append(batch) or staging(self, batch))
    config = copy.deepcopy(CONFIG)
    config["llm"]["concurrency"] = 2
    repo = build_repo(tmp_path / "ws", config)
    (repo.root / ".frames").mkdir()
    (repo.root / ".frames" / "STOP").touch()
    stopped = json.loads(run_cli(repo, "--json").stdout)
    assert stopped["status"] == "stopped" and batches == []
    config["llm"]["concurrency"] = 8
    (repo.root / "frames.yaml").write_text(yaml.safe_dump(config))

    resumed = run_cli(repo, "--max-rounds", "2", "--json")

    assert resumed.exit_code == 0, resumed.output
    assert batches and set(batches) == {2}
    assert (
        json.loads((repo.root / ".frames" / "runs" / stopped["run_id"] / "state.json").read_text())["config"][
            "evolution"
        ]["stage_cases"]
        == 2
    )


def test_budget_ends_the_run_between_calls(tmp_path: Path) -> None:
    import yaml

    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.workspace.layout import Workspace

    from helpers.airline import CONFIG

    config = yaml.safe_load(yaml.safe_dump(CONFIG))
    config["budget"] = {"max_tokens": 30000}
    repo = build_repo(tmp_path / "ws", config)
    state = evolve(Workspace.open(repo.root), EvolveOptions()).state
    assert (state.status, state.stop_reason) == ("finished", "budget")
    assert state.checkpoint["pending"] is None
    assert 30000 <= state.spend_tokens < 45000  # in-flight calls finish, nothing after them (a full run: ~50,000)
