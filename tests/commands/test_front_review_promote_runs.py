"""`frames runs`, `front`, `review` and `promote` on a synthetic run: real candidate commits made with
GitStore, a RunState built from the records dataclasses and saved to disk, the commands run through
typer's CliRunner.

Invariants:
1. What the commands print comes from the saved run and from git (diff sizes equal `git diff --numstat`).
2. `frames promote` creates a branch at the candidate and changes nothing else: HEAD, the checked-out
   branch, the index and `git status` stay as they were; it never moves or overwrites a branch.
3. Bad input (unknown run or candidate, unsafe branch name, S0, a failed gate) exits 2 with a message.
4. `--override-gate REASON` promotes a candidate that failed the gate only with a reason and a git
   identity, and records who, why and when in the candidate's note, where `frames review` shows it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import pytest
from typer.testing import CliRunner
from helpers.review_world import OLD_RUN, RULE, RUN, invoke, review_markdown_of

from frames_cli.commands.app import app
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.state.runs import save_state
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.layout import Workspace

def _user_view(repo) -> tuple:
    index = hashlib.sha256((repo.root / ".git" / "index").read_bytes()).hexdigest()
    # --no-optional-locks: a plain `git status` may itself rewrite the index to refresh stat data.
    status = repo.git("--no-optional-locks", "status", "--porcelain")
    return repo.git("rev-parse", "HEAD"), repo.git("symbolic-ref", "HEAD"), status, index


def test_runs_lists_both_runs(world):
    result = invoke(world, "runs", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["run_id"], r["status"], r["best_id"], r["best_pass_rate"], r["spend_tokens"]) for r in rows] == [
        (OLD_RUN, "failed", BASE_ID, 0.5, 0),
        (RUN, "finished", "r2c1", 0.875, 12345),
    ]
    table = invoke(world, "runs")
    assert table.exit_code == 0
    rows = [line.split() for line in table.stdout.splitlines()]
    assert [RUN, "finished", "2", "12k", "$0.2500", "50.0%", "→", "87.5%"] in rows
    assert ["(patience)", "(r2c1)"] in rows


def test_runs_fits_80_columns_without_breaking_words(world):
    table = CliRunner().invoke(app, ["runs", "--repo", str(world.root)], env={"COLUMNS": "80"})
    assert table.exit_code == 0
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
    assert [OLD_RUN, "failed", "0", "0", "—", "50.0%", "→", "50.0%"] in [
        line.split() for line in table.stdout.splitlines()
    ]


def test_runs_reports_a_damaged_run_and_goes_on(world):
    damaged = world.root / ".frames" / "runs" / "20261130-000000-eeeeee" / "state.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text("[")
    result = invoke(world, "runs", "--json")
    assert result.exit_code == 0
    assert len(json.loads(result.stdout)) == 2
    assert f"warning: {damaged}:1: not valid JSON" in result.stderr


def test_every_command_takes_the_run_started_last_as_the_newest(world):
    """Run ids that sort opposite to the start order: SKEWED has the highest id but started first
    (a clock set back); TWIN started in the same second as RUN, with a lower random suffix, and
    wrote its state after RUN's. The newest run is TWIN for every command; `runs` lists it last."""
    skewed, twin = "20261129-235959-ffffff", "20261129-101500-000000"
    ws = Workspace(world.root)
    save_state(ws, dataclasses.replace(world.state, run_id=skewed, started="2026-11-29T09:00:00+00:00"))
    save_state(ws, dataclasses.replace(world.state, run_id=twin, status="stopped", stop_reason="SIGTERM"))
    for run_id, written in ((RUN, 1_000), (twin, 2_000)):
        os.utime(ws.runs_dir / run_id / "state.json", (written, written))
    runs = invoke(world, "runs", "--json")
    assert [r["run_id"] for r in json.loads(runs.stdout)] == [OLD_RUN, skewed, RUN, twin]
    assert json.loads(invoke(world, "front", "--json").stdout)["run_id"] == twin
    assert json.loads(invoke(world, "status", "--json").stdout)["last_run"]["run_id"] == twin
    assert json.loads(invoke(world, "review", "r1c1", "--json").stdout)["run_id"] == twin
    assert json.loads(invoke(world, "promote", "r1c1", "--json").stdout)["branch"] == f"frames/{twin}-r1c1"


