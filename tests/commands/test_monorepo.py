"""A workspace in a subfolder of a git repository (a monorepo) works as one at the top level.

One small airline workspace (tests/evolution's, simulator for every role) is evolved three times:
at the top of its own repository (the reference), in `teams/air x/` of a monorepo (from inside the
folder, as `cd teams/air x && frames evolve`), and then in `teams/sea/` of the same monorepo.

Invariants:
1. The subfolder run gives the deploy menu, the review diffs and the status of the top-level run.
2. Every candidate commit changes files under its workspace's `skills/` only; the rest of the base
   tree (the other team's folder included) is byte for byte the base's.
3. Two workspaces of one repository evolve without touching each other's refs, notes, branches or
   state; the shared base commit's note keeps both runs' S0 metrics.
4. `.frames/` stays out of `git status` without any ignore line of the user's.
5. `frames init` and `frames coldstart` in a subfolder make a workspace there and commit only its skills;
   `frames eval --ref` reads a commit's skills of the subfolder.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.airline import CONFIG, RULES, write_workspace
from helpers import GitRepo, init_git_repo
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.gitstore.store import GitStore

AIR, SEA = "teams/air x", "teams/sea"
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    """Run the block with `folder` as the current folder, as a user who `cd`s into the workspace."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def frames(folder: Path, *args: str) -> dict:
    """`frames <args> --json` run from inside `folder`; its JSON output (exit code 0 asserted)."""
    with inside(folder):
        done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def evolve(folder: Path) -> str:
    """`frames evolve` from inside `folder`; returns the run id."""
    with inside(folder):
        done = CliRunner().invoke(app, ["evolve"])
    assert done.exit_code == 0, done.output
    (run_id,) = [p.name for p in (folder / ".frames" / "runs").iterdir()]
    return run_id


def write_policy(root: Path) -> None:
    """The fixture's rules as a policy document, one paragraph per rule, for diagnosers to retrieve."""
    categories = dict.fromkeys(category for category, *_ in RULES)
    sections = [f"## {c}\n\n" + "\n\n".join(rule for category, rule, *_ in RULES if category == c) for c in categories]
    (root / "policies").mkdir()
    (root / "policies" / "airline.md").write_text("# Airline policy\n\n" + "\n\n".join(sections) + "\n")


def without_ignore(root: Path) -> None:
    """Drop the `.gitignore` write_workspace adds: the user copied only the workspace's own files."""
    (root / ".gitignore").unlink()


@dataclass
class Evolved:
    top: GitRepo  # the reference: the workspace at the top of its own repository
    mono: GitRepo  # the monorepo: AIR, SEA and an unrelated file
    base: str  # the monorepo commit both runs started from
    top_run: str
    air_run: str
    sea_run: str
    air_before_sea: tuple[str, bytes]  # AIR's refs and state.json, taken before SEA evolved

    def refs(self, run_id: str) -> str:
        return self.mono.git("for-each-ref", "--format=%(objectname) %(refname)", f"refs/frames/runs/{run_id}/")


@pytest.fixture(scope="module")
def evolved(tmp_path_factory) -> Evolved:
    tmp = tmp_path_factory.mktemp("monorepo")
    # A menu of S0 alone would show little: try a few seeds for a reference run whose front holds a
    # changed candidate (which one depends on every prompt's wording), then evolve the monorepo with it.
    for seed in range(1, 9):
        config = copy.deepcopy(CONFIG)
        config["evolution"]["seed"] = seed
        top = init_git_repo(tmp / f"top-{seed}")
        write_workspace(top.root, config)
        write_policy(top.root)
        without_ignore(top.root)
        top.git("add", ".")
        top.git("commit", "-q", "-m", "airline workspace")
        top_run = evolve(top.root)
        front = menu(top.root)["front"]
        if len(front) > 1 and any(row["diff_size"] > 0 for row in front):
            break
    mono = init_git_repo(tmp / "mono")
    for folder in (AIR, SEA):
        write_workspace(mono.root / folder, config)
        write_policy(mono.root / folder)
        without_ignore(mono.root / folder)
    mono.write("README.md", "Two teams.\n")
    mono.git("add", ".")
    mono.git("commit", "-q", "-m", "two teams")
    air_run = evolve(mono.root / AIR)
    evolved = Evolved(top, mono, mono.git("rev-parse", "HEAD"), top_run, air_run, "", ("", b""))
    evolved.air_before_sea = (evolved.refs(air_run),
                              (mono.root / AIR / ".frames" / "runs" / air_run / "state.json").read_bytes())
    evolved.sea_run = evolve(mono.root / SEA)
    return evolved


