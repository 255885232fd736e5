"""The README's main job, `frames evolve`, on the bundled airline example (two rounds, simulator).

Invariants:
1. It exits 0 with a deploy menu that says the run used the simulator.
   `COLUMNS=80 frames front` on it: no line wider than 80, no word broken (every word is one the
   menu prints at 1,000 columns).
2. It leaves the checked-out branch, HEAD, the index and the working tree exactly as they were.
3. Candidates are commits under refs/frames/runs/<run>/, outside every branch but the review one.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml
from typer.testing import CliRunner

from frames_cli.commands.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ("frames.yaml", "policies", "skills", "cases", "holdout", ".gitignore")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def test_main_job_on_the_bundled_example_leaves_the_checkout_alone(tmp_path: Path) -> None:
    root = tmp_path / "example"
    root.mkdir()
    for name in EXAMPLE:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    config = yaml.safe_load((root / "frames.yaml").read_text())
    config["evolution"]["max_rounds"] = 2
    (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "bundled example")
    before = (git(root, "status", "--porcelain"), git(root, "rev-parse", "HEAD"), git(root, "symbolic-ref", "HEAD"),
              (root / ".git" / "index").read_bytes())

    result = CliRunner().invoke(app, ["evolve", "--repo", str(root)])

    assert result.exit_code == 0, result.output
    assert "Pareto front of run" in result.stdout and "a simulator of model behaviour, not a model" in " ".join(
        result.stdout.split()
    )
    after = (git(root, "status", "--porcelain"), git(root, "rev-parse", "HEAD"), git(root, "symbolic-ref", "HEAD"),
             (root / ".git" / "index").read_bytes())
    assert after == before
    (run_id,) = [p.name for p in (root / ".frames" / "runs").iterdir()]
    state = json.loads((root / ".frames" / "runs" / run_id / "state.json").read_text())
    refs = git(root, "for-each-ref", "--format=%(refname)", f"refs/frames/runs/{run_id}/").split()
    assert {f"refs/frames/runs/{run_id}/{c['id']}" for c in state["candidates"]} <= set(refs)
    assert git(root, "branch", "--format=%(refname:short)").split() in (["main"], [f"frames/{run_id}", "main"])

    narrow = CliRunner().invoke(app, ["front", "--repo", str(root)], env={"COLUMNS": "80"})
    wide = CliRunner().invoke(app, ["front", "--repo", str(root)], env={"COLUMNS": "1000"})
    assert narrow.exit_code == wide.exit_code == 0
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    assert _words(narrow.stdout) <= _words(wide.stdout)
    assert re.search(r"pass rate(, selection set)? \(n=\d+\)", narrow.stdout)


def _words(text: str) -> set[str]:
    """The words of a rendered menu, table rules and borders left out."""
    return set(re.sub(r"[│┃┏┓┗┛┡┩━─┳┻╇┼┬┴└┘┌┐├┤]", " ", text).split())


def test_the_review_branch_adds_no_case_value_and_keeps_every_policy_sentence(tmp_path: Path) -> None:
    """Issue 11: the bundled main job (its default settings but the seed and the recommendation rule)
    learns rules, not case facts. The paper's rule (recommend_alpha 1) makes the highest-rate member
    the review branch, so the lines the guards let through are judged even when no gain is
    significant (by default no branch is made then)."""
    from frames_cli.evolution.propose.case_index import CaseValues
    from frames_cli.evolution.propose.policy_keeper import PolicyKeeper
    from frames_cli.formats.case_files import load_cases
    from frames_cli.formats.skill_set import SkillSet

    root = tmp_path / "example"
    root.mkdir()
    for name in EXAMPLE:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    settings = root / "frames.yaml"
    text = settings.read_text(encoding="utf-8")
    assert "  recommend_alpha: 0.05" in text
    text = text.replace("  recommend_alpha: 0.05", "  recommend_alpha: 1.0")
    assert "\nsimulator:  # frames-sim\n  seed: 0 " in text
    git(root, "init", "-q", "-b", "main")

    # Whether a run beats S0 is the simulator's draw (a 2- to 4-case category decides it): take the
    # first of a few simulator seeds whose run leaves a review branch, and judge that branch. Since
    # the executor is given the general rules with every case (decision 0099), S0 stays ahead on
    # simulator seeds 0-2 whatever `--seed`; starting at 3 keeps the test to one or two runs.
    branch = None
    for seed in range(3, 8):
        settings.write_text(text.replace("\nsimulator:  # frames-sim\n  seed: 0 ",
                                         f"\nsimulator:  # frames-sim\n  seed: {seed} "), encoding="utf-8")
        git(root, "add", ".")
        git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", f"simulator seed {seed}")
        result = CliRunner().invoke(app, ["evolve", "--repo", str(root)])
        assert result.exit_code == 0, result.output
        branch = next((b for b in git(root, "branch", "--format=%(refname:short)").split() if b.startswith("frames/")),
                      None)
        if branch:
            break
    assert branch, "no bundled run of simulator seeds 3-7 made a review branch"
    policy = {f"policies/{p.name}": p.read_bytes() for p in (root / "policies").iterdir() if p.suffix == ".md"}
    values = CaseValues.build(
        load_cases(sorted([*(root / "cases").glob("*.yaml"), *(root / "holdout").glob("*.yaml")])),
        [b.decode() for b in policy.values()],
    )
    added = [line[1:] for line in git(root, "diff", "main", branch, "--", "skills/").splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert added and [(line, values.specific(line)) for line in added if values.specific(line)] == []
    keeper = PolicyKeeper.build(SkillSet.from_dir(ROOT / "skills"), policy)
    files = {p: git(root, "show", f"{branch}:{p}")
             for p in git(root, "ls-tree", "-r", "--name-only", branch, "skills/").split()}
    review = SkillSet.from_files({p: (t + "\n").encode() for p, t in files.items()})
    lost = [(name, s.text) for name, kept in keeper.kept.items() for s in kept if not _holds(review, name, s.text)]
    assert keeper.kept and lost == []


def _holds(skills, name: str, sentence: str) -> bool:
    from frames_cli.evolution.propose.policy_keeper import holds

    return name in skills and holds(skills[name].body, sentence)
