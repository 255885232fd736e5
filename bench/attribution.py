"""Attribution on and off: the bundled airline example with τ²-bench's own train/test split, through the simulator.

The bundled example follows τ²-bench's own split: its 30 train tasks in `cases/` are divided by
`evolution.split` into diagnosis and selection sets; its 20 test tasks in `holdout/` are the sealed
test set (`split.test_cases: holdout/*`), scored once at the end for S0 and the front. Each seed is a full `frames
evolve` (driver API, same
code path as the command) in a fresh copy with its own empty model cache; the seed sets
`evolution.seed` and `simulator.seed`. The two settings differ only in `evolution.attribution_steps`
(the default 2, and 0). The simulator is a model of LLM behaviour, not an LLM.

Per seed and in the mean, side by side:
  accepted      children that passed the gate (sub-children included; in brackets how many of them
                are sub-children made by attribution)
  subs          sub-children made (evaluated) / attribution steps that could implicate no skill
  test S0→best  pass rate on the sealed test set of S0 and of the front member of highest pass rate
                (the paper's rule: what attribution adds to the front, whether or not the run
                recommends it; bench/transfer.py reports the recommended member)
  tok/accepted  every token the run spent (all roles) divided by its accepted children
  tokens        every token the run spent

--profile strong --thin is the setting of the issue's real-model trial as the simulator models it:
bench/sim_calibration.py's executor profile fitted to that trial and the four procedure skills cut
to one line each (the full policy stays in policies/); the default is the bundled frames.yaml's weak
executor and verbatim skills.

Usage: python bench/attribution.py [--seeds 0 1 2 3 4] [--max-rounds N] [--profile weak|strong] [--thin]
"""

from __future__ import annotations

import argparse
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

from sim_calibration import PROFILES, thin_skills  # noqa: E402
from transfer import highest_rate  # noqa: E402

from frames_cli.evolution.run.driver import EvolveOptions, evolve  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402
from bundled import copy_example  # noqa: E402

SETTINGS = [("attribution on (steps 2)", 2), ("attribution off (steps 0)", 0)]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)


def workspace(folder: Path, seed: int, max_rounds: int, steps: int, profile: str | None = None,
              thin: bool = False) -> Path:
    """A fresh copy of the bundled example: τ²'s train split in cases/, its test split sealed in holdout/."""
    root = folder / f"seed{seed}-steps{steps}"
    copy_example(root)
    config = yaml.safe_load((root / "frames.yaml").read_text())
    ev = config["evolution"]
    ev.update(seed=seed, max_rounds=max_rounds, attribution_steps=steps)
    config["simulator"]["seed"] = seed
    if profile:
        config["simulator"].update(PROFILES[profile])
    if thin:
        thin_skills(root)
    (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "bench")
    return root


def measure(root: Path) -> dict:
    """One run's figures (see the module docstring)."""
    started = time.monotonic()
    state = evolve(Workspace.open(root), EvolveOptions(force=True)).state
    seconds = time.monotonic() - started
    accepted = [c for c in state.candidates if c.parent_id is not None and c.gate_passed]
    steps = [s for r in state.checkpoint["rounds"] for s in r.get("attribution", [])]
    s0, best = state.base_candidate(), highest_rate(state)
    test = lambda c: c.sets.get("test", {}).get("pass_rate")  # noqa: E731
    return {
        "accepted": len(accepted), "accepted_subs": sum(1 for c in accepted if c.cut_from),
        "subs": sum(1 for c in state.candidates if c.cut_from),
        "unattributed": sum(1 for s in steps if not s["implicated"]),
        "s0": test(s0), "best": test(best), "best_id": best.id, "tokens": state.spend_tokens,
        "per_accepted": state.spend_tokens / len(accepted) if accepted else None, "rounds": state.round,
        "seconds": seconds,
    }


def pct(x: float | None) -> str:
    return "    —" if x is None else f"{100 * x:5.1f}%"


def report(name: str, seeds: list[int], rows: list[dict]) -> None:
    print(f"\n{name}")
    print("seed  accepted (subs)  subs made / none implicated  test S0 → best (member)   tok/accepted      tokens  "
          "rounds")
    for seed, r in zip(seeds, rows):
        per = "—" if r["per_accepted"] is None else f"{r['per_accepted']:,.0f}"
        print(f"{seed:>4}  {r['accepted']:>8} ({r['accepted_subs']})  {r['subs']:>9} / {r['unattributed']:<15}  "
              f"{pct(r['s0'])} → {pct(r['best'])} ({r['best_id']:>5})  {per:>12}  {r['tokens']:>10,}  {r['rounds']:>6}")
    accepted = sum(r["accepted"] for r in rows)
    tokens = sum(r["tokens"] for r in rows)
    best = [r["best"] or 0.0 for r in rows]
    s0 = [r["s0"] or 0.0 for r in rows]
    per = f"{tokens / accepted:,.0f}" if accepted else "—"
    print(f"mean  accepted {accepted / len(rows):.1f} per run ({sum(r['accepted_subs'] for r in rows)} sub-children in "
          f"all); test S0 {100 * statistics.mean(s0):.1f}% → best {100 * statistics.mean(best):.1f}% (min "
          f"{100 * min(best):.1f}, max {100 * max(best):.1f}); tokens per accepted child {per} ({tokens:,} tokens, "
          f"{accepted} accepted); {statistics.mean(r['seconds'] for r in rows):.0f} s per run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--max-rounds", type=int, default=6)
    parser.add_argument("--profile", choices=sorted(PROFILES), default=None,
                        help="simulated executor (default: the bundled frames.yaml's)")
    parser.add_argument("--thin", action="store_true",
                        help="one-line procedure skills, as in the real-model trial's thin run")
    args = parser.parse_args()
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, steps in SETTINGS:
            results[name] = [measure(workspace(Path(tmp), seed, args.max_rounds, steps, args.profile, args.thin))
                             for seed in args.seeds]
    setting = f"{args.profile or 'bundled (weak)'} executor, {'thin' if args.thin else 'verbatim'} skills"
    print(f"frames-sim is a model of LLM behaviour, not an LLM ({setting}). τ² airline: 30 train cases (diagnosis + "
          f"selection), 20 test (sealed).")
    for name, rows in results.items():
        report(name, args.seeds, rows)


if __name__ == "__main__":
    main()