def menu(folder: Path) -> dict:
    """`frames front --json` without what must differ between repositories (run id, commits, the branch)."""
    data = frames(folder, "front")
    for row in data["front"]:
        row.pop("commit")
    data["recommendation"].pop("headline")  # names the review branch, which holds the run id
    return {key: value for key, value in data.items() if key not in ("run_id", "base", "branch")}


def test_subfolder_run_gives_the_top_level_menu(evolved: Evolved) -> None:
    top_menu = menu(evolved.top.root)
    assert len(top_menu["front"]) > 1 and any(row["diff_size"] > 0 for row in top_menu["front"])
    assert menu(evolved.mono.root / AIR) == top_menu


def retrieved(folder: Path, run_id: str) -> list[list[tuple[str, str, float]]]:
    """What each diagnoser of the run was shown by retrieval: (kind, cite, score) per passage; a
    past change's cite (its commit) is given as "commit", since commits differ between repositories."""
    state = json.loads((folder / ".frames" / "runs" / run_id / "state.json").read_text())
    return [
        [(hit["kind"], hit["cite"] if hit["kind"] == "policy" else "commit", hit["score"])
         for hit in diagnosis["retrieved"]]
        for record in state["checkpoint"]["rounds"] for diagnosis in record["diagnoses"]
    ]


def test_subfolder_diagnosers_retrieve_the_top_level_passages_cited_from_the_workspace(evolved: Evolved) -> None:
    top = retrieved(evolved.top.root, evolved.top_run)
    assert any(kind == "policy" and cite.startswith("policies/") for hits in top for kind, cite, _ in hits)
    assert retrieved(evolved.mono.root / AIR, evolved.air_run) == top


def test_candidate_commits_change_only_their_workspace_skills(evolved: Evolved) -> None:
    mono = evolved.mono

    def outside(sha: str, folder: str) -> list[str]:
        entries = mono.git("ls-tree", "-r", "-z", "--full-tree", sha).split("\0")
        return [e for e in entries if e and not e.split("\t", 1)[1].startswith(f"{folder}/")]

    for run_id, folder in ((evolved.air_run, AIR), (evolved.sea_run, SEA)):
        candidates = json.loads((mono.root / folder / ".frames" / "runs" / run_id / "state.json").read_text())[
            "candidates"
        ]
        assert len(candidates) > 1
        for cand in candidates[1:]:
            assert outside(cand["commit"], folder) == outside(evolved.base, folder)
            changed = mono.git("diff", "--name-only", evolved.base, cand["commit"]).splitlines()
            assert changed and all(path.startswith(f"{folder}/skills/") for path in changed)


def test_two_workspaces_in_one_repository_keep_apart(evolved: Evolved) -> None:
    mono = evolved.mono
    assert (
        evolved.refs(evolved.air_run),
        (mono.root / AIR / ".frames" / "runs" / evolved.air_run / "state.json").read_bytes(),
    ) == evolved.air_before_sea
    assert evolved.refs(evolved.sea_run) and evolved.air_run != evolved.sea_run
    assert sorted((mono.root / SEA / ".frames" / "runs").iterdir()) == [
        mono.root / SEA / ".frames" / "runs" / evolved.sea_run
    ]
    # The base commit is S0 of both runs: its one note keeps both.
    note = json.loads(GitStore(mono.root).read_note(evolved.base))
    assert set(note["runs"]) == {evolved.air_run, evolved.sea_run}
    assert mono.git("branch", "--format=%(refname:short)").split() == sorted(
        ["main", f"frames/{evolved.air_run}", f"frames/{evolved.sea_run}"]
    )
    # No ignore line of the user's, yet frames' state never shows up in git status.
    assert mono.git("status", "--porcelain", "--untracked-files=all") == ""
    assert evolved.top.git("status", "--porcelain", "--untracked-files=all") == ""


