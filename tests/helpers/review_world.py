"""A synthetic finished run for the commands that read runs (`frames runs`, `front`, `review`, `promote`,
`status`, `report`): real candidate commits made with GitStore, a RunState built from the records
dataclasses and saved to disk. tests/conftest.py serves it as the `world_template` and `world` fixtures.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from helpers import GitRepo
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.evolution.run.snapshot import run_snapshot
from frames_cli.evolution.state.records import Candidate, FailureNote, RunState
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.state.runs import save_state
from frames_cli.formats.skill import BackLink, Skill, text_sha256
from frames_cli.formats.skill_file import render_skill
from frames_cli.gitstore.message import commit_message
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.config import FramesConfig, with_overrides
from frames_cli.workspace.layout import Workspace

RUN = "20261129-101500-a1b2c3"
OLD_RUN = "20261128-080000-0f0f0f"
RUN_STARTED = "2026-11-29T10:15:00+00:00"
#: The runs' settings: the paper's rule (★ is the front member of the highest pass rate).
PAPERS_RULE = run_snapshot(with_overrides(FramesConfig(), "evolution", recommend_alpha=1.0))
POLICY = ("# Airline Policy\n\n## Cancel\nCancel within 24 hours for free.\nAfter that, a fee applies.\n\n"
          "## Refund\nRefunds go to the original payment.\n")
RULE = "Always confirm the booking id before cancelling."


def _skill(name: str, body: str, link: BackLink) -> bytes:
    skill = Skill(name=name, description=f"Handle {name} requests.", body=body)
    skill.backlinks = [link]
    return render_skill(skill).encode()


def _gate(passed: dict[str, tuple[float, float]], eps: float = 0.05) -> dict:
    checks = [
        {"category": c, "baseline": b, "child": v, "floor": (1 - eps) * b, "passed": v >= (1 - eps) * b}
        for c, (b, v) in sorted(passed.items())
    ]
    return {"passed": all(c["passed"] for c in checks), "tolerance": eps, "checks": checks}


def _with_flips(gate: dict, flips: dict[str, tuple[list[str], list[str]]]) -> dict:
    """`gate` with the case-level record of each category: (pass → fail ids, fail → pass ids)."""
    for check in gate["checks"]:
        worse, better = flips[check["category"]]
        check.update(pass_to_fail=worse, fail_to_pass=better, n=4, samples=1, p_value=0.5)
    return gate


def _blueprint(skill: str, change: str, cases: list[str], votes: int, new: bool = False) -> dict:
    return {
        "skill": skill,
        "new_skill": new,
        "description": "",
        "votes": votes,
        "changes": [{"change": change, "rules": [], "rationale": "agents cancelled the wrong booking",
                     "case_ids": cases, "diagnosers": [0, 2]}],
    }


def make_world(git_repo: GitRepo) -> RunState:
    """Make `git_repo` (a fresh repository) a workspace whose base commit has skills `cancel` and
    `refund` with back-links to the policy, and a finished run: r1c1 (cancel rewritten, gate pass), r1c2
    (refund rewritten, gate FAIL in refund), r2c1 (child of r1c1: cancel again and a new skill `rebook`,
    gate pass, best). Returns the run's saved state."""
    lines = POLICY.split("\n")
    cancel_link = BackLink("policies/airline.md", "Airline Policy > Cancel", 4, 5, text_sha256("\n".join(lines[3:5])))
    stale_link = BackLink("policies/airline.md", "Airline Policy > Refund", 8, 8, "0" * 64)
    # A back-link that points outside the workspace is shown but its file is never read.
    outside_link = BackLink("../outside.md", "Elsewhere", 1, 1, "0" * 64)
    (git_repo.root.parent / "outside.md").write_text("not policy\n")
    git_repo.git("rm", "-q", "-r", "skills")
    git_repo.write("frames.yaml", "version: 1\n")
    git_repo.write(".gitignore", ".frames/\n")
    git_repo.write("policies/airline.md", POLICY)
    git_repo.write("skills/cancel/SKILL.md", _skill("cancel", "Cancel bookings.\n", cancel_link).decode())
    git_repo.write("skills/refund/SKILL.md", _skill("refund", "Refund payments.\n", stale_link).decode())
    git_repo.git("add", ".")
    git_repo.git("commit", "-q", "-m", "workspace")
    store = GitStore(git_repo.root)
    base = store.resolve("HEAD")
    cancel2 = _skill("cancel", f"Cancel bookings.\n{RULE}\n", cancel_link)
    message = commit_message("r1c1", "cancel: add the rule",
                             {"Frames-Run": RUN, "Frames-Models": "rewriter=frames-sim/rewriter"})
    r1c1 = store.commit_files(base, {"skills/cancel/SKILL.md": cancel2}, message, f"refs/frames/runs/{RUN}/r1c1")
    r1c2 = store.commit_files(base, {"skills/refund/SKILL.md": _skill("refund", "Refund to cash.\n", stale_link)},
                              "r1c2")
    r2c1 = store.commit_files(
        r1c1,
        {
            "skills/cancel/SKILL.md": _skill("cancel", f"Cancel bookings.\n{RULE}\nQuote the fee.\n", cancel_link),
            "skills/rebook/SKILL.md": _skill("rebook", "Offer a rebooking first.\n", outside_link),
        },
        "r2c1",
    )
    s0 = Candidate(BASE_ID, base, None, 0, 0.5, {"cancel": 0.25, "refund": 0.75}, 110.0, 0.011)
    c11 = Candidate(
        "r1c1", r1c1, BASE_ID, 1, 0.75, {"cancel": 0.75, "refund": 0.75}, 100.0, 0.010,
        gate_passed=True, gate_details=_gate({"cancel": (0.25, 0.75), "refund": (0.75, 0.75)}),
        changed_skills=["cancel"],
        blueprints=[_blueprint("cancel", f'Add the rule: "{RULE}"', ["case-7", "case-9"], 2)],
        motivating_case_ids=["case-7", "case-9"],
        failures=[
            FailureNote("case-7", "cancel", "expected 'cancelled', got 'refunded'", "cancelled the wrong booking"),
            FailureNote("case-9", "cancel", "expected 'cancelled', got 'asked again'"),
        ],
        diff_size=1, votes_needed=2, diagnosers=3,
    )
    c12 = Candidate(
        "r1c2", r1c2, BASE_ID, 1, 0.625, {"cancel": 0.75, "refund": 0.5}, 90.0, 0.009,
        gate_passed=False, gate_details=_with_flips(_gate({"cancel": (0.25, 0.75), "refund": (0.75, 0.5)}),
                                                    {"cancel": ([], ["case-1", "case-2"]), "refund": (["case-4"], [])}),
        changed_skills=["refund"], blueprints=[_blueprint("refund", "Refund to cash when asked.", ["case-3"], 2)],
        motivating_case_ids=["case-3"], failures=[FailureNote("case-3", "refund", "expected 'cash'")], diff_size=2,
        votes_needed=2, diagnosers=3,
    )
    c21 = Candidate(
        "r2c1", r2c1, "r1c1", 2, 0.875, {"cancel": 1.0, "refund": 0.75}, 120.0, 0.012,
        gate_passed=True, gate_details=_gate({"cancel": (0.25, 1.0), "refund": (0.75, 0.75)}),
        changed_skills=["cancel", "rebook"],
        blueprints=[_blueprint("cancel", "Quote the fee.", ["case-11"], 3),
                    _blueprint("rebook", "New skill.", ["case-12"], 2, new=True)],
        motivating_case_ids=["case-11", "case-12"], dropped={"refund": "protected region changed"}, diff_size=4,
        votes_needed=2, diagnosers=3,
    )
    ws = Workspace(git_repo.root)
    old_s0 = Candidate(BASE_ID, base, None, 0, 0.5, {"cancel": 0.25}, 110.0)
    save_state(ws, RunState(OLD_RUN, base, status="failed", error="budget", candidates=[old_s0], front=[BASE_ID],
                            started="2026-11-28T08:00:00+00:00", config=PAPERS_RULE))
    state = RunState(
        RUN, base, status="finished", round=2, candidates=[s0, c11, c12, c21], front=["r1c1", "r2c1"],
        stop_reason="patience", spend_tokens=12345, spend_usd=0.25, branch=f"frames/{RUN}", started=RUN_STARTED,
        config=PAPERS_RULE,
    )
    save_state(ws, state)
    return state


