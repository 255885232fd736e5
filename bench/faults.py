"""The bundled example evolved with each simulated fault kind at rate 0.2, against a fault-free run (issue 15).

Each row is a full `frames evolve` (driver API) in a fresh copy of the bundled workspace, as
committed at HEAD, with its own empty model cache and `simulator.faults.<kind>: 0.2` (the
fault-free row: all 0). Backoffs are cut to 0.01–0.05 s so rate limits cost no wall time; nothing
else differs from frames.yaml. The simulator draws a fault from (seed, role, sample, prompt,
attempt) and an answer from (seed, role, sample, prompt), so a retried call gets the answer the
fault-free run got, while a repair turn (malformed or truncated replies) changes the prompt.

Printed per row:
  status     how the run ended (finished, or the error)
  lost       results (case × sample) still lost after `eval.lost_retries`, left out of every score
  lost-as-failure  results scored as failures although their answer was lost: a failed result
             whose reason is a model-layer give-up ("gave up after", "invalid answer after")
  front      the front members as id pass-rate/tokens; `same` when ids, rates, tokens and skills/
             trees (git tree ids) equal the fault-free run's

The totals line: `lost-as-failure=N front-equal-rate-limit=yes|no front-equal-timeout=yes|no`.

Usage: python bench/faults.py [--rate 0.2] [--lost-retries N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ablation import commit_all, snapshot  # noqa: E402

from frames_cli.errors import FramesError  # noqa: E402
from frames_cli.evolution.run.driver import EvolveOptions, evolve  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402

KINDS = ("none", "rate_limit", "timeout", "malformed_json", "truncated")
GIVE_UPS = ("gave up after", "invalid answer after")


def workspace(tmp: Path, example: Path, kind: str, rate: float, lost_retries: int | None) -> Path:
    """A fresh git repo holding the bundled example with fault `kind` at `rate`."""
    root = tmp / f"ws-{kind}"
    shutil.copytree(example, root)
    config = yaml.safe_load((root / "frames.yaml").read_text())
    if kind != "none":
        config["simulator"].setdefault("faults", {})[kind] = rate
    config["llm"].update(backoff_base_s=0.01, backoff_max_s=0.05)
    if lost_retries is not None:
        config["eval"]["lost_retries"] = lost_retries
    (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    commit_all(root, "bundled example")
    return root


def one_run(root: Path) -> dict:
    """Evolve once; status, lost counts and the front (id, pass rate, mean tokens, skills tree)."""
    try:
        state = evolve(Workspace.open(root), EvolveOptions()).state
    except FramesError as exc:
        return {"status": f"error: {exc}", "lost": 0, "lost_as_failure": 0, "front": []}
    as_failure = 0
    for path in sorted((root / ".frames" / "runs" / state.run_id / "evals").glob("*.json")):
        for r in json.loads(path.read_text())["results"]:
            if not r["passed"] and not r.get("lost") and any(g in r["reason"] for g in GIVE_UPS):
                as_failure += 1
    # The skills/ tree only: frames.yaml, also committed, differs between rows by its fault setting.
    def tree(sha: str) -> str:
        return subprocess.run(["git", "rev-parse", f"{sha}:skills"], cwd=root, check=True, capture_output=True,
                              text=True).stdout.strip()

    front = [(c.id, round(c.pass_rate or 0.0, 6), round(c.mean_tokens or 0.0, 3), tree(c.commit))
             for c in state.front_candidates()]
    return {"status": state.status + (f" ({state.stop_reason})" if state.stop_reason else ""),
            "lost": state.lost_results(),
            "lost_as_failure": as_failure, "front": front, "tokens": state.spend_tokens}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=0.2, help="rate of each fault kind (default 0.2)")
    parser.add_argument("--lost-retries", type=int, default=None,
                        help="override eval.lost_retries (default: frames.yaml's)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = {}
    with tempfile.TemporaryDirectory(prefix="frames-faults-") as tmp:
        example = snapshot(Path(tmp))
        for kind in KINDS:
            rows[kind] = one_run(workspace(Path(tmp), example, kind, args.rate, args.lost_retries))
            print(f"  {kind}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    clean = rows["none"]["front"]
    print(f"Bundled example, simulator (not an LLM), each fault kind at {args.rate}")
    print(f"{'faults':<16} {'status':<24} {'lost':>5} {'lost-as-failure':>15} {'tokens':>11}  front")
    for kind, row in rows.items():
        shown = " ".join(f"{cid} {rate * 100:.1f}%/{tokens:,.0f}" for cid, rate, tokens, _ in row["front"])
        same = " (same)" if kind != "none" and row["front"] == clean else ""
        print(f"{kind:<16} {row['status'][:24]:<24} {row['lost']:>5} {row['lost_as_failure']:>15} "
              f"{row.get('tokens', 0):>11,}  {shown}{same}")
    total = sum(r["lost_as_failure"] for r in rows.values())
    equal = {k: "yes" if rows[k]["front"] == clean else "no" for k in ("rate_limit", "timeout")}
    print(f"\nlost-as-failure={total} front-equal-rate-limit={equal['rate_limit']} "
          f"front-equal-timeout={equal['timeout']}")
    print(f"total wall time {time.perf_counter() - started:.0f} s")
    return 0 if total == 0 and set(equal.values()) == {"yes"} else 1


if __name__ == "__main__":
    sys.exit(main())
