"""The gate and the cost of evaluation on the bundled airline example, through the simulator (not an LLM).

Per seed (the seed sets `evolution.seed` and `simulator.seed`), in fresh copies of the bundled
workspace as committed at HEAD, each with its own empty model cache:

  aa-false-reject            S0 against fresh samples of S0: the base skill set is evaluated once
                             with k·(R + 1) samples per case (the simulated executor answers each
                             sample with an independent draw), cut into R + 1 groups of k; group 0
                             is the baseline, groups 1..R are R re-runs. Share of those R gate
                             checks that reject, per rule. Two bases: the bundled S0, and the front
                             member of the seed's evolve run with the highest selection pass rate
                             (a skill set that passes most cases, where noise has something to
                             flip), whether or not the run recommends it.
  planted-regression-reject  the same re-runs with one category made worse: ⌈n/3⌉ of the cases its
                             base passes (in at least half of all k·(R + 1) samples; the most often
                             passed first) fail every sample. Share rejected, per rule, over every
                             (re-run, category) where ⌈n/3⌉ such cases exist. Also printed, as
                             "planted (any pass)", the definition used before 2026-12-01 15:00:
                             ⌈n/3⌉ cases the baseline group passed in at least one of its samples
                             (mostly cases the base passes one time in ten, whose "regression" no
                             test can tell from noise: docs/decisions/0043-noise-aware-gate-per-case.md). And "planted
                             (partial)": the same cases as planted-regression-reject, but the
                             child keeps its own pass in every fourth sample of them (a case
                             made worse, not always failing).
                             Every rule judges the same children: the paper's and the noise-aware
                             rule at each fixed k of --samples (the first k samples of each
                             group), and the sequential noise-aware gate (evolution/compare/sequential.py)
                             from each --sequential-start (1, the bundled example's eval.samples,
                             and 5) up to --sequential-max (each group
                             holds max(--samples, --sequential-max) samples; look j reads the
                             first k_j of them).
  tokens per gate check      evaluation tokens (agent + judge) of the samples an A/A check compared
                             on the child's side: every case at k for a fixed k; for the sequential
                             gate every case at its first look and the samples its later looks
                             drew (replayed as a run draws them, every look in full). S0's extra
                             samples are drawn once per base and shared by its children; the most
                             S0 needed per case is printed.
  early-rejection-saving     two `frames evolve` runs per seed (the bundled settings: the default
                             `evolution.gate: paper`), `evolution.early_rejection` off and
                             on: executor tokens of the rejected children of the second against the
                             same children of the first (the cases evaluated after a stop for
                             attribution included); decisions-identical compares the gate decision
                             of every child of every seed between the two runs.
  tokens-per-run             spend of the whole evolve run (all roles, ledger), before and after,
                             both on the same cases: HEAD's cases/ (τ²'s 30 train tasks), no
                             sealed set. The bundled run as shipped (the same 30 cases and 20
                             sealed test cases scored once at the end) is printed beside it,
                             and that run again with `evolution.gate: noise-aware` (the
                             sequential gate from the bundled eval.samples, 1, to 40): its
                             tokens and how many of its children were rejected, early or not.
  later-run                  tokens of two runs per rule on one base, as nightly runs meet it: the
                             first on 27 of the 30 cases, a later one once the other 3 (every 10th
                             by id) have arrived in a new case file. The noise-aware rule's against
                             the paper's rule's, each run: S0's extra gate samples are drawn once
                             per base commit (evaluation/samples.py), so the later run takes them
                             from the sample store (the new cases change the simulator's world,
                             so the model cache answers none of its calls).
  cacheable-prefix-share     share of the executor prompt characters that lie in the prefix shared
                             by every executor request of the same evaluation (from the before and
                             after runs' exchanges.jsonl; the simulator counts ⌈characters / 4⌉ tokens).

"Before" is the code at revision --before (default: main before issue #12), unpacked with `git
archive` and run from a subprocess with the same Python, with its own frames.yaml, policies and
skills (its cases/ held all 50 τ² tasks; it gets HEAD's 30 instead); "after" is this checkout.

The gate checks are made at every k of --samples and sequentially, side by side (the same runs,
skill sets and children).

Usage: python bench/gate.py [--seeds 0 1 2 3 4] [--samples 1 5 10 20 40] [--sequential-start 1 5] [--sequential-max 40]
                            [--reruns 6] [--before REV] [--max-rounds N] [--new-every N]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
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

from ablation import commit_all  # noqa: E402

from frames_cli.evolution.run.driver import EvolveOptions, evolve  # noqa: E402
from frames_cli.evolution.compare.gate import PerCategoryGate  # noqa: E402
from frames_cli.evolution.compare.verdict import CaseOutcome, outcomes_from_results  # noqa: E402
from frames_cli.evolution.state.runs import run_dir  # noqa: E402
from frames_cli.evolution.compare.sequential import Drawn, SequentialGate  # noqa: E402
from frames_cli.evolution.compare.sequential_draw import sequential_verdict  # noqa: E402
from frames_cli.workspace.config import BudgetConfig  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402

EXAMPLE = ("frames.yaml", "policies", "skills", "cases", "holdout")
#: What the "before" runs take from revision BEFORE: its settings, policies and skills. Their cases
#: are HEAD's cases/ (τ²'s 30 train tasks): BEFORE's cases/ held all 50 tasks, so its runs
#: evaluated 50 cases where HEAD's evaluate 30 (and seal the 20 test tasks).
EXAMPLE_BEFORE = ("frames.yaml", "policies", "skills")
#: main just before issue #12's first change: the "before" of tokens-per-run and cacheable-prefix-share.
BEFORE = "3c20bc3"
RULES = ("paper", "noise-aware")
#: later-run: every NEW_EVERY-th case by id arrives after the first run (3 of the bundled 30; --new-every).
NEW_EVERY = 10
#: Run in BEFORE's code, so its module paths are BEFORE's (evolution/driver.py, not evolution/run/driver.py).
_BEFORE_RUN = """
import json, os, sys
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, sys.argv[1])
from frames_cli.evolution.driver import EvolveOptions, evolve
from frames_cli.workspace.layout import Workspace
state = evolve(Workspace.open(sys.argv[2]), EvolveOptions()).state
print(json.dumps({"run_id": state.run_id, "tokens": state.spend_tokens}))
"""


def unpack(rev: str, paths: tuple[str, ...], into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev, *paths], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def same_cases(example: Path, before: Path, into: Path) -> tuple[Path, Path]:
    """(HEAD's example, BEFORE's example) with the same cases for tokens-per-run and
    cacheable-prefix-share: HEAD's cases/ in both, no sealed holdout/ in HEAD's (BEFORE has none)."""
    after = into / "after"
    shutil.copytree(example, after, ignore=shutil.ignore_patterns("holdout"))
    config = yaml.safe_load((after / "frames.yaml").read_text())
    config["evolution"]["split"]["test_cases"] = None
    (after / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copytree(example / "cases", before / "cases")
    return after, before


def workspace(tmp: Path, example: Path, seed: int, evolution: dict, samples: int | None = None) -> Path:
    """A fresh git repo holding the bundled example with `evolution` overrides and the seed applied."""
    root = tmp / f"ws-{len(list(tmp.iterdir()))}"
    shutil.copytree(example, root)
    config = yaml.safe_load((root / "frames.yaml").read_text())
    config["evolution"] = {k: v for k, v in {**config["evolution"], **evolution, "seed": seed}.items() if v is not None}
    config["simulator"]["seed"] = seed
    if samples:
        config["eval"]["samples"] = samples
    (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    commit_all(root, "bundled example")
    return root


def evals(root: Path, run_id: str) -> dict[str, dict]:
    folder = run_dir(Workspace.open(root), run_id) / "evals"
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


def eval_tokens(evaluation: dict) -> float:
    """Prompt + completion tokens of one candidate's evaluation (mean per result × results)."""
    return evaluation["mean_tokens"] * len(evaluation["results"])