def copy_world(template: GitRepo, state: RunState, folder: Path) -> GitRepo:
    """A private copy in `folder` of the workspace `make_world` made, with `state` attached."""
    # The parent folder too: it holds the file the outside back-link points at.
    shutil.copytree(template.root.parent, folder, symlinks=True)
    repo = dataclasses.replace(template, root=folder / "repo")
    repo.state = state  # type: ignore[attr-defined]
    return repo


def invoke(world, *args: str):
    """`frames ARGS --repo WORLD` through typer's CliRunner, in a wide terminal, so table cells are not
    folded into several lines."""
    return CliRunner().invoke(app, [*args, "--repo", str(world.root)], env={"COLUMNS": "250"})


def review_markdown_of(world, spec: str) -> str:
    """What `frames review SPEC --markdown -` prints (exit 0 asserted)."""
    result = invoke(world, "review", spec, "--markdown", "-")
    assert result.exit_code == 0, result.output
    return result.stdout


#: The paper's rule with the simulator for the roles a run's records name.
SIM_MODELS = {**PAPERS_RULE, "models": {role: f"frames-sim/{role}" for role in ("executor", "diagnoser", "rewriter")}}


def saved_with(world, **changes) -> RunState:
    """Save the world's run with `changes` (and case counts on every candidate); return it."""
    state = dataclasses.replace(world.state, **changes)
    state.candidates = [dataclasses.replace(c, case_counts={"cancel": 4, "refund": 4}) for c in state.candidates]
    save_state(Workspace(world.root), state)
    return state


def three_rounds(gate: dict) -> dict:
    """Loop memory with three rounds: r1 made r1c1 and r1c2's rounds, r3 made no child."""
    def rnd(n: int, parent: str, child: str | None, note: str = "", gate_json: dict | None = None) -> dict:
        return {"round": n, "parent": parent,
                "done": ["parents", "diagnose", "vote", "rewrite", "evaluate", "gate", "commit"],
                "batches": [["case-7"], ["case-9"], ["case-3"]],
                "diagnoses": [{"diagnoser": d, "case_ids": [], "proposals": [{}] * (d + 1), "dropped": [],
                               "error": None, "retrieved": []} for d in range(3)],
                "blueprints": [{"skill": "cancel", "votes": 2}] if child else [], "rejected": {"refund": 1},
                "outcomes": [{"skill": "cancel", "skill_text": "x", "attempts": 1, "errors": []}] if child else [],
                "child": child, "gate": gate_json, "note": note}
    return {"eval_case_ids": [], "picks": {},
            "rounds": [rnd(1, BASE_ID, "r1c1", gate_json=gate), rnd(2, "r1c1", "r2c1", gate_json=gate),
                       rnd(3, "r2c1", None, note="no skill reached the vote threshold")], "pending": None}
