"""Merging the diagnosers' proposals (one rule, one line) on the bundled airline example, simulator.

Four settings side by side, each over 5 seeds (`evolution.seed` and `simulator.seed`):
  merged   the defaults: proposals that state one rule are one change (evolution.merge_threshold
           0.25) and a rewrite may not state a rule twice (evolution.duplicate_threshold 0.4)
  before   merge_threshold 1 and duplicate_threshold 1: identical wording merged only, the guard off
           (frames before issue #19)
  and each half alone: merging with the guard off, the guard with merging off.
Each run evolves on tau2's own train split (the bundled example's 30 cases in cases/) and the best
front member is then scored once on the 20 test-split cases in holdout/ (sealed), which no decision
saw. The simulator is a model of LLM behaviour, not an LLM: its diagnosers state a failing case's
rules (or copy its evidence) in the case's own words, so several diagnosers of one case write the
same words and merging changes its blueprints less than a real model's paraphrases would; the
real-model trial's proposals are measured by tests/evolution/test_merge_trial.py.

Per setting (mean over seeds, min–max in brackets):
  added/child  lines added to skills/ per accepted child (git diff against its parent)
  changes/bp   changes per blueprint skill, over every child made
  tok/case     mean tokens per case of the best member on the train cases
  train, test  pass rate of the best member on train (evaluation set) and on the held-out test set

--profile strong runs the strong executor of docs/simulator.md (bench/sim_calibration.py's
profile fitted to the real-model trial: it applies a rule that the skill text as a whole supports, so
a paraphrase serves as well as the case's own words); the default, weak, is the bundled frames.yaml,
whose executor applies a rule only when one sentence holds 70 % of its words. --thin cuts the four
procedure skills to one line each, as in the real-model trial's thin run (the full policy stays in
policies/): with the strong executor and the verbatim skills S0 is already near its ceiling.

Usage: python bench/merge.py [--seeds 0 1 2 3 4] [--max-rounds N] [--profile weak|strong] [--thin]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ablation import commit_all, fmt_range, snapshot, workspace  # noqa: E402
from sim_calibration import PROFILES, thin_skills  # noqa: E402

from frames_cli.evolution.run.driver import EvolveOptions, evolve  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402

SETTINGS = [
    ("merged (defaults)", {}),
    ("merge only (guard off)", {"duplicate_threshold": 1.0}),
    ("guard only (no merge)", {"merge_threshold": 1.0}),
    ("before (no merge, no guard)", {"merge_threshold": 1.0, "duplicate_threshold": 1.0}),
]


def settle(root: Path) -> None:
    """Commit the bench's settings (frames.yaml, thin skills); the bundled example already holds
    tau2's train split in cases/ and its test split, sealed, in holdout/."""
    commit_all(root, "bench settings")


def added_lines(root: Path, parent: str, child: str) -> int:
    out = subprocess.run(["git", "diff", "--numstat", parent, child, "--", "skills"], cwd=root, check=True,
                         capture_output=True, text=True).stdout
    return sum(int(line.split("\t")[0]) for line in out.splitlines() if line.split("\t")[0].isdigit())


def test_pass_rate(root: Path, commit: str) -> float:
    """The held-out pass rate of the skills at `commit`, through `frames eval` (same code path)."""
    done = subprocess.run(
        [sys.executable, "-m", "frames_cli", "eval", "--ref", commit, "--cases", "holdout/*.yaml", "--json"],
        cwd=root, capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"frames eval of {commit} on the held-out cases exited {done.returncode}:\n{done.stderr}")
    return json.loads(done.stdout)["overall"]["pass_rate"]


def with_profile(root: Path, profile: str, thin: bool) -> Path:
    """`root` with the simulator settings of `profile` in its frames.yaml and, if `thin`, the trial's
    one-line procedure skills (both committed by settle)."""
    config = yaml.safe_load((root / "frames.yaml").read_text())
    config["simulator"].update(PROFILES[profile])
    (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    if thin:
        thin_skills(root)
    return root


def one_run(root: Path) -> dict:
    settle(root)
    state = evolve(Workspace.open(root), EvolveOptions()).state
    accepted = [c for c in state.candidates if c.parent_id and c.gate_passed]
    blueprints = [bp for c in state.candidates if c.parent_id for bp in c.blueprints]
    best = state.best()
    return {
        "added": [added_lines(root, state.candidate(c.parent_id).commit, c.commit) for c in accepted],
        "changes": [len(bp["changes"]) for bp in blueprints],
        "tokens": best.mean_tokens,
        "train": best.pass_rate,
        "test": test_pass_rate(root, best.commit),
        "s0_test": test_pass_rate(root, state.base_candidate().commit),
        "accepted": len(accepted),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--max-rounds", type=int, default=None, help="override evolution.max_rounds")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="weak",
                        help="simulated executor (default: the bundled frames.yaml's)")
    parser.add_argument("--thin", action="store_true",
                        help="one-line procedure skills, as in the real-model trial's thin run")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="frames-merge-") as tmp:
        example = snapshot(Path(tmp))
        for label, overrides in SETTINGS:
            runs = [
                one_run(
                    with_profile(
                        workspace(Path(tmp), example, overrides, seed, args.max_rounds, None), args.profile, args.thin
                    )
                )
                for seed in args.seeds
            ]
            rows.append((label, runs))
            print(f"  {label}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    print(f"Merging proposals on the bundled airline example (tau2 train 30 / test 20), simulator (not an LLM, "
          f"{args.profile} executor{', thin skills' if args.thin else ''}); seeds {args.seeds}")
    print(f"{'setting':<28} {'accepted':>8} {'added/child':>12} {'changes/bp':>10} {'tok/case':>8} {'train':>22} "
          f"{'test (S0)':>30}")
    for label, runs in rows:
        added = [a for r in runs for a in r["added"]]
        changes = [n for r in runs for n in r["changes"]]
        print(
            f"{label:<28} {statistics.mean(r['accepted'] for r in runs):8.1f}"
            f" {statistics.mean(added) if added else 0:12.1f} {statistics.mean(changes) if changes else 0:10.2f}"
            f" {statistics.mean(r['tokens'] for r in runs):8,.0f} {fmt_range([r['train'] for r in runs]):>22}"
            f" {fmt_range([r['test'] for r in runs]):>22} ({statistics.mean(r['s0_test'] for r in runs) * 100:.1f}%)"
        )
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