def test_front_json_matches_git(world):
    result = invoke(world, "front", "--json")
    assert result.exit_code == 0, result.output
    menu = json.loads(result.stdout)
    assert menu["run_id"] == RUN and menu["categories"] == ["cancel", "refund"]
    assert [(r["id"], r["best"], r["changed_skills"]) for r in menu["front"]] == [
        ("r1c1", False, ["cancel"]),
        ("r2c1", True, ["cancel", "rebook"]),
    ]
    for row in menu["front"]:
        numstat = world.git("diff", "--numstat", world.state.base, row["commit"], "--", "skills/").splitlines()
        assert row["diff_size"] == sum(int(a) + int(d) for a, d, _ in (line.split("\t") for line in numstat))


def test_front_table_and_errors(world):
    result = invoke(world, "front", RUN)
    assert result.exit_code == 0, result.output
    assert "r2c1 ★" in result.stdout and "100.0%" in result.stdout and "r2c1: cancel, rebook" in result.stdout
    assert (
        "S0 is r0c0, the base commit" in result.stdout
        and "shown for reference (it is not on the front)" in result.stdout
    )
    assert f"frames review {RUN}/r2c1" in result.stdout
    old = invoke(world, "front", OLD_RUN)
    assert old.exit_code == 0 and "S0 is still the best" in old.stdout
    missing = invoke(world, "front", "20990101-000000-abcdef")
    assert missing.exit_code == 2 and "no run 20990101-000000-abcdef" in missing.stderr
    bad = invoke(world, "front", "../../etc")
    assert bad.exit_code == 2 and "not a run id" in bad.stderr


def test_review_markdown_has_what_a_reviewer_needs(world):
    text = review_markdown_of(world, "r1c1")
    assert "## frames candidate r1c1 — run " + RUN in text
    assert "- `case-7` (cancel): expected 'cancelled', got 'refunded' — cancelled the wrong booking" in text
    assert f'Add the rule: "{RULE}"' in text and "votes 2 of 3 (needed 2)" in text
    assert "policy back-link: policies/airline.md:4-5 Airline Policy > Cancel" in text
    assert "(policy text changed since)" not in text
    assert "| cancel | 25.0% | 25.0% | 75.0% | 23.8% | pass |" in text
    assert "**Gate:** **pass**" in text and "ε = 0.05" in text
    assert f"+{RULE}" in text and "```diff" in text
    assert f"frames promote {RUN}/r1c1" in text
    assert "Models: rewriter=frames-sim/rewriter" in text


def test_review_of_a_rejected_candidate_shows_the_failed_category_and_stale_policy(world):
    text = review_markdown_of(world, f"{RUN}/r1c2")
    assert "**FAIL** — below (1 − ε)·S0 in refund" in text
    assert "| refund | 75.0% | 75.0% | 50.0% | 71.2% | **FAIL** |" in text
    assert "policies/airline.md:8 Airline Policy > Refund (policy text changed since)" in text
    # The cases that decided it are named, not only counted.
    assert "- refund: pass → fail `case-4`; fail → pass none" in text
    assert "- cancel: pass → fail none; fail → pass `case-1`, `case-2`" in text