def prefix_share(exchanges: Path) -> tuple[int, int]:
    """(characters in the prefix every request of its evaluation shares, all characters) over the
    executor requests of a run; an evaluation is a maximal stretch of executor requests in the log."""
    records = [json.loads(line) for line in exchanges.read_text(encoding="utf-8").splitlines() if line.strip()]
    shared = total = 0
    stretch: list[str] = []
    for record in [*records, {"role": "end"}]:
        if record["role"] == "executor":
            stretch.append("\n\n".join(str(m.get("content") or "") for m in record["messages"]))
            continue
        if len(stretch) > 1:
            common = os.path.commonprefix(stretch)
            shared += len(common) * len(stretch)
            total += sum(len(t) for t in stretch)
        stretch = []
    return shared, total


def samples_outcomes(
    root: Path, commit: str | None, samples: int
) -> tuple[dict[str, CaseOutcome], dict[str, list[int]]]:
    """Evaluate the skills of `commit` (None: the base) on every case with `samples` samples, fresh:
    the outcomes, and case id → evaluation tokens (prompt + completion, agent and judge) per sample."""
    from frames_cli.evaluation.runner import evaluate
    from frames_cli.executor.factory import make_executor
    from frames_cli.formats.case_files import load_counted_cases
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.gitstore.store import GitStore
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.sim.world import SimWorld

    ws = Workspace.open(root)
    # k·(R + 1) samples of every case are a bench's measurement, not a run: no run budget applies.
    config = dataclasses.replace(ws.config(), budget=BudgetConfig(max_tokens=None))
    cases = load_counted_cases(ws.root, config.eval.cases)
    skills = SkillSet.from_files(GitStore(ws.root).read_files(commit or "HEAD"))
    with ModelClient(ws, config, use_cache=False, sim_world=SimWorld.from_cases(cases)) as client:
        report = evaluate(cases, skills, make_executor(ws, config, client), samples=samples)
    spent: dict[str, list[int]] = {}
    for r in report.results:
        spent.setdefault(r.case_id, []).append(r.usage.prompt_tokens + r.usage.completion_tokens)
    return outcomes_from_results(r.to_dict() for r in report.results), spent


