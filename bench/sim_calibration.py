"""Calibration of the simulated executor against the real-model trial (../shared/data/real-model-trial/).

The trial ran S0 of the bundled airline example with a large language model as the executor: 29/30
train and 16/20 test cases with the verbatim policy skills, 15/30 and 9/20 with the four procedure
skills cut to one line ("thin" skills). This script evaluates the same two skill sets with the
simulator's weak executor (frames.yaml's defaults) and with the strong profile of docs/simulator.md, over
several simulator seeds, and prints the pass rates per τ² split beside the trial's.

Usage: python bench/sim_calibration.py [--seeds 5]
The bundled example holds τ²-bench's split: train in cases/, test in holdout/.
Takes a few minutes on 2 CPUs (4 skill sets × profiles × seeds evaluations of 50 cases).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from bundled import copy_example

#: τ²-bench's split as the bundled example holds it: case glob per part.
PARTS = {"train": "cases/*", "test": "holdout/*"}
#: The real-model trial's S0 (train passed/total, test passed/total); data README of ../shared.
TRIAL = {"verbatim": ((29, 30), (16, 20)), "thin": ((15, 30), (9, 20))}
#: The strong profile (docs/simulator.md); the weak one is frames.yaml's defaults.
PROFILES = {"weak": {}, "strong": {"floor": 0.4, "ceiling": 0.99, "policy_reading": 1.0, "loads": 4}}
#: The thin skills of the trial (airline-thin-r*c1.diff): description and one-line body.
THIN = {
    "book-flight": (
        "Book flight: help a user book a new reservation. Use when a task involves booking a flight.",
        "## Book flight\n\nHelp the user book a new flight reservation.\n",
    ),
    "cancel-flight": (
        "Cancel flight: help a user cancel a reservation. Use when a task involves cancelling a flight.",
        "## Cancel flight\n\nHelp the user cancel a reservation.\n",
    ),
    "modify-flight": (
        "Modify flight: help a user change a reservation. Use when a task involves changing flights, cabin, baggage or "
        "passengers.",
        "## Modify flight\n\nHelp the user change an existing reservation.\n",
    ),
    "refunds-and-compensation": (
        "Refunds and compensation: handle refund and compensation requests. Use when a user asks for a refund or "
        "compensation.",
        "## Refunds and Compensation\n\nHandle the user's refund or compensation request.\n",
    ),
}


def workspace(folder: Path, thin: bool) -> Path:
    """A copy of the bundled example (cases/ and holdout/), thin skills if asked."""
    copy_example(folder)
    if thin:
        thin_skills(folder)
    return folder


def thin_skills(folder: Path) -> None:
    """Cut the four procedure skills of the example in `folder` to the trial's one-line bodies."""
    for name, (description, body) in THIN.items():
        path = folder / "skills" / name / "SKILL.md"
        front = path.read_text(encoding="utf-8")[4:].partition("\n---\n")[0]
        front = re.sub(r"^description: .*$", f"description: '{description}'", front, flags=re.M)
        path.write_text(f"---\n{front}\n---\n\n{body}", encoding="utf-8")


def s0(folder: Path, settings: dict, seed: int, cases: str) -> dict[str, bool]:
    """case id → passed, for S0 of `folder` on the case glob `cases`, with simulator `settings` and `seed`
    (no cache)."""
    config = yaml.safe_load((folder / "frames.yaml").read_text(encoding="utf-8"))
    config["simulator"].update(settings, seed=seed)
    (folder / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "frames_cli", "eval", "--json", "--no-cache", "--cases", cases,
                           "--repo", str(folder)],
                          capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "200"})
    return {r["case_id"]: bool(r["passed"]) for r in json.loads(done.stdout)["results"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"S0 pass rate per τ² split, simulator over {args.seeds} seeds vs the real-model trial")
    print(f"{'skills':10} {'executor':10} {'train':>16} {'test':>16}")
    with tempfile.TemporaryDirectory() as tmp:
        for skills in ("verbatim", "thin"):
            folder = workspace(Path(tmp) / skills, skills == "thin")
            (t_pass, t_all), (h_pass, h_all) = TRIAL[skills]
            print(f"{skills:10} {'real model':10} {f'{t_pass / t_all:.1%} ({t_pass}/{t_all})':>16} "
                  f"{f'{h_pass / h_all:.1%} ({h_pass}/{h_all})':>16}")
            for profile, settings in PROFILES.items():
                passed = {"train": [0, 0], "test": [0, 0]}
                for seed in range(args.seeds):
                    for name, cases in PARTS.items():
                        for ok in s0(folder, settings, seed, cases).values():
                            passed[name][0] += ok
                            passed[name][1] += 1
                cells = [f"{p / n:.1%} ({p}/{n})" if n else "—" for p, n in passed.values()]
                print(f"{skills:10} {'sim ' + profile:10} {cells[0]:>16} {cells[1]:>16}")


if __name__ == "__main__":
    main()
