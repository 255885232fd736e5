"""Ablation of the evolution loop on the bundled airline example, through the simulator.

Varies one setting at a time from the defaults in frames.yaml (q = 2, ε = 0.05, B = 8):
q ∈ {1, 2, all}, ε ∈ {0, 0.05, 1}, batch size B ∈ {1, 8, all}, each over a few seeds (the seed
sets both `evolution.seed` and `simulator.seed`). Every run is a full `frames evolve` (driver
API, same code path) in a fresh copy of the bundled workspace with its own empty model cache, so
the tokens are what that run spent. The example is taken as committed at HEAD. The simulator is a
model of LLM behaviour, not an LLM.

Per setting (mean over seeds, min–max in brackets where it helps):
  best     pass rate of the best front member on the evaluation set
  S0       pass rate of the starting skill set
  worst Δc worst per-category change against S0 over every member of the final front (points)
  tok/case mean tokens per case of the best member (S0's skills cost about 7,400 on this example)
  front    front size; rounds: rounds run; tokens: prompt + completion tokens spent (all roles)

Usage: python bench/ablation.py [--seeds 0 1 2 3 4] [--max-rounds N] [--samples K] [--only TEXT]
"""

from __future__ import annotations

import argparse
import os
import shutil
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

from frames_cli.evolution.run.driver import EvolveOptions, evolve  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402

EXAMPLE = ("frames.yaml", "policies", "skills", "cases", "holdout")
#: (label, evolution overrides); the first row is the defaults, each other row changes one setting.
SETTINGS = [
    ("defaults (q=2, ε=0.05, B=8)", {}),
    ("q=1", {"vote_threshold": 1}),
    ("q=all", {"vote_threshold": "all"}),
    ("ε=0", {"tolerance": 0.0}),
    ("ε=1", {"tolerance": 1.0}),
    ("B=1", {"batch_size": 1}),
    ("B=all", {"batch_size": "all"}),
]


def snapshot(tmp: Path) -> Path:
    """The bundled example as committed at HEAD (not the working tree, which may be mid-edit)."""
    folder = tmp / "example"
    folder.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD", *EXAMPLE], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


BENCH_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]


def commit_all(root: Path, message: str) -> None:
    """Commit every file under `root` as the bench's author; the first call makes the repository
    (branch main, .frames/ ignored). Raises CalledProcessError when git fails."""
    if not (root / ".git").exists():
        (root / ".gitignore").write_text(".frames/\n")
        subprocess.run([*BENCH_GIT, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*BENCH_GIT, "add", "."], cwd=root, check=True)
    subprocess.run([*BENCH_GIT, "commit", "-q", "-m", message], cwd=root, check=True)


def workspace(tmp: Path, example: Path, overrides: dict, seed: int, max_rounds: int | None,
              samples: int | None) -> Path:
    """A fresh git repo holding the bundled example with `overrides` applied to frames.yaml."""
    root = tmp / f"ws-{len(list(tmp.iterdir()))}"
    shutil.copytree(example, root)
    config = yaml.safe_load((root / "frames.yaml").read_text())
    config["evolution"].update(overrides, seed=seed)
    if max_rounds:
        config["evolution"]["max_rounds"] = max_rounds
    config["simulator"]["seed"] = seed
    if samples:
        config.setdefault("eval", {})["samples"] = samples
    (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    commit_all(root, "bundled example")
    return root


def one_run(root: Path) -> dict:
    """Evolve once; the figures of the finished run."""
    state = evolve(Workspace.open(root), EvolveOptions()).state
    base = state.base_candidate()
    front = state.front_candidates()
    worst = min(c.per_category.get(cat, 0.0) - rate for c in front for cat, rate in base.per_category.items())
    return {
        "best": state.best().pass_rate,
        "best_tokens": state.best().mean_tokens,
        "s0": base.pass_rate,
        "worst": worst,
        "front": len(front),
        "rounds": state.round,
        "tokens": state.spend_tokens,
    }


def fmt_range(values: list[float], scale: float = 100.0, unit: str = "%") -> str:
    mean = statistics.mean(values) * scale
    return f"{mean:5.1f}{unit} [{min(values) * scale:.1f}–{max(values) * scale:.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--max-rounds", type=int, default=None, help="override evolution.max_rounds")
    parser.add_argument("--samples", type=int, default=None,
                        help="override eval.samples (k samples per case in every evaluation)")
    parser.add_argument("--only", default="", help="run only the settings whose label contains this text")
    args = parser.parse_args()
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="frames-ablation-") as tmp:
        example = snapshot(Path(tmp))
        for label, overrides in (row for row in SETTINGS if args.only in row[0]):
            runs = [one_run(workspace(Path(tmp), example, overrides, seed, args.max_rounds, args.samples))
                    for seed in args.seeds]
            rows.append((label, runs))
            print(f"  {label}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    samples = f"; eval.samples {args.samples}" if args.samples else ""
    print(f"Ablation on the bundled airline example, simulator (not an LLM); seeds {args.seeds}{samples}")
    print(f"{'setting':<28} {'best pass rate':>22} {'S0':>6} {'worst Δc vs S0 (pt)':>24} {'tok/case':>8} {'front':>5} "
          f"{'rounds':>6} {'tokens':>11}")
    for label, runs in rows:
        print(
            f"{label:<28} {fmt_range([r['best'] for r in runs]):>22} "
            f"{statistics.mean(r['s0'] for r in runs) * 100:5.1f}% "
            f"{fmt_range([r['worst'] for r in runs], unit=''):>24} "
            f"{statistics.mean(r['best_tokens'] for r in runs):8,.0f} {statistics.mean(r['front'] for r in runs):5.1f} "
            f"{statistics.mean(r['rounds'] for r in runs):6.1f} {statistics.mean(r['tokens'] for r in runs):11,.0f}"
        )
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