def group(outcomes: dict[str, CaseOutcome], g: int, k: int) -> dict[str, CaseOutcome]:
    return {cid: CaseOutcome(o.category, o.passes[g * k : (g + 1) * k]) for cid, o in outcomes.items()}


def planted(base: dict[str, CaseOutcome], child: dict[str, CaseOutcome], category: str,
            long_run: dict[str, CaseOutcome] | None = None, keep: int = 0) -> dict[str, CaseOutcome] | None:
    """`child` with ⌈n/3⌉ of `category`'s passing cases failing every sample; None when it has fewer.

    With `long_run` (every sample of the base), a passing case is one the base passes in at least
    half of them; without it (the old definition), one `base` passed in any of its k samples. With
    `keep` > 0 the break is partial: the child keeps its own pass in samples 0, keep, 2·keep, …
    """
    ids = [cid for cid, o in base.items() if o.category == category]
    worse = math.ceil(len(ids) / 3)
    if long_run is None:
        rate = {cid: base[cid].passed for cid in ids}
        passing = [cid for cid in ids if base[cid].passed]
    else:
        rate = {cid: long_run[cid].passed / len(long_run[cid].passes) for cid in ids}
        passing = [cid for cid in ids if rate[cid] >= 0.5]
    chosen = sorted(passing, key=lambda c: -rate[c])[:worse]
    if len(chosen) < worse:
        return None
    out = dict(child)
    for cid in chosen:
        out[cid] = CaseOutcome(category,
                               tuple(bool(keep) and p and i % keep == 0 for i, p in enumerate(child[cid].passes)))
    return out


def staged_replay(seq: SequentialGate, base: dict[str, CaseOutcome], child: dict[str, CaseOutcome],
                  tokens: dict[str, list[int]],
                  stage: int) -> tuple[bool, int, int, int]:
    """The sequential gate on one child, its samples drawn as a run draws them: (passed, the child's
    evaluation tokens with every look drawn in full, the same with early rejection inside the looks,
    `stage` cases at a time, and the most samples per case of S0 drawn with every look in full).
    Both start from the first look's k samples of every case; S0's side is not counted in the
    tokens (drawn once per base)."""
    k = seq.looks[0]
    spent = {}
    s0_read = k
    for label, staged in (("full", 0), ("early", stage)):
        have = {"baseline": {c: CaseOutcome(o.category, o.passes[:k]) for c, o in base.items()},
                "child": {c: CaseOutcome(o.category, o.passes[:k]) for c, o in child.items()}}
        drawn = dict.fromkeys(child, k)

        def draw(side, ids, first, count, have=have, drawn=drawn):
            for c in ids:
                o = (base if side == "baseline" else child)[c]
                have[side][c] = CaseOutcome(o.category, o.passes[: first + count])
                if side == "child":
                    drawn[c] = first + count

        verdict = sequential_verdict(seq, lambda have=have: (Drawn(dict(have["baseline"])), Drawn(dict(have["child"]))),
                                     draw, staged)
        spent[label] = (verdict.passed, sum(sum(tokens[c][:n]) for c, n in drawn.items()))
        if not staged:
            s0_read = max(len(o.passes) for o in have["baseline"].values())
    assert spent["full"][0] == spent["early"][0], "early rejection inside a look changed a verdict"
    return spent["full"][0], spent["full"][1], spent["early"][1], s0_read


