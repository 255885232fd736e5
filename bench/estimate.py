"""The spend estimate (`frames evolve --estimate`, `frames eval --estimate`) against the real spend of the bundled run.

Usage: python bench/estimate.py [--seeds N]   (default 1: the bundled settings, seed 0). Copies the
bundled example (frames.yaml, policies/, skills/, cases/) into a temporary git repository, and per
seed: estimates a new evolve run, runs it on the simulator without the cache, and compares the
ledger with the estimate per role. Then once more, seed 0, with nothing that ends a run or a
child's evaluation early (patience = max_rounds, early rejection and attribution off): the run
the full-run figure describes. Then one `frames eval` of the base skills.

Prints calls (expected, at most, real) and tokens (the short run's and the full run's expected,
real, real ÷ full, at most). Checks what the estimate promises (evolution/run/estimate.py,
docs/decisions/0053-reliability-same-inputs-same-run.md): real calls and tokens never above the maximum
(per role and in total); every evolve run's real tokens between 0.75 × the short run's and
1.25 × the full run's; the full-length run (when each of its rounds made a child, as the
full-run figure assumes) and the eval within ±25 % of the expected figure.
Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from frames_cli.evaluation.estimate import Estimate
from frames_cli.workspace.layout import Workspace
import bundled

TOLERANCE = 0.25


def copy_example(root: Path, evolution: dict | None = None) -> None:
    """The bundled example as a fresh git repository at `root` (one commit, user `bench`), with
    `evolution` overrides in its frames.yaml."""
    import yaml

    bundled.copy_example(root)
    if evolution:
        config = yaml.safe_load((root / "frames.yaml").read_text())
        config["evolution"].update(evolution)
        (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    git = ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "bundled example"], check=True)


def compare(label: str, estimate: Estimate, ledger: dict, full_length: bool) -> list[str]:
    """Print one table row per role and the total; return the failed checks. `full_length`: the
    run had nothing to end it early, so its tokens must be within ±TOLERANCE of the full-run figure;
    otherwise between (1 − TOLERANCE) × the short run's and (1 + TOLERANCE) × the full run's."""
    failures = []
    roles = ledger["roles"]
    short = estimate.short
    print(f"\n{label}")
    print(f"{'role':<10} {'calls':>7} {'at most':>8} {'real':>6} {'tok. short':>11} {'tok. full':>11} {'real':>11} "
          f"{'real/full':>9} {'at most':>15}")
    for name in sorted(set(estimate.roles) | set(roles)):
        est, real = estimate.roles.get(name), roles.get(name, {})
        calls, tokens = real.get("calls", 0), real.get("prompt_tokens", 0) + real.get("completion_tokens", 0)
        e_calls, e_max, e_tokens, e_max_tokens = (
            (est.calls, est.calls_max, est.tokens, est.max_tokens) if est else (0, 0, 0, 0)
        )
        low = f"{short.roles[name].tokens:,}" if short and name in short.roles else "—"
        ratio = tokens / e_tokens if e_tokens else float("inf")
        print(f"{name:<10} {e_calls:>7,} {e_max:>8,} {calls:>6,} {low:>11} {e_tokens:>11,} {tokens:>11,} {ratio:>9.3f} "
              f"{e_max_tokens:>15,}")
        if calls > e_max:
            failures.append(f"{label}: {name} made {calls} calls, above the estimate's maximum {e_max}")
        if tokens > e_max_tokens:
            failures.append(f"{label}: {name} spent {tokens:,} tokens, above the estimate's maximum {e_max_tokens:,}")
    total = ledger["total_tokens"]
    calls = sum(r.get("calls", 0) for r in roles.values())
    ratio = total / estimate.tokens
    low = short.tokens if short else estimate.tokens
    print(f"{'total':<10} {estimate.calls:>7,} {estimate.calls_max:>8,} {calls:>6,} {f'{low:,}' if short else '—':>11} "
          f"{estimate.tokens:>11,} {total:>11,} {ratio:>9.3f} {estimate.max_tokens:>15,}")
    if calls > estimate.calls_max:
        failures.append(f"{label}: {calls} calls, above the estimate's maximum {estimate.calls_max}")
    if total > estimate.max_tokens:
        failures.append(f"{label}: {total:,} tokens, above the estimate's maximum {estimate.max_tokens:,}")
    if full_length and abs(ratio - 1) > TOLERANCE:
        failures.append(f"{label}: real tokens are {ratio:.3f} × the full-run estimate, outside ±{TOLERANCE:.0%}")
    if not full_length and not (1 - TOLERANCE) * low <= total <= (1 + TOLERANCE) * estimate.tokens:
        failures.append(f"{label}: real tokens {total:,} outside [{1 - TOLERANCE:g} × {low:,}, {1 + TOLERANCE:g} × "
                        f"{estimate.tokens:,}]")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="evolve runs with evolution.seed 0..N-1 (default 1)")
    args = parser.parse_args()
    from frames_cli.evaluation.estimate import evaluation_estimate
    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.evolution.run.driver import estimate as estimate_new_run
    from frames_cli.formats.case_files import load_counted_cases
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.workspace.config import with_overrides

    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        copy_example(root)
        ws = Workspace.open(root)
        copy_example(Path(tmp) / "full-length",
                     {"patience": ws.config().evolution.max_rounds, "early_rejection": False, "attribution_steps": 0})
        full = Workspace.open(Path(tmp) / "full-length")
        runs = [(ws, seed, False) for seed in range(args.seeds)] + [(full, 0, True)]
        for where, seed, full_length in runs:
            options = EvolveOptions(seed=seed, use_cache=False, force=True)
            estimate = estimate_new_run(where, options)
            outcome = evolve(where, options)
            ledger = json.loads((where.runs_dir / outcome.state.run_id / "ledger.json").read_text())
            kind = (
                "full length (patience = max_rounds, no early rejection, no attribution)"
                if full_length
                else "bundled settings"
            )
            childless = outcome.state.round + 1 - len(outcome.state.candidates)
            label = (f"frames evolve, seed {seed}, {kind}: {outcome.state.round} rounds ({outcome.state.stop_reason}), "
                     f"{len(outcome.state.candidates)} candidates")
            if full_length and childless > 0:
                # The full-run figure is one child per round; a round whose rewrites were all
                # dropped made none, and the figure does not describe this run: range check only.
                label += f"; {childless} round(s) made no child, so only the range is checked"
            failures += compare(label, estimate, ledger, full_length and childless <= 0)

        from frames_cli.evaluation.runner import evaluate
        from frames_cli.executor.factory import make_executor
        from frames_cli.llm.client.client import ModelClient
        from frames_cli.sim.world import SimWorld

        config = ws.config()
        cases = load_counted_cases(ws.root, config.eval.cases)
        skills = SkillSet.from_dir(ws.skills_dir)
        estimate = evaluation_estimate(cases, skills, config, config.eval.samples)
        run_dir = ws.state_dir / "evals" / "bench-estimate"
        with ModelClient(ws, with_overrides(config, "llm", cache=False), run_dir=run_dir,
                         sim_world=SimWorld.from_cases(cases)) as client:
            evaluate(cases, skills, make_executor(ws, config, client), samples=config.eval.samples)
        failures += compare("frames eval of the base skills", estimate, client.ledger.to_dict(), True)
    for failure in failures:
        print(f"FAILED: {failure}")
    print("all checks hold" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