def test_review_by_commit_json_and_terminal(world):
    sha = world.state.candidate("r2c1").commit
    result = invoke(world, "review", sha[:10], "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["candidate"]["id"] == "r2c1" and data["parent"]["id"] == "r1c1"
    assert [s["name"] for s in data["skills"]] == ["cancel", "rebook"]
    assert data["trailers"] == {}
    assert data["diff"] == world.git("diff", world.state.candidate("r1c1").commit, sha, "--", "skills/")
    assert "policy back-link: ../outside.md:1 Elsewhere (outside the workspace: not checked)" in review_markdown_of(
        world, "r2c1"
    )
    terminal = invoke(world, "review", "r2c1")
    assert terminal.exit_code == 0 and "Blueprint" in terminal.stdout and "change dropped" in terminal.stdout


def test_review_in_a_narrow_terminal_wraps_instead_of_cropping(world):
    result = CliRunner().invoke(app, ["review", "r1c1", "--repo", str(world.root)], env={"COLUMNS": "40"})
    assert result.exit_code == 0
    assert "got 'refunded' — cancelled the wrong booking" in " ".join(result.stdout.split())


def test_review_markdown_and_json_exclude_each_other(world):
    result = invoke(world, "review", "r1c1", "--markdown", "-", "--json")
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --json and --markdown - cannot share standard output; choose one"


@pytest.mark.parametrize(("spec", "message"),
                         [("r9c9", "no run has a candidate"), ("deadbeef", "neither a candidate id nor a commit")])
def test_review_unknown_candidate(world, spec, message):
    result = invoke(world, "review", spec)
    assert result.exit_code == 2 and message in result.stderr


def test_promote_creates_a_branch_and_touches_nothing_else(world):
    world.write("skills/cancel/SKILL.md", "a local edit\n")
    before = _user_view(world)
    result = invoke(world, "promote", "r2c1", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["branch"] == f"frames/{RUN}-r2c1"
    assert world.git("rev-parse", out["branch"]) == world.state.candidate("r2c1").commit
    again = invoke(world, "promote", f"{RUN}/r2c1", "--json")
    assert again.exit_code == 0
    named = invoke(world, "promote", "r1c1", "--branch", "review/cancel-rule")
    assert named.exit_code == 0 and "git merge review/cancel-rule" in named.stdout
    assert _user_view(world) == before


def test_promote_refusals(world):
    before = _user_view(world)
    branches = world.git("for-each-ref", "refs/heads/")
    cases = [
        (["promote", "r1c1", "--branch", "main"], 1, "checked out"),
        (["promote", "r0c0"], 2, "S0"),
        (["promote", "r1c2"], 2, "did not pass the gate (below the floor in refund); see `frames review"),
        (["promote", "r1c1", "--branch", "../etc"], 2, "unsafe"),
        (["promote", "r1c1", "--branch", "-f"], 2, "unsafe"),
        (["promote", "r1c1", "--branch", "a b"], 2, "unsafe"),
    ]
    for args, code, message in cases:
        result = invoke(world, *args)
        assert (result.exit_code, message in result.stderr) == (code, True), (args, result.stderr)
    assert world.git("for-each-ref", "refs/heads/") == branches
    assert invoke(world, "promote", "r1c1", "--branch", "taken").exit_code == 0
    clash = invoke(world, "promote", "r2c1", "--branch", "taken")
    assert clash.exit_code == 1 and "already exists" in clash.stderr
    assert world.git("rev-parse", "taken") == world.state.candidate("r1c1").commit
    assert _user_view(world) == before


def test_promote_override_gate_records_who_why_and_when(world):
    from frames_cli.evolution.round.commit import add_metrics_note

    before, branches = _user_view(world), world.git("for-each-ref", "refs/heads/")
    rejected = world.state.candidate("r1c2")
    reason = "Refund rule changed on purpose (COMP-12, <legal>); the *refund* drop was reviewed and accepted"
    for args, message in [
        (["r1c2", "--override-gate", "  "], "--override-gate needs a reason"),
        (["r0c0", "--override-gate", reason], "is S0"),
        (["r9c9", "--override-gate", reason], "no run has a candidate"),
    ]:
        result = invoke(world, "promote", *args)
        assert (result.exit_code, message in result.stderr) == (2, True), (args, result.stderr)
    # Without a git identity, nobody would be named: refused, nothing written.
    world.git("config", "--unset", "user.name")
    world.git("config", "user.useConfigOnly", "true")
    anonymous = CliRunner().invoke(
        app, ["promote", "r1c2", "--override-gate", reason, "--repo", str(world.root)],
        env={"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_COMMITTER_NAME": None,
             "GIT_COMMITTER_EMAIL": None},
    )
    assert anonymous.exit_code == 2 and "git knows no identity" in anonymous.stderr
    world.git("config", "user.name", "Test User")
    assert world.git("for-each-ref", "refs/heads/") == branches
    assert world.git("notes", "--ref", "refs/notes/frames", "list") == ""

    result = invoke(world, "promote", "r1c2", "--override-gate", reason, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert world.git("rev-parse", out["branch"]) == rejected.commit
    record = out["gate_override"]
    assert {k: v for k, v in record.items() if k != "at"} == {
        "run": RUN, "candidate": "r1c2", "branch": f"frames/{RUN}-r1c2", "failed": ["refund"], "reason": reason,
        "by": "Test User <test@example.com>",
    }
    assert " ".join(result.stderr.split()) == (
        f"warning: {RUN}/r1c2 did not pass the gate (below the floor in refund); promoted on the override of Test User "
        f"<test@example.com>: {reason}"
    )
    # Durable: in the candidate's note, written by that person; running it again adds no second record.
    assert invoke(world, "promote", "r1c2", "--override-gate", reason).exit_code == 0
    note = json.loads(world.git("notes", "--ref", "refs/notes/frames", "show", rejected.commit))
    assert note["gate_overrides"] == [record]
    assert world.git("log", "--format=%an <%ae>", "refs/notes/frames") == "Test User <test@example.com>"
    # A later run's metrics on the same commit keep it.
    add_metrics_note(GitStore(world.root), dataclasses.replace(world.state, run_id="20261201-000000-cccccc"), rejected)
    assert json.loads(world.git("notes", "--ref", "refs/notes/frames", "show", rejected.commit))["gate_overrides"] == [
        record
    ]

    text = review_markdown_of(world, f"{RUN}/r1c2")
    escaped = reason.replace("<", "\\<").replace(">", "\\>").replace("*", "\\*")
    assert (
        f"**Gate overridden** by Test User \\<test@example.com\\> at {record['at']} (branch `frames/{RUN}-r1c2`, "
        f"failed: refund): {escaped}"
        in text
    )
    # The terminal shows the reason as written: nothing taken for an HTML tag or emphasis.
    shown = invoke(world, "review", f"{RUN}/r1c2")
    assert shown.exit_code == 0 and f"Test User <test@example.com> at {record['at']}" in " ".join(shown.stdout.split())
    assert reason in " ".join(shown.stdout.split())
    assert json.loads(invoke(world, "review", f"{RUN}/r1c2", "--json").stdout)["gate_overrides"] == [record]
    assert "Gate overridden" not in review_markdown_of(world, "r1c1")
    assert _user_view(world) == before


def test_review_lists_policy_sentences_changed_and_proposals_dropped(world):
    from frames_cli.evolution.report.review import build_review
    from frames_cli.evolution.report.review_markdown import review_markdown
    from frames_cli.gitstore.store import GitStore
    from frames_cli.workspace.layout import Workspace

    assert "### Policy sentences removed or changed\n\n- none\n" in review_markdown_of(world, "r1c1")
    cand = world.state.candidate("r1c1")
    cand.policy_changes = [{"skill": "cancel", "sentence": "Refunds take 7 days.", "source": "policies/airline.md:8-8",
                            "kind": "removed", "asked_by": 'Remove "Refunds take 7 days."', "case_ids": ["case-7"]}]
    cand.dropped_proposals = [
        "proposal 0 for `cancel` (diagnoser 1): carries a case value: `H8Q05L` (from case case-7)"
    ]
    ws = Workspace.open(world.root)
    text = review_markdown(build_review(ws, GitStore(ws.root), world.state, cand))
    assert '- `cancel` removed "Refunds take 7 days." (policies/airline.md:8-8)' in text
    assert "  - asked by the blueprint line: Remove \"Refunds take 7 days.\"; cases `case-7`" in text
    # model text is escaped for Markdown (md_text), backticks included
    assert (
        "### Proposals dropped before the vote\n\n- proposal 0 for \\`cancel\\` (diagnoser 1): carries a case value: "
        "\\`H8Q05L\\`"
        in text
    )


def test_a_category_the_child_never_ran_reads_not_evaluated_and_its_rate_its_own_n(world):
    """An early-rejected child: the gate passes a category whose floor is 0 without the child
    running it, and its overall rate is over the cases it ran, not S0's n."""
    from frames_cli.evolution.report.review import build_review
    from frames_cli.evolution.report.review_markdown import review_markdown
    from frames_cli.gitstore.store import GitStore
    from frames_cli.workspace.layout import Workspace

    cand = world.state.candidate("r1c2")
    checks = cand.gate_details["checks"]
    skipped = next(c for c in checks if c["passed"])["category"]
    cand.per_category = {c: r for c, r in cand.per_category.items() if c != skipped}
    cand.case_counts = dict.fromkeys(cand.per_category, 2)  # the cases it ran
    ws = Workspace.open(world.root)
    text = review_markdown(build_review(ws, GitStore(ws.root), world.state, cand))
    row = next(line for line in text.splitlines() if line.startswith(f"| {skipped} "))
    assert "| — |" in row and "| pass (not evaluated) |" in row
    overall = next(line for line in text.splitlines() if line.startswith("| **overall**"))
    assert f"(n={sum(cand.case_counts.values())})" in overall