def gate_checks(outcomes: dict[str, CaseOutcome], spent: dict[str, list[int]], group_size: int,
                args: argparse.Namespace, tally: dict) -> None:
    """A/A and planted-regression checks on one evaluation with `group_size`·(reruns + 1) samples
    per case, cut into reruns + 1 groups: both fixed rules at each k of --samples (the group's first
    k samples), and the sequential noise-aware gate from --sequential-start to --sequential-max
    samples (it reads the first k_j of each group at look j). Tokens per check: the child side's
    evaluation tokens of the samples the check compared (the fixed gate: every case at k; the
    sequential gate: every case at the first look, an undecided category's cases up to its look)."""
    full = group(outcomes, 0, group_size)
    categories = sorted({o.category for o in full.values()})
    plans = {start: SequentialGate.plan(PerCategoryGate(0.05, "noise-aware", 0.05), start, args.sequential_max)
             for start in args.sequential_start}
    for r in range(1, args.reruns + 1):
        rerun = group(outcomes, r, group_size)
        child_tokens = {cid: t[r * group_size : (r + 1) * group_size] for cid, t in spent.items()}
        for key, _cat, child in rerun_children(outcomes, full, rerun, categories):
            for k in args.samples:
                for rule in RULES:
                    gate = PerCategoryGate(0.05, rule, 0.05)
                    tally[key, rule, k].append(not gate.check(group(full, 0, k), group(child, 0, k)).passed)
                if key == "aa":
                    tally["tokens", k].append(sum(sum(t[:k]) for t in child_tokens.values()))
            for start, seq in plans.items():
                if seq is not None:
                    sequential_checks(key, seq, start, full, child, child_tokens, args.stage, tally)


def rerun_children(outcomes: dict[str, CaseOutcome], full: dict[str, CaseOutcome], rerun: dict[str, CaseOutcome],
                   categories: list[str]) -> list[tuple[str, str | None, dict[str, CaseOutcome]]]:
    """(kind, category, child) of one rerun: itself as an A/A child, and per category the planted
    regressions that apply to it."""
    children: list[tuple[str, str | None, dict[str, CaseOutcome]]] = [("aa", None, rerun)]
    for cat in categories:
        for key, long_run, keep in (("planted", outcomes, 0), ("planted-any", None, 0),
                                    ("planted-partial", outcomes, 4)):
            worse = planted(full, rerun, cat, long_run, keep)
            if worse is not None:
                children.append((key, cat, worse))
    return children


def sequential_checks(key: str, seq: SequentialGate, start: int, full: dict[str, CaseOutcome],
                      child: dict[str, CaseOutcome], child_tokens: dict[str, list[int]], stage: int,
                      tally: dict) -> None:
    """The sequential gate starting at `start` samples on one child of kind `key`: its verdict; for the
    A/A and planted children, the early stop inside a look replayed; for A/A, the samples it drew."""
    verdict = seq.decide(Drawn(full), Drawn(child)).verdict
    tally[key, "sequential", start].append(not verdict.passed)
    if key in ("aa", "planted"):
        passed, whole, early, s0_read = staged_replay(seq, full, child, child_tokens, stage)
        tally["look_identical"] &= passed == verdict.passed
        if not passed:
            tally["look_full", start] += whole
            tally["look_early", start] += early
            tally["look_rejected", start] += 1
    if key == "aa":
        tally["tokens", "sequential", start].append(whole)
        tally["base_samples", start].append(s0_read)
        tally["sampled_further", start].append(sum(s["samples"] > start
                                                   for s in verdict.sequential["categories"].values()))