def test_review_status_and_promote_from_the_subfolder(evolved: Evolved) -> None:
    air, top = evolved.mono.root / AIR, evolved.top.root
    best = frames(air, "front")["branch"]
    assert best == f"frames/{evolved.air_run}"
    cand = next(row["id"] for row in frames(air, "front")["front"] if row["best"])
    reviews = [frames(folder, "review", f"{run}/{cand}")
               for folder, run in ((air, evolved.air_run), (top, evolved.top_run))]
    assert reviews[0]["diff"] and "a/skills/" in reviews[0]["diff"] and "teams/" not in reviews[0]["diff"]
    # The same skills, so the same blobs: the diffs are byte for byte the top level's.
    air_review, top_review = ({k: r[k] for k in ("diff", "diff_lines", "skills")} for r in reviews)
    assert air_review == top_review

    # `eval --ref` reads the skills of a commit through the same store: S0's pass rate again.
    assert frames(air, "eval", "--ref", evolved.base)["overall"]["pass_rate"] == frames(air, "front")["s0"]["pass_rate"]

    statuses = [frames(folder, "status") for folder in (air, top)]
    assert statuses[0]["last_run"]["run_id"] == evolved.air_run
    same = ("skills", "skill_names", "cases_by_category", "stale", "errors", "warnings", "cases_by_source")
    air_status, top_status = ({k: s[k] for k in same} for s in statuses)
    assert air_status == top_status and air_status["skills"] == 3

    head = evolved.mono.git("rev-parse", "HEAD")
    promoted = frames(air, "promote", f"{evolved.air_run}/{cand}", "--branch", "air-release")
    assert evolved.mono.git("rev-parse", "air-release") == promoted["commit"]
    assert (evolved.mono.git("rev-parse", "HEAD"), evolved.mono.git("symbolic-ref", "HEAD")) == (
        head,
        "refs/heads/main",
    )


def test_init_and_coldstart_in_a_subfolder(tmp_path: Path) -> None:
    mono = init_git_repo(tmp_path / "mono")
    mono.write("README.md", "Other teams live here.\n")
    mono.git("add", ".")
    mono.git("commit", "-q", "-m", "start")
    before = mono.git("rev-parse", "HEAD")
    ws = mono.root / "teams" / "new ws"
    created = frames(mono.root, "init", str(ws))["created"]
    assert "git repository" not in created and not (ws / ".git").exists()
    shutil.copy(ROOT / "policies" / "airline.md", ws / "policies" / "airline.md")
    mono.git("add", ".")
    mono.git("commit", "-q", "-m", "new workspace")

    done = frames(ws, "coldstart")
    assert done["commit"] == mono.git("rev-parse", "HEAD") and mono.git("rev-parse", "HEAD~1") != before
    changed = mono.git("show", "--name-only", "--format=", "HEAD").splitlines()
    assert changed and all(path.startswith("teams/new ws/skills/") for path in changed)
    assert mono.git("status", "--porcelain", "--untracked-files=all") == ""
    # The same policy coldstarted at the top of a repository gives the same skill files.
    top = init_git_repo(tmp_path / "top")
    frames(top.root, "init", str(top.root))
    shutil.copy(ROOT / "policies" / "airline.md", top.root / "policies" / "airline.md")
    frames(top.root, "coldstart")
    assert GitStore(ws).read_files("HEAD") == GitStore(top.root).read_files("HEAD")
