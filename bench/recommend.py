"""Which member gets a review branch under frames' recommendation rule (frames_cli/evolution/compare/evidence.py).

python bench/recommend.py RESULTS.jsonl [--alpha 0.05] [--limit 3] [--tolerance 0.05]
    A recorded run (one line per candidate, set and case: the format of `.frames/runs/<run>/results.jsonl`
    and of bench/data/real-model-runs/) through the rule. The gate is recomputed with the paper's rule
    at --tolerance (a recording holds no verdict). Prints one line:
        branch=<member or none> sealed-change=<+x.x pt> evidence=<words>
    where sealed-change is the member's pass rate on the sealed test set minus S0's (0.0 for no
    branch; "n/a" without test results), and the evidence says what the recording lacked (a run
    recorded before frames drew fresh samples is decided on its unseen selection cases alone).

python bench/recommend.py --aa [--runs 300] [--samples 120] [--bundled-seeds 10]
    false-branch: the share of runs with no better child than S0 in which the rule still makes a
    review branch (pending or final). Two kinds of run, through the simulator (a model of LLM
    behaviour, not an LLM):
    - A/A runs: S0 of the bundled airline example is evaluated once with --samples independent
      samples per case, per simulator profile (weak: frames.yaml's; strong: bench/sim_calibration.py's,
      with the verbatim and with the thin skills), so each case has its own pass probability. Each
      A/A run draws, without replacement, the samples of S0, of 2-6 children (each an independent
      draw of the same skills: no child is better), and the fresh samples the rule asks for; splits
      the cases as the bundled run does (30 cases: 14 diagnosed selection cases, 6 unseen) or as a
      team's first workspace does (17 cases, every category kept whole, no unseen case); gates each
      child with the paper's rule; and applies the rule of the run (frames_cli.evolution.compare.evidence.decide).
    - bundled runs: `frames evolve --seed s` on fresh copies of the bundled example (the weak
      simulator, whose children the sealed test set shows are no better than S0), s = 0..N-1.
    Prints false-branch per kind and in all, then `false-branch=<share>` over every run. Beside it,
    the rule's power: the same A/A runs with a planted gain (every child after the first also passes
    a fixed share --planted of the cases, unseen ones included), `planted-branch=<share>`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frames_cli.evolution.compare.evidence import Confirmation, Ranked, decide  # noqa: E402
from frames_cli.evolution.compare.gate import PerCategoryGate  # noqa: E402
from frames_cli.evolution.compare.verdict import CaseOutcome  # noqa: E402
from frames_cli.evolution.compare.evidence import pass_rate  # noqa: E402
from frames_cli.evolution.decide.recorded import RecordedRun, recommend_recorded, sealed_change  # noqa: E402
from bundled import copy_example  # noqa: E402
from sim_calibration import PROFILES, thin_skills  # noqa: E402


def alternatives(run: RecordedRun, alpha: float, tolerance: float) -> dict[str, str | None]:
    """What rules rejected for frames give on a recorded run: member or None.

    Why each was rejected: docs/decisions/0084-review-branch-confirm-out-of-sample.md.

    - "bonferroni-unseen": the rule before 2026-12-02: each child on the unseen selection cases at
      α / m (m children), the highest selection rate of the significant gate-passed ones;
    - "uncorrected": each child on every selection case against S0's recorded samples (diagnosed
      cases included, no fresh samples), same multiplicity: what regression to the mean inflates;
    - "rule": frames' rule (evolution/compare/evidence.py).
    """
    from frames_cli.evolution.state.run_ids import BASE_ID
    from frames_cli.evolution.compare.evidence import Tally

    selection_sets = ("selection", "diagnosis+selection")
    unseen = run.ids("selection", "diagnosis+selection") - run.ids("diagnosis", "diagnosis+selection")
    base = run.outcomes(BASE_ID, *selection_sets)
    gate = PerCategoryGate(tolerance)
    children = run.children()
    bar = alpha / max(1, len(children))
    out: dict[str, str | None] = {}
    for name, cases in (("bonferroni-unseen", unseen), ("uncorrected", set(base))):
        winners = []
        for cid in children:
            child = run.outcomes(cid, *selection_sets)
            if gate.check(base, child).passed:
                tally = Tally.of({c: o for c, o in base.items() if c in cases},
                                 {c: o for c, o in child.items() if c in cases}, 1)
                if tally.p <= bar:
                    winners.append((pass_rate(child, 1), cid))
        out[name] = max(winners)[1] if winners else None
    out["rule"] = recommend_recorded(run, alpha, 3, tolerance).member
    return out


def recorded(args: argparse.Namespace) -> None:
    """The one-line verdict on a recorded run."""
    run = RecordedRun.read(Path(args.results))
    rec = recommend_recorded(run, args.alpha, args.limit, args.tolerance)
    change = sealed_change(run, rec.member)
    shown = "n/a" if change is None else f"{change:+.1f} pt"
    print(f"branch={rec.member or 'none'} sealed-change={shown} evidence={rec.status}: {rec.words()}")
    if args.compare:
        for name, member in alternatives(run, args.alpha, args.tolerance).items():
            change = sealed_change(run, member)
            print(f"  {name}: branch={member or 'none'} "
                  f"sealed-change={'n/a' if change is None else f'{change:+.1f} pt'}")
    for step in rec.steps:
        print(f"  tested {step.member}: diagnosis-set rate {100 * step.in_sample:.1f} %, gate "
              f"{'passed' if step.gate_passed else 'failed'}, p = {step.p:.3g}: {step.evidence()}")


# --- A/A -------------------------------------------------------------------------------------------


def commit_all(root: Path, message: str) -> None:
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", message]):
        subprocess.run(cmd, cwd=root, check=True, capture_output=True)


def example(folder: Path, profile: str, thin: bool, seed: int) -> Path:
    """A bundled copy with the simulator profile and seed applied, committed."""
    copy_example(folder)
    if thin:
        thin_skills(folder)
    config = yaml.safe_load((folder / "frames.yaml").read_text())
    config["simulator"] = {**config["simulator"], **PROFILES[profile], "seed": seed}
    (folder / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    commit_all(folder, "bundled example")
    return folder


def many_samples(root: Path, samples: int) -> dict[str, CaseOutcome]:
    """S0 of `root` on its counted cases, `samples` independent simulator samples each (no cache)."""
    from frames_cli.evaluation.runner import evaluate
    from frames_cli.executor.factory import make_executor
    from frames_cli.formats.case_files import load_counted_cases
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.gitstore.store import GitStore
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.sim.world import SimWorld
    from frames_cli.workspace.config import BudgetConfig
    from frames_cli.workspace.layout import Workspace
    from frames_cli.evolution.compare.verdict import outcomes_from_results

    ws = Workspace.open(root)
    config = dataclasses.replace(ws.config(), budget=BudgetConfig(max_tokens=None))
    cases = load_counted_cases(ws.root, config.eval.cases)
    skills = SkillSet.from_files(GitStore(ws.root).read_files("HEAD"))
    with ModelClient(ws, config, use_cache=False, sim_world=SimWorld.from_cases(cases)) as client:
        report = evaluate(cases, skills, make_executor(ws, config, client), samples=samples)
    return outcomes_from_results(r.to_dict() for r in report.results)


def split_of(root: Path, ids: set[str]) -> tuple[set[str], set[str]]:
    """(diagnosis, selection) case ids of the cases `ids` of `root`, split as a run splits them."""
    from frames_cli.evolution.state.splits import split_cases
    from frames_cli.formats.case_files import load_counted_cases
    from frames_cli.workspace.layout import Workspace

    ws = Workspace.open(root)
    config = ws.config()
    cases = [c for c in load_counted_cases(ws.root, config.eval.cases) if c.id in ids]
    split = split_cases(cases, config.evolution.split)
    return set(split.diagnosis), set(split.selection)


def team_cases(outcomes: dict[str, CaseOutcome], rng: random.Random) -> set[str]:
    """17 of the 30 cases, at most 3 per category: every category below `split.min_cases` (4), kept whole."""
    by: dict[str, list[str]] = {}
    for cid, o in sorted(outcomes.items()):
        by.setdefault(o.category, []).append(cid)
    picked: list[str] = []
    for ids in by.values():
        picked += rng.sample(ids, min(3, len(ids)))
    return set(rng.sample(sorted(picked), min(17, len(picked))))


def column(outcomes: dict[str, CaseOutcome], index: int, ids: set[str]) -> dict[str, CaseOutcome]:
    return {cid: CaseOutcome(o.category, (o.passes[index],)) for cid, o in outcomes.items() if cid in ids}


def planted(outcomes: dict[str, CaseOutcome], fixed: set[str], index: int, ids: set[str]) -> dict[str, CaseOutcome]:
    """`column` with the cases of `fixed` passed: a child that learnt the rules those cases turn on."""
    return {cid: CaseOutcome(o.category, (o.passes[index] or cid in fixed,)) for cid, o in outcomes.items()
            if cid in ids}


def aa_run(outcomes: dict[str, CaseOutcome], diagnosis: set[str], selection: set[str], rng: random.Random, alpha: float,
           limit: int,
           gain: float = 0.0) -> bool:
    """One simulated run on the samples of `outcomes`: True when the rule makes a review branch.

    With `gain` 0 every child is S0 drawn again (A/A). Otherwise a child made after the first passes,
    besides its own draw, a share `gain` of the cases (the same cases for every such child, in every
    set: rules learnt carry to unseen cases), as a planted improvement."""
    children = rng.randint(2, 6)
    fixed = set(rng.sample(sorted(outcomes), round(gain * len(outcomes)))) if gain else set()
    samples = len(next(iter(outcomes.values())).passes)
    draw = rng.sample(range(samples), 2 + 2 * children)
    unseen, redrawn = selection - diagnosis, selection & diagnosis
    gate = PerCategoryGate(0.05)
    base_sel, base_fresh = column(outcomes, draw[0], selection), column(outcomes, draw[1], redrawn)
    ranked, confirmations = [], {}
    for j in range(children):
        member = f"r{j + 1}c1"
        own, fresh = draw[2 + 2 * j], draw[3 + 2 * j]
        learnt = fixed if j > 0 else set()
        child_sel = planted(outcomes, learnt, own, selection)
        passed = gate.check(base_sel, child_sel).passed
        ranked.append(Ranked(member, pass_rate(planted(outcomes, learnt, own, diagnosis), 1), passed))
        pairs = ({c: o for c, o in base_sel.items() if c in unseen},
                 {c: o for c, o in child_sel.items() if c in unseen})
        confirmations[member] = (pairs, (base_fresh, planted(outcomes, learnt, fresh, redrawn)) if redrawn else None,
                                 passed)

    def confirm(child: Ranked) -> Confirmation:
        pairs, fresh, passed = confirmations[child.member]
        return Confirmation.of(child.member, child.in_sample, passed, pairs, fresh, 1, alpha)

    return decide(ranked, confirm, alpha, limit).member is not None


def bundled_run(folder: Path, seed: int) -> tuple[bool, str, dict[str, str | None]]:
    """`frames evolve --seed seed` on a fresh bundled copy (weak simulator): (a branch was made, its
    words, what the rejected rules give on the run's results.jsonl)."""
    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.workspace.layout import Workspace

    copy_example(folder)
    config = yaml.safe_load((folder / "frames.yaml").read_text())
    config["simulator"]["seed"] = seed
    (folder / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    commit_all(folder, "bundled example")
    outcome = evolve(Workspace.open(folder), EvolveOptions(seed=seed))
    rec = outcome.state.recommended()
    results = folder / ".frames" / "runs" / outcome.state.run_id / "results.jsonl"
    return (
        outcome.branch is not None,
        rec.words() if rec else "undecided",
        alternatives(RecordedRun.read(results), 0.05, 0.05),
    )


def aa(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    tally: dict[str, list[bool]] = {}
    power: dict[str, list[bool]] = {}
    rejected: dict[str, list[bool]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        kinds = [("weak", False), ("strong", False), ("strong", True)]
        per = max(1, args.runs // (2 * len(kinds)))
        for i, (profile, thin) in enumerate(kinds):
            root = example(Path(tmp) / f"aa-{i}", profile, thin, args.seed + i)
            outcomes = many_samples(root, args.samples)
            diagnosis, selection = split_of(root, set(outcomes))
            name = f"{profile}{' thin' if thin else ''}"
            for gain, into in ((0.0, tally), (args.planted, power)):
                what = "A/A" if not gain else f"planted {100 * gain:.0f} %"
                for _ in range(per):
                    into.setdefault(f"{what} {name}, 30 cases (6 unseen)", []).append(
                        aa_run(outcomes, diagnosis, selection, rng, args.alpha, args.limit, gain))
                for _ in range(per):
                    ids = team_cases(outcomes, rng)
                    team = {c: o for c, o in outcomes.items() if c in ids}
                    d, s = split_of(root, ids)
                    into.setdefault(f"{what} {name}, 17 cases (all kept whole)", []).append(
                        aa_run(team, d, s, rng, args.alpha, args.limit, gain)
                    )
            print(f"{name}: S0 pass probability over {args.samples} samples: "
                  f"{100 * sum(sum(o.passes) for o in outcomes.values()) / (args.samples * len(outcomes)):.1f} %",
                  flush=True)
        for seed in range(args.bundled_seeds):
            made, words, others = bundled_run(Path(tmp) / f"bundled-{seed}", seed)
            tally.setdefault("bundled frames evolve (weak simulator)", []).append(made)
            for name, member in others.items():
                if name != "rule":
                    rejected.setdefault(f"bundled, rule {name}", []).append(member is not None)
            print(f"bundled seed {seed}: {'branch' if made else 'no branch'}: {words}", flush=True)
    for kind, flags in [*tally.items(), *power.items()]:
        print(f"  {kind}: {sum(flags)} of {len(flags)} runs made a branch ({sum(flags) / len(flags):.3f})")
    for kind, flags in rejected.items():
        print(f"  {kind} (rejected for frames): {sum(flags)} of {len(flags)} runs would make a branch")
    planted_all = [flag for flags in power.values() for flag in flags]
    print(f"planted-branch={sum(planted_all) / len(planted_all):.3f} over {len(planted_all)} runs whose later children "
          f"pass {100 * args.planted:.0f} % more cases (the rule's power)")
    every = [flag for flags in tally.values() for flag in flags]
    print(f"false-branch={sum(every) / len(every):.3f} over {len(every)} runs (target ≤ {args.alpha})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", help="a results.jsonl of a run")
    parser.add_argument("--alpha", type=float, default=0.05, help="level α of the rule (evolution.recommend_alpha)")
    parser.add_argument("--limit", type=int, default=3, help="children tested at most (evolution.confirm_limit)")
    parser.add_argument("--tolerance", type=float, default=0.05,
                        help="ε of the paper's gate, recomputed for a recording")
    parser.add_argument("--compare", action="store_true", help="RESULTS: also what the rules rejected for frames give")
    parser.add_argument("--aa", action="store_true", help="the false-branch share over A/A and bundled simulator runs")
    parser.add_argument("--runs", type=int, default=300, help="--aa: A/A runs in all (split over profiles and sizes)")
    parser.add_argument("--samples", type=int, default=120, help="--aa: samples of S0 per case to draw A/A runs from")
    parser.add_argument("--bundled-seeds", type=int, default=10, help="--aa: bundled frames evolve runs (seeds 0..N-1)")
    parser.add_argument("--seed", type=int, default=0, help="--aa: seed of the draws")
    parser.add_argument("--planted", type=float, default=0.2,
                        help="--aa: share of cases a planted child fixes, for the power line")
    args = parser.parse_args()
    if args.aa:
        aa(args)
    elif args.results:
        recorded(args)
    else:
        parser.error("give RESULTS.jsonl or --aa")


if __name__ == "__main__":
    main()