def one_seed(tmp: Path, example: Path, before: Path, seed: int, args: argparse.Namespace, tally: dict) -> None:
    rounds = {"max_rounds": args.max_rounds}
    runs = {}
    for label, early in (("full", False), ("early", True)):
        root = workspace(tmp, example, seed, {**rounds, "early_rejection": early})
        state = evolve(Workspace.open(root), EvolveOptions()).state
        runs[label] = (root, state)
    (full_root, full), (early_root, early) = runs["full"], runs["early"]
    full_evals, early_evals = evals(full_root, full.run_id), evals(early_root, early.run_id)
    for a, b in zip(full.candidates, early.candidates):
        tally["children"] += a.parent_id is not None
        # Commits differ between the two workspaces (their base commits have different dates); the
        # decision, the skills changed and the size of the change must not.
        tally["identical"] &= (a.id, a.gate_passed, a.changed_skills, a.diff_size) == (
            b.id,
            b.gate_passed,
            b.changed_skills,
            b.diff_size,
        )
        if a.parent_id is not None and not a.gate_passed:
            tally["rejected_full"] += eval_tokens(full_evals[a.id])
            tally["rejected_early"] += eval_tokens(early_evals[b.id])
            tally["rejected"] += 1
            tally["stopped"] += bool(b.gate_details.get("early_stop"))
            tally["settled"] += len((b.gate_details.get("early_stop") or {}).get("settled", []))
            tally["skipped"] += len((b.gate_details.get("early_stop") or {}).get("skipped", []))
    tally["identical"] &= len(full.candidates) == len(early.candidates)
    after_example, before_example = same_cases(example, unpack(args.before, EXAMPLE_BEFORE,
                                                               tmp / f"example-before-{seed}"), tmp / f"same-{seed}")
    before_root = workspace(tmp, before_example, seed, rounds)
    out = subprocess.run([sys.executable, "-c", _BEFORE_RUN, str(before), str(before_root)], check=True,
                         capture_output=True, text=True)
    old = json.loads(out.stdout.strip().splitlines()[-1])
    after_root = workspace(tmp, after_example, seed, rounds)
    after = evolve(Workspace.open(after_root), EvolveOptions()).state
    tally["tokens_before"].append(old["tokens"])
    tally["tokens_after"].append(after.spend_tokens)
    tally["tokens_bundled"].append(early.spend_tokens)
    # The same bundled run with the noise-aware rule, as `evolution.gate: noise-aware` alone gives it
    # (sequential from eval.samples up to gate_max_samples): what choosing it as the default would cost.
    aware_root = workspace(tmp, example, seed, {**rounds, "gate": "noise-aware"})
    aware = evolve(Workspace.open(aware_root), EvolveOptions()).state
    tally["tokens_aware"].append(aware.spend_tokens)
    for c in aware.candidates:
        if c.parent_id is not None:
            tally["aware_children"] += 1
            tally["aware_rejected"] += not c.gate_passed
            tally["aware_stopped"] += bool(c.gate_details.get("early_stop"))
    for rule in RULES:
        first, later = later_run(tmp, example, seed, {**rounds, "gate": rule}, args.new_every)
        tally["first_run", rule].append(first)
        tally["later_run", rule].append(later)
    for key, root, run_id in (("prefix_before", before_root, old["run_id"]),
                              ("prefix_after", after_root, after.run_id)):
        shared, total = prefix_share(run_dir(Workspace.open(root), run_id) / "exchanges.jsonl")
        tally[key][0] += shared
        tally[key][1] += total
    # The front member with the highest selection pass rate, recommended or not (`best()` now
    # recommends only a significant gain over S0): a skill set that passes many cases.
    best = max((c for c in early.front_candidates() if c.parent_id is not None and c.evaluated),
               key=lambda c: (c.pass_rate, -(c.mean_tokens or 0.0)), default=None)
    bases = [None] + ([best.commit] if best is not None else [])
    size = max(*args.samples, args.sequential_max)
    for commit in bases if not args.skip_checks else ():
        gate_checks(*samples_outcomes(early_root, commit, size * (args.reruns + 1)), size, args, tally)


