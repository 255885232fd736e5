"""The spend estimate (`frames evolve --estimate`, `frames eval --estimate`) against the real spend of the bundled run.

Usage: python bench/estimate.py [--seeds N]   (default 1: the bundled settings, seed 0). Copies the
bundled example (frames.yaml, policies/, skills/, cases/) into a temporary git repository, and per
seed: estimates a new evolve run, runs it on the simulator without the cache, and compares the
ledger with the estimate per role; then the same for one `frames eval` of the base skills.
Prints calls (expected, at most, real) and tokens (expected, real, real ÷ expected). Checks what
issue 17 asks: real tokens within ±25 % of the expected tokens, real calls never above the
estimate's maximum (per role and in total); exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from frames_cli.evaluation.estimate import Estimate
from frames_cli.workspace.layout import Workspace

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.25


def copy_example(root: Path) -> None:
    """The bundled example as a fresh git repository at `root` (one commit, user `bench`)."""
    root.mkdir(parents=True)
    for name in ("frames.yaml", "policies", "skills", "cases", "holdout"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    (root / ".gitignore").write_text(".frames/\n")
    git = ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "bundled example"], check=True)


def compare(label: str, estimate: Estimate, ledger: dict) -> list[str]:
    """Print one table row per role and the total; return the failed checks."""
    failures = []
    roles = ledger["roles"]
    print(f"\n{label}")
    print(f"{'role':<10} {'calls':>7} {'at most':>8} {'real':>6} {'tokens est.':>12} {'real':>12} {'real/est.':>9}")
    rows = [(name, estimate.roles.get(name), roles.get(name, {})) for name in sorted(set(estimate.roles) | set(roles))]
    for name, est, real in rows:
        calls, tokens = real.get("calls", 0), real.get("prompt_tokens", 0) + real.get("completion_tokens", 0)
        e_calls, e_max, e_tokens = (est.calls, est.calls_max, est.tokens) if est else (0, 0, 0)
        ratio = tokens / e_tokens if e_tokens else float("inf")
        print(f"{name:<10} {e_calls:>7,} {e_max:>8,} {calls:>6,} {e_tokens:>12,} {tokens:>12,} {ratio:>9.3f}")
        if calls > e_max:
            failures.append(f"{label}: {name} made {calls} calls, above the estimate's maximum {e_max}")
    total = ledger["total_tokens"]
    calls = sum(r.get("calls", 0) for r in roles.values())
    ratio = total / estimate.tokens
    print(f"{'total':<10} {estimate.calls:>7,} {estimate.calls_max:>8,} {calls:>6,} {estimate.tokens:>12,} {total:>12,} {ratio:>9.3f}")
    if calls > estimate.calls_max:
        failures.append(f"{label}: {calls} calls, above the estimate's maximum {estimate.calls_max}")
    if abs(ratio - 1) > TOLERANCE:
        failures.append(f"{label}: real tokens are {ratio:.3f} × the estimate, outside ±{TOLERANCE:.0%}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="evolve runs with evolution.seed 0..N-1 (default 1)")
    args = parser.parse_args()
    from frames_cli.evaluation.estimate import evaluation_estimate
    from frames_cli.evolution.driver import EvolveOptions, evolve
    from frames_cli.evolution.driver import estimate as estimate_new_run
    from frames_cli.formats.case_files import load_counted_cases
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.workspace.config import with_overrides

    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        copy_example(root)
        ws = Workspace.open(root)
        for seed in range(args.seeds):
            options = EvolveOptions(seed=seed, use_cache=False, force=True)
            estimate = estimate_new_run(ws, options)
            outcome = evolve(ws, options)
            ledger = json.loads((ws.runs_dir / outcome.state.run_id / "ledger.json").read_text())
            label = f"frames evolve, seed {seed}: {outcome.state.round} rounds ({outcome.state.stop_reason}), {len(outcome.state.candidates)} candidates"
            failures += compare(label, estimate, ledger)

        from frames_cli.evaluation.runner import evaluate
        from frames_cli.executor.factory import make_executor
        from frames_cli.llm.client import ModelClient
        from frames_cli.sim.world import SimWorld

        config = ws.config()
        cases = load_counted_cases(ws.root, config.eval.cases)
        skills = SkillSet.from_dir(ws.skills_dir)
        estimate = evaluation_estimate(cases, skills, config, config.eval.samples)
        run_dir = ws.state_dir / "evals" / "bench-estimate"
        with ModelClient(ws, with_overrides(config, "llm", cache=False), run_dir=run_dir, sim_world=SimWorld.from_cases(cases)) as client:
            evaluate(cases, skills, make_executor(ws, config, client), samples=config.eval.samples)
        failures += compare("frames eval of the base skills", estimate, client.ledger.to_dict())
    for failure in failures:
        print(f"FAILED: {failure}")
    print("all checks hold" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
