"""Does learning transfer? The bundled airline example with τ²-bench's own train/test split, through the simulator.

The bundled example already follows τ²-bench's own split (tests/fixtures/tau2-airline/split_tasks.json):
the 30 train tasks in `cases/` are divided by `evolution.split` into diagnosis and selection sets;
the 20 test tasks in `holdout/` are the sealed test set (`split.test_cases: holdout/*`, `split.test:
0`). Each seed is a full `frames evolve` (driver API, same code path) in a fresh copy with its own
empty model cache; the seed sets `evolution.seed` and `simulator.seed`. The simulator is a model of
LLM behaviour, not an LLM.

Per seed and in the mean, side by side for the guards on and off (`evolution.guards`; when this
frames has no such setting, only the unguarded column is measured and the output says so):
  test S0 → best   pass rate on the sealed test set of S0 and of the best member (the one the run
                   recommends: a significant gain over S0, evolution.recommend_alpha; else S0); gain in points
  → highest rate   the same for the front member of highest pass rate (the paper's rule), with the
                   p-value of its gain on the selection set
  case-specific    share of the lines the highest-rate member adds under skills/ that carry a value
                   found in only one case's input (a reservation id, a user id, an amount, a date) — target 0
  policy removed   policy sentences (lines of policies/*.md, as S0's skills hold them) the
                   highest-rate member's diff removes — target 0

--profile strong --thin is the real-model trial's setting as the simulator models it (the strong
executor profile of bench/sim_calibration.py, the four procedure skills cut to one line): there a
diagnoser that reads the retrieved policy can put back the policy statements a case turns on, and a
statement helps every sealed case that turns on it too.

Usage: python bench/transfer.py [--seeds 0 1 2 3 4] [--max-rounds N] [--profile weak|strong] [--thin]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frames_cli.evolution.run.driver import EvolveOptions, evolve  # noqa: E402
from frames_cli.evolution.state.records import Candidate, RunState  # noqa: E402
from frames_cli.workspace.config import EvolutionConfig  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402
from bundled import copy_example  # noqa: E402
from sim_calibration import PROFILES, thin_skills  # noqa: E402

#: Values that identify one case: reservation codes (6 capitals/digits with a digit), user ids
#: (name_name_1234), amounts ($1,380 / 1380 dollars), ISO dates.
VALUE = re.compile(
    r"\b(?=[A-Z0-9]*\d)[A-Z0-9]{6}\b|\b[a-z]+_[a-z]+_\d{3,5}\b|\$\s?\d[\d,]*(?:\.\d+)?|\b\d{4}-\d{2}-\d{2}\b"
)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def workspace(folder: Path, seed: int, max_rounds: int, guards_off: bool, profile: str | None = None,
              thin: bool = False) -> Path:
    """A fresh copy of the bundled example (τ²'s train split in cases/, its test split sealed in holdout/),
    with the simulator `profile` of sim_calibration (None: frames.yaml's) and thin procedure skills if asked."""
    root = folder / f"seed{seed}-{'off' if guards_off else 'on'}"
    copy_example(root)
    config = yaml.safe_load((root / "frames.yaml").read_text())
    ev = config["evolution"]
    ev.update(seed=seed, max_rounds=max_rounds)
    if guards_off:
        ev["guards"] = {f.name: False for f in dataclasses.fields(guards_config()) if f.type in ("bool", bool)}
    config["simulator"]["seed"] = seed
    config["simulator"].update(PROFILES[profile] if profile else {})
    if thin:
        thin_skills(root)
    (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "bench")
    return root


def guards_config() -> type | None:
    """The `evolution.guards` settings class, or None when this frames has no guards."""
    field = next((f for f in dataclasses.fields(EvolutionConfig) if f.name == "guards"), None)
    return None if field is None else field.default_factory().__class__


def single_case_values(root: Path) -> set[str]:
    """Values (see VALUE) that occur in exactly one case's input, over every case of the workspace."""
    owners: dict[str, set[str]] = {}
    for path in [*(root / "cases").glob("*.yaml"), *(root / "holdout").glob("*.yaml")]:
        for case in yaml.safe_load(path.read_text()):
            for value in set(VALUE.findall(json.dumps(case["task"]["input"]))):
                owners.setdefault(value, set()).add(case["id"])
    return {v for v, ids in owners.items() if len(ids) == 1}


def diff_lines(root: Path, a: str, b: str) -> tuple[list[str], list[str]]:
    """(added, removed) non-blank lines under skills/ from commit a to commit b."""
    added, removed = [], []
    for line in git(root, "diff", "--unified=0", a, b, "--", "skills/").splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("+") and line[1:].strip():
            added.append(line[1:].strip())
        elif line.startswith("-") and line[1:].strip():
            removed.append(line[1:].strip())
    return added, removed


def policy_lines(root: Path) -> set[str]:
    """The policy's non-blank lines, stripped (what verbatim coldstart skills hold)."""
    return {line.strip() for p in (root / "policies").glob("*.md") for line in p.read_text().splitlines()
            if len(line.strip()) > 20}


def highest_rate(state: RunState) -> Candidate:
    """The front member the paper's rule would pick (recommend_alpha 1: the highest pass rate)."""
    paper = {**state.config, "evolution": {**state.config.get("evolution", {}), "recommend_alpha": 1.0}}
    return dataclasses.replace(state, config=paper).best()


def measure(root: Path) -> dict:
    state = evolve(Workspace.open(root), EvolveOptions(force=True)).state
    s0, best, top = state.base_candidate(), state.best(), highest_rate(state)
    added, removed = diff_lines(root, state.base, top.commit) if top.id != s0.id else ([], [])
    values = single_case_values(root)
    specific = [line for line in added if any(v in line for v in VALUE.findall(line) if v in values)]
    policy = policy_lines(root)
    dropped = [line for line in removed if line in policy and line not in added]
    test = lambda c: c.sets.get("test", {}).get("pass_rate")  # noqa: E731
    return {"s0": test(s0), "best": test(best), "best_id": best.id, "top": test(top), "top_id": top.id,
            "top_p": top.gain_p,
            "added": len(added), "specific": len(specific), "removed_policy": len(dropped), "rounds": state.round,
            "example": specific[:1]}


def shared_rules(root: Path) -> tuple[int, int, int, int, int]:
    """How much a rule learnt on the train cases can help the sealed ones in the simulator's world:
    (sealed cases with a rule some train case also has, sealed cases, such rules, rules of the
    sealed cases, sealed cases that turn on a policy statement some train case also turns on). Rules,
    statements and "the same rule" are the simulator's own (`SimWorld.facts`, `matching.sentence_found`)."""
    from frames_cli.formats.case_files import load_cases
    from frames_cli.sim.matching import sentence_found, sentence_sets
    from frames_cli.sim.world import SimWorld, policy_texts

    train = load_cases(sorted((root / "cases").glob("*.yaml")))
    sealed = load_cases(sorted((root / "holdout").glob("*.yaml")))
    world = SimWorld.from_cases([*train, *sealed], policy_texts(Workspace.open(root)))
    learnt = [s for case in train for rule in world.facts(case).rules for s in sentence_sets(rule)]
    hits = {case.id: [sentence_found(rule, learnt) for rule in world.facts(case).rules] for case in sealed}
    needed = {s for case in train for s in world.facts(case).statements}
    on_policy = sum(any(s in needed for s in world.facts(case).statements) for case in sealed)
    return (
        sum(any(h) for h in hits.values()),
        len(sealed),
        sum(map(sum, hits.values())),
        sum(map(len, hits.values())),
        on_policy,
    )


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:5.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--max-rounds", type=int, default=6)
    parser.add_argument("--profile", choices=sorted(PROFILES), default=None,
                        help="simulated executor (default: the bundled frames.yaml's)")
    parser.add_argument("--thin", action="store_true",
                        help="one-line procedure skills, as in the real-model trial's thin run")
    args = parser.parse_args()
    settings = (
        [("guards on", False), ("guards off", True)] if guards_config() else [("no guards in this frames", False)]
    )
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        shared = shared_rules(workspace(Path(tmp) / "world", 0, args.max_rounds, False))
        for name, off in settings:
            results[name] = [measure(workspace(Path(tmp), seed, args.max_rounds, off, args.profile, args.thin))
                             for seed in args.seeds]
    setting = f"{args.profile or 'bundled (weak)'} executor, {'thin' if args.thin else 'verbatim'} skills"
    print(f"frames-sim is a model of LLM behaviour, not an LLM. τ² airline: 30 train cases (diagnosis + selection), 20 "
          f"test (sealed); {setting}.")
    cases, n_sealed, rules, n_rules, on_policy = shared
    print(f"In the simulator's world {cases} of the {n_sealed} sealed cases turn on a rule a train case also has "
          f"({rules} of their {n_rules} rules), and {on_policy} on a policy statement a train case also turns on "
          "(which only a model that reads policy prose, policy_reading > 0, can use).")
    for name, rows in results.items():
        print(f"\n{name}")
        print("seed  test S0 → best (member)     gain | → highest rate (member, p of gain)     gain | added  "
              "case-specific  policy removed  rounds")
        for seed, r in zip(args.seeds, rows):
            gain, top_gain = (100 * ((r[k] or 0) - (r["s0"] or 0)) for k in ("best", "top"))
            share = r["specific"] / r["added"] if r["added"] else 0.0
            p = "—" if r["top_p"] is None else f"{r['top_p']:.3f}"
            print(f"{seed:>4}  {pct(r['s0'])} → {pct(r['best'])} ({r['best_id']:>5}) {gain:+6.1f} | → {pct(r['top'])} "
                  f"({r['top_id']:>5}, p {p:>5}) {top_gain:+15.1f} | {r['added']:>5}  {100 * share:5.1f}% "
                  f"({r['specific']:>2})  {r['removed_policy']:>14}  {r['rounds']:>6}")
        for key, label in (("best", "best member (recommended)"), ("top", "highest-rate member (the paper's rule)")):
            gains = [100 * ((r[key] or 0) - (r["s0"] or 0)) for r in rows]
            print(f"mean  test gain of the {label} {statistics.mean(gains):+.1f} pt (min {min(gains):+.1f}, max "
                  f"{max(gains):+.1f}); below S0 on {sum(g < 0 for g in gains)} of {len(gains)} seeds")
        added = sum(r["added"] for r in rows)
        specific = sum(r["specific"] for r in rows)
        print(f"      highest-rate members' diffs: case-specific {100 * specific / added if added else 0:.1f}% of "
              f"{added} added lines; policy sentences removed {sum(r['removed_policy'] for r in rows)}")
        examples = [r["example"][0] for r in rows if r["example"]]
        if examples:
            print(f"      e.g. case-specific line: {examples[0][:100]!r}")


if __name__ == "__main__":
    main()