def later_run(tmp: Path, example: Path, seed: int, evolution: dict, every: int = NEW_EVERY) -> tuple[int, int]:
    """Tokens (ledger, all roles) of two runs on the same base: the first on all cases but every
    `every`-th by id, then a later one when those have arrived (a new case file, as a nightly
    ingest adds). The new cases change the simulator's world, so the model cache answers none of
    the later run's calls; S0's extra gate samples on the other cases come from the sample store
    (evaluation/samples.py)."""
    from frames_cli.formats.case_files import load_cases, write_cases

    root = workspace(tmp, example, seed, evolution)
    path = root / "cases" / "tau2-airline.yaml"
    cases = sorted(load_cases([path]), key=lambda c: c.id)
    arriving = cases[every - 1::every]
    write_cases(path, [c for c in cases if c not in arriving])
    first = evolve(Workspace.open(root), EvolveOptions()).state.spend_tokens
    write_cases(root / "cases" / "arrived.yaml", arriving)
    return first, evolve(Workspace.open(root), EvolveOptions()).state.spend_tokens


def share(flags: list[bool]) -> str:
    return f"{sum(flags) / len(flags):.3f} ({sum(flags)}/{len(flags)})" if flags else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--samples", type=int, nargs="+", default=[1, 5, 10, 20, 40],
                        help="k: samples per case in each A/A and planted gate check (several: side by side)")
    parser.add_argument("--reruns", type=int, default=6, help="R: fresh re-runs of each base skill set per seed")
    parser.add_argument("--before", default=BEFORE,
                        help="revision whose code is 'before' (default: main before issue #12)")
    parser.add_argument("--max-rounds", type=int, default=None, help="override evolution.max_rounds")
    parser.add_argument("--skip-checks", action="store_true",
                        help="leave out the A/A and planted checks (only the evolve runs' figures)")
    parser.add_argument("--sequential-start", type=int, nargs="+", default=[1, 5],
                        help="k of the sequential noise-aware gate's first look (several: side by side; 1 is the "
                             "bundled example's eval.samples)")
    parser.add_argument("--stage", type=int, default=8,
                        help="cases per stage of early rejection inside a look (the bundled llm.concurrency)")
    parser.add_argument("--sequential-max", type=int, default=40,
                        help="evolution.gate_max_samples of the sequential gate")
    parser.add_argument("--new-every", type=int, default=NEW_EVERY,
                        help="later-run: every N-th case by id arrives after the first run")
    args = parser.parse_args()
    kinds = ("aa", "planted", "planted-any", "planted-partial")
    tally: dict = {(kind, r, k): [] for kind in kinds for r in RULES for k in args.samples}
    tally.update({(kind, "sequential", start): [] for kind in kinds for start in args.sequential_start})
    tally.update({("tokens", k): [] for k in args.samples})
    tally.update({("tokens", "sequential", start): [] for start in args.sequential_start})
    tally.update({(key, start): [] for key in ("base_samples", "sampled_further") for start in args.sequential_start})
    tally.update({(key, start): 0 for key in ("look_full", "look_early", "look_rejected")
                  for start in args.sequential_start})
    tally["look_identical"] = True
    tally.update({(key, rule): [] for key in ("first_run", "later_run") for rule in RULES})
    tally.update(settled=0, skipped=0, children=0, identical=True, rejected=0, stopped=0, rejected_full=0.0,
                 rejected_early=0.0,
                 tokens_before=[], tokens_after=[], tokens_bundled=[], tokens_aware=[], aware_children=0,
                 aware_rejected=0, aware_stopped=0, prefix_before=[0, 0], prefix_after=[0, 0])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="frames-gate-bench-") as tmp:
        example = unpack("HEAD", EXAMPLE, Path(tmp) / "example")
        before = unpack(args.before, ("frames_cli",), Path(tmp) / "before-code")
        for seed in args.seeds:
            one_seed(Path(tmp), example, before, seed, args, tally)
            print(f"  seed {seed}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    saving = 1 - tally["rejected_early"] / tally["rejected_full"] if tally["rejected_full"] else float("nan")
    pb, pa = tally["prefix_before"], tally["prefix_after"]
    tb, ta = statistics.mean(tally["tokens_before"]), statistics.mean(tally["tokens_after"])
    print(f"Gate bench on the bundled airline example, frames-sim (a model of LLM behaviour, not an LLM); seeds "
          f"{args.seeds}; A/A and planted checks at k = {', '.join(map(str, args.samples))}; {args.reruns} re-runs per "
          f"base and seed, ε = 0.05, α = 0.05")
    seqs = {start: f"noise-aware sequential k={start}→{args.sequential_max}" for start in args.sequential_start}
    if not args.skip_checks:
        for kind, label, target in (("aa", "aa-false-reject", "≤ 0.05"),
                                    ("planted", "planted-regression-reject", "≥ 0.95"),
                                    ("planted-any", "planted (any pass)", ""),
                                    ("planted-partial", "planted (partial: the child keeps 1 pass in 4 of the cases)",
                                     "")):
            print(f"{label}{f' (target {target})' if target else ''}")
            for k in args.samples:
                print(f"  k={k:<4} paper {share(tally[kind, 'paper', k]):<18} noise-aware fixed "
                      f"{share(tally[kind, 'noise-aware', k])}")
            for start, seq in seqs.items():
                print(f"  {seq:<40} {share(tally[kind, 'sequential', start])}")
        print("evaluation tokens per A/A gate check (child side, mean)")
        for k in args.samples:
            print(f"  fixed k={k:<4} {statistics.mean(tally['tokens', k]):>12,.0f}")
        for start, seq in seqs.items():
            sq = statistics.mean(tally["tokens", "sequential", start])
            against = ", ".join(f"{sq / statistics.mean(tally['tokens', k]):.2f}× fixed k={k}" for k in args.samples)
            print(f"  {seq:<40} {sq:>12,.0f}  ({against}); categories sampled further per check: mean "
                  f"{statistics.mean(tally['sampled_further', start]):.2f}; S0 needed up to "
                  f"{max(tally['base_samples', start])} samples per case")
    if not args.skip_checks:
        for start, seq in seqs.items():
            full_t, early_t = tally["look_full", start], tally["look_early", start]
            print(f"{'early-rejection-saving':<31} {seq}: {1 - early_t / full_t if full_t else float('nan'):.3f} of "
                  f"the child's evaluation tokens on the {tally['look_rejected', start]} rejected A/A and planted "
                  f"children (looks drawn {args.stage} cases at a time, against every look drawn in full); "
                  f"decisions-identical: {'yes' if tally['look_identical'] else 'NO'}")
    print(f"{'early-rejection-saving':<31} the bundled runs (evolution.gate: paper, the default): {saving:.3f} of "
          f"executor tokens on {tally['rejected']} rejected children ({tally['stopped']} stopped early; "
          f"{tally['skipped']} cases skipped, {tally['settled']} evaluated after the stop for attribution); "
          f"decisions-identical: {'yes' if tally['identical'] else 'NO'} ({tally['children']} children)")
    print(f"{'tokens-per-run':<31} before {tb:,.0f}  after {ta:,.0f}  ({(ta - tb) / tb:+.1%}; mean over seeds, all "
          f"roles; both on HEAD's cases/ (30 cases), no sealed set, each revision's own settings)")
    print(f"{'':<31} the bundled run as shipped (30 cases, 20 sealed holdout cases scored at the end): "
          f"{statistics.mean(tally['tokens_bundled']):,.0f}")
    tw = statistics.mean(tally["tokens_aware"])
    print(f"{'':<31} the same with evolution.gate: noise-aware (sequential k = eval.samples → gate_max_samples): "
          f"{tw:,.0f} ({tw / statistics.mean(tally['tokens_bundled']):.2f}×); {tally['aware_rejected']} of "
          f"{tally['aware_children']} children rejected, {tally['aware_stopped']} of them early")
    fp, fa = statistics.mean(tally["first_run", "paper"]), statistics.mean(tally["first_run", "noise-aware"])
    lp, la = statistics.mean(tally["later_run", "paper"]), statistics.mean(tally["later_run", "noise-aware"])
    arrived = len(range(args.new_every - 1, 30, args.new_every))
    print(f"{'later-run':<31} evolution.gate: noise-aware against paper, two runs on one base ({30 - arrived} cases, "
          f"then {arrived} more arrive): first run {fa:,.0f} against {fp:,.0f} ({fa / fp:.2f}×); later run {la:,.0f} "
          f"against {lp:,.0f} ({la / lp:.2f}×; S0's extra samples from the sample store)")
    print(f"{'cacheable-prefix-share':<31} before {pb[0] / pb[1]:.3f}  after {pa[0] / pa[1]:.3f}  (executor prompt "
          f"characters; the same two runs)")
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
