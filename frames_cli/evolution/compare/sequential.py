"""Sequential sampling for the noise-aware gate: more samples where a category is not decided yet.

At k samples per case the noise-aware rule (evolution/compare/gate.py) often cannot tell a real drop from
noise. The sequential gate looks again with more samples instead. Looks are planned before any
model call at k, 2k, 4k, … samples per case, the last at `evolution.gate_max_samples`. It is a
one-sided group-sequential test with two boundaries (Jennison & Turnbull, "Group Sequential
Methods with Applications to Clinical Trials", 2000, ch. 4 and 7; Pampallona & Tsiatis, JSPI 42
(1994) 19–35). At each look every category not decided yet is checked:

- rejection: the noise-aware rule at that look's share of α; if it rejects, the child is rejected
  and the gate ends;
- early acceptance (interim looks only): the data rule out, at level β_s, the regression the gate
  is built to catch: ⌈n/3⌉ of the category's n cases (the issue's "made worse by at least a third
  of its cases") broken, i.e. S0 passes each at least half the time and the child fails it every
  time (`paired_test.broken_cases_p_value`). The test reads the child's first k_j samples and S0's
  first K_s, K_s one of the steps 8, 16, 32, … up to `gate_max_samples` (`baseline_steps`, at most
  8·k_j at look j): S0 is sampled once for every child (and every run on the base, through the
  sample store), so its side may be measured better than the child's. S0 is drawn to a step only
  for the cases the child has not passed, and only when, passing them as often as so far, it
  would reach β_s there; a case S0 passes often is cleared by the child passing it once;
- otherwise the category is undecided. One at or above its floor is open on the broken third
  alone: the next look draws, of the child, only the cases that test reads (of those the child has
  not passed yet, the ⌈n/3⌉ S0 passed most so far, and ties: only their passing can clear it), and
  tests nothing else until the last look. One below its floor is tested in full at the next look (its
  cases get more samples, S0's and the child's). At the last look every open category is tested
  in full, and what the rejection test does not reject is accepted.

The error spent at look j is α·(t_j² − t_{j−1}²), t_j = k_j / k_max: the power family of α-spending
functions with ρ = 2 (Lan & DeMets, Biometrika 70 (1983) 659–663; Kim & DeMets, Biometrika 74 (1987)
149–154), little early and most at the last look, where the test has its power. Each look's share
is tested on its own, as a Bonferroni split over the planned looks: a child as good as S0 is
rejected only if some (look, category) test rejects, and each of those is a fixed-sample test on
the first k_j samples of every case of the category, with level α_j / m. Samples are numbered per
case and drawn independently, so they may be thought of as all there before the first call, a
draw only revealing them: which tests are made (a category open on the broken third skips the
interim looks' tests) and which samples are revealed first changes none of those fixed tests, so
the chance is at most Σ_j α_j = α (Lan–DeMets boundaries computed from the joint law of the looks
are sharper; that law is not known for these exact discrete tests). Accepting early never adds a
false rejection (the acceptance boundary is non-binding), so the bound holds whatever that
boundary is.

β is split equally over S0's steps, β_s = β / (number of steps) with β = REGRESSION_BETA. Under
the regression its broken cases are never passed by the child, so they stay among the cases the
test reads at every look, and the p-value at step s is at least that of S0's first K_s samples of
those cases alone: at most β_s of the time is it ≤ β_s. Early acceptance thus costs at most Σ_s β_s
= β of power against it, at whichever looks each step is asked (the child's samples of the broken
cases are failures whatever is drawn). The split is by S0's steps rather than by the looks, so
each test has a larger share (decision 0094). A category below its floor is no longer kept open
for that alone: the floor guarded a drop spread over many cases, which no test here has the
power to show at the first looks, at a cost of several times the tokens of a run
(docs/decisions/0094-noise-aware-gate-samples-where-they-decide.md; before it,
0060-sequential-gate-acceptance-boundary.md).
Samples are truncated to k_j at look j (and S0's to K_s), so samples of S0 drawn for an earlier
child's later look do not change this child's earlier looks.

The first look is the fixed-k gate at α_1: early rejection (evolution/compare/early.py) stops a child only
when that look must reject, and a rejection at any look ends the gate, so the decisions stay the
full evaluation's. With the paper's rule, or `gate_max_samples` ≤ k, there is one look at α. The
samples each look asks for are drawn by evolution/compare/sequential_draw.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from frames_cli.evolution.compare.gate import PerCategoryGate
from frames_cli.evolution.compare.verdict import CaseOutcome, CategoryCheck, GateVerdict
from frames_cli.evolution.compare.paired_test import broken_cases_p_value

#: ρ of the spending function t^ρ (Kim & DeMets 1987), for α and β alike.
SPENDING_POWER = 2
#: The regression the sequential gate is built to catch (issue #12: "one category made worse by at
#: least a third of its cases"): this share of a category's cases, rounded up, broken.
REGRESSION_SHARE = Fraction(1, 3)
#: β: the most power early acceptance may cost against that regression (the issue asks for 0.95).
REGRESSION_BETA = 0.05
#: S0's samples per case the early-acceptance test may read (`SequentialGate.baseline_steps`):
#: this many, doubled up to `gate_max_samples`; β is split equally over these steps.
BASELINE_FIRST = 8
#: At a look with k samples per case, S0's side is read on at most this many times k (the child's
#: own samples, which end a case's candidacy when one passes, get their chance first).
BASELINE_FACTOR = 8


def look_schedule(samples: int, max_samples: int) -> tuple[int, ...]:
    """Samples per case at each look: k, 2k, 4k, … below `max_samples`, then `max_samples`; (k,) when max ≤ k.

    Raises:
        ValueError: samples < 1.
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    looks = [samples]
    while max_samples > looks[-1]:
        looks.append(min(2 * looks[-1], max_samples))
    return tuple(looks)


def spending(looks: tuple[int, ...], alpha: float) -> tuple[float, ...]:
    """α spent at each look: α·(t_j^ρ − t_{j−1}^ρ), t_j = looks[j] / looks[-1]; they sum to α."""
    cumulative = [alpha * (k / looks[-1]) ** SPENDING_POWER for k in looks]
    return tuple(c - p for c, p in zip(cumulative, [0.0, *cumulative[:-1]]))


@dataclass(frozen=True)
class Drawn:
    """One side's samples so far, as the sequential gate reads them.

    Attributes:
        outcomes: case id → its samples from sample 0 up to (not including) its first lost one.
        lost_at: case id → its first lost sample; a look needing that sample leaves the case out
            on both sides, as the fixed gate leaves out a lost case.
    """

    outcomes: dict[str, CaseOutcome]
    lost_at: dict[str, int] = field(default_factory=dict)


def drawn_outcomes(results: Iterable[Mapping[str, Any]], must_pass: Iterable[str] = ()) -> Drawn:
    """`Drawn` from result records ({case_id, category, sample, passed, lost?}) of any samples."""
    by_case: dict[str, dict[int, Mapping[str, Any]]] = {}
    for r in results:
        by_case.setdefault(r["case_id"], {})[int(r["sample"])] = r
    marked, outcomes, lost_at = set(must_pass), {}, {}
    for cid, by in by_case.items():
        passes: list[bool] = []
        while len(passes) in by and not by[len(passes)].get("lost"):
            passes.append(bool(by[len(passes)]["passed"]))
        if len(passes) in by:
            lost_at[cid] = len(passes)
        category = next(iter(by.values()))["category"]
        outcomes[cid] = CaseOutcome(category, tuple(passes), cid in marked)
    return Drawn(outcomes, lost_at)


@dataclass(frozen=True)
class Decision:
    """`verdict` once the gate is decided; else None, `need`: case id → samples per case both sides
    need first (the child alone for the cases in `child_only`: those of a category open on the
    broken third alone), and `baseline_need`: case id → samples per case S0 alone needs first (the
    early-acceptance test reads S0's first K_s samples of a case)."""

    verdict: GateVerdict | None
    need: dict[str, int] = field(default_factory=dict)
    baseline_need: dict[str, int] = field(default_factory=dict)
    child_only: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SequentialGate:
    """The noise-aware gate with looks at `looks` samples per case and α spent by `spending`.

    Attributes:
        gate: the noise-aware gate; its `alpha` is the family-wise error over all looks and categories.
        looks: samples per case at each look (`look_schedule`), k first.
    """

    gate: PerCategoryGate
    looks: tuple[int, ...]

    @classmethod
    def plan(cls, gate: PerCategoryGate, samples: int, max_samples: int) -> SequentialGate | None:
        """The sequential gate for `gate` at k = `samples`; None
        when there is one look only (paper rule, or max ≤ k)."""
        if gate.rule != "noise-aware" or max_samples <= samples:
            return None
        return cls(gate, look_schedule(samples, max_samples))

    @property
    def alphas(self) -> tuple[float, ...]:
        """α spent at each look."""
        return spending(self.looks, self.gate.alpha)

    @property
    def baseline_steps(self) -> tuple[int, ...]:
        """S0's samples per case the early-acceptance test may read: BASELINE_FIRST, doubled, up to
        the last look's k (`look_schedule`)."""
        return look_schedule(min(BASELINE_FIRST, self.looks[-1]), self.looks[-1])

    @property
    def betas(self) -> tuple[float, ...]:
        """β of the early-acceptance test at each of `baseline_steps`: an equal share of REGRESSION_BETA."""
        steps = self.baseline_steps
        return (REGRESSION_BETA / len(steps),) * len(steps)

    def first_look(self) -> PerCategoryGate:
        """The gate of the first look (k samples, α_1): the one early rejection asks."""
        return dataclasses.replace(self.gate, alpha=self.alphas[0])

    def record(self, categories: Mapping[str, dict] | None = None) -> dict[str, Any]:
        """The `GateVerdict.sequential` record: looks, α and β per look, and what each category was decided at."""
        return {
            "looks": list(self.looks), "alphas": list(self.alphas),
            "acceptance": {"baseline_samples": list(self.baseline_steps), "betas": list(self.betas)},
            "categories": dict(categories or {}),
        }

    def decide(self, baseline: Drawn, child: Drawn) -> Decision:
        """Replay the looks on the samples drawn so far: the verdict, or the samples the next look needs.

        A category is tested in full at a look (both sides' first k_j samples of every case, the
        noise-aware rule and the floor) at the first look, at the last, and after a look where it
        was below its floor. One at or above its floor whose broken third was not ruled out is open
        on that test alone: at the next interim look only the cases the child has not passed yet are
        drawn further (of the child; S0 has them), and it is accepted once the test rules the broken
        third out, its floor being the one of its last full look.

        A case the child has no result for counts as failed in every sample (as in the fixed gate).
        Pure: the same samples give the same decision, so a resumed run decides as the first did.
        """
        cats = {
            o.category for cid, o in baseline.outcomes.items() if not self._lost(cid, self.looks[0], baseline, child)
        }
        m = len(cats)
        active = set(cats)
        narrow: dict[str, frozenset[str]] = {}  # open on the broken third alone → the cases it can use
        decided: dict[str, CategoryCheck] = {}
        history: dict[str, list[tuple[int, CategoryCheck]]] = {c: [] for c in cats}
        cleared: dict[str, str] = {}
        for j, k in enumerate(self.looks):
            if j == len(self.looks) - 1:
                narrow = {}  # the last look tests every open category in full
            ids = sorted(
                cid for cid, o in baseline.outcomes.items()
                if o.category in active and not self._lost(cid, k, baseline, child)
            )
            tested = [cid for cid in ids if baseline.outcomes[cid].category not in narrow]
            need = {
                cid: k for cid in tested
                if len(baseline.outcomes[cid].passes) < k
                or (cid in child.outcomes and len(child.outcomes[cid].passes) < k)
            }
            # A category open on the broken third alone: the child's samples of the cases it has not
            # passed yet that the test reads (S0's side of that test is read on its own steps).
            only = {
                cid: k for cid in ids
                if cid in narrow.get(baseline.outcomes[cid].category, ()) and cid in child.outcomes
                and not _passed_any(child, cid) and len(child.outcomes[cid].passes) < k
            }
            if need or only:
                return Decision(None, {**need, **only}, child_only=frozenset(only))
            gate = dataclasses.replace(self.gate, alpha=self.alphas[j], family=m)
            verdict = gate.check({cid: _first(baseline.outcomes[cid], k) for cid in tested},
                                 {cid: _first(child.outcomes[cid], k) for cid in tested if cid in child.outcomes})
            checks = {c.category: c for c in verdict.checks}
            seen = checks.keys() | {baseline.outcomes[cid].category for cid in ids}
            for cat in active - seen:  # every case left lost: its last check stands
                active.discard(cat)
            narrow = {cat: focus for cat, focus in narrow.items() if cat in active}
            for cat, c in checks.items():
                history[cat].append((k, c))
            for cat in narrow:
                history[cat].append((k, history[cat][-1][1]))
            if not verdict.passed:
                return Decision(self._verdict(False, {**decided, **checks}, verdict.must_pass_broken, history))
            more = self._settle(j, checks, narrow, ids, baseline, child, decided, cleared, history)
            active -= decided.keys()
            if more:
                return Decision(None, baseline_need=more)
            if not active:
                break
        return Decision(self._verdict(True, decided, [], history, cleared))

    def _settle(
        self, j: int, checks: Mapping[str, CategoryCheck], narrow: dict[str, frozenset[str]], ids: list[str],
        baseline: Drawn,
        child: Drawn, decided: dict[str, CategoryCheck], cleared: dict[str, str],
        history: Mapping[str, list[tuple[int, CategoryCheck]]],
    ) -> dict[str, int]:
        """Add to `decided` the categories that passed look `j` for good: at the last look every one
        tested, before it those at or above their floor (at their last full look) whose broken third
        the test rules out (why, in `cleared`). A category tested at `j`, at or above its floor and
        not cleared joins `narrow` (open on that test alone), with the cases whose child samples the
        test reads (`_regression_p`). Returns the samples S0 still needs per case for that test ({}
        when it has them all)."""
        last = j == len(self.looks) - 1
        more: dict[str, int] = {}
        for cat in sorted(checks.keys() | narrow):
            c = checks.get(cat) or history[cat][-1][1]
            if not last:
                test = self._regression_p(j, cat, ids, baseline, child, more)
                if test is None or test[0] > test[1]:
                    if test is not None and not c.below_floor:
                        narrow[cat] = test[3]
                    continue
                cleared[cat] = (
                    f"no broken third of its cases (p = {test[0]:.2g} ≤ β = {test[1]:.2g} on {test[2]} samples of S0)"
                )
            narrow.pop(cat, None)
            decided[cat] = c
        return more

    def _regression_p(self, j: int, category: str, ids: list[str], baseline: Drawn, child: Drawn,
                      more: dict[str, int]) -> tuple[float, float, int, frozenset[str]] | None:
        """(p-value, its level β_s, S0's samples per case K_s, the cases it reads) of ⌈n·REGRESSION_SHARE⌉ of the
        category's n cases having broken (`paired_test.broken_cases_p_value`) at look `j`: the
        child's first k_j samples, S0's first K_s, at the first step s of `baseline_steps` (up to
        BASELINE_FACTOR·k_j) where it reaches β_s, or the last one tried. None, with the S0 samples
        it lacks added to `more`, when S0 has too few for a step where they could reach β_s (only a
        case the child has not passed is asked for). A sample of S0 missing at a step (lost, or not
        drawn because even failing would not reach β_s) counts as passed: the test can only get harder.

        Under the regression, its broken cases are among those the child has not passed at any look
        (it fails them every time), so the p-value at step s is at least the one on S0's first K_s
        samples of those cases alone, which is ≤ β_s with chance at most β_s. Early acceptance
        therefore costs at most Σ_s β_s = REGRESSION_BETA of power, at whichever looks and steps it
        is asked (a union bound over the steps: Berger, Technometrics 24 (1982) 295–300, per step).
        """
        k = self.looks[j]
        mine = [cid for cid in ids if baseline.outcomes[cid].category == category]
        b = {cid: _first(child.outcomes[cid], k).passed if cid in child.outcomes else 0 for cid in mine}
        broken = math.ceil(len(mine) * REGRESSION_SHARE)

        def passes(full: int, fill: float | None) -> dict[str, int]:
            # S0's passes at step `full`, its missing samples filled in at rate `fill` (None: its rate so far).
            out = {}
            for cid in mine:
                have = baseline.outcomes[cid].passes[:full]
                rate = sum(have) / max(1, len(have)) if fill is None else fill
                out[cid] = sum(have) + round((full - len(have)) * rate)
            return out

        def p_value(full: int, fill: float | None) -> float:
            a = passes(full, fill)
            return broken_cases_p_value([(a[cid], min(b[cid], full)) for cid in mine], full, broken)

        tried: tuple[float, float, int, frozenset[str]] | None = None
        for s, (full, beta) in enumerate(zip(self.baseline_steps, self.betas)):
            if s and full > BASELINE_FACTOR * k:
                break
            lacking = [cid for cid in mine if b[cid] == 0 and cid not in baseline.lost_at
                       and len(baseline.outcomes[cid].passes) < full]
            # Draw S0 to this step only when, passing as often as so far, it would reach β_s:
            # a case S0 passes often is cleared by the child's own passes, not by S0's samples.
            if lacking and p_value(full, None) <= beta:
                more.update((cid, full) for cid in lacking)
                return None
            tried = (p_value(full, 1.0), beta, full, _read(passes(full, None), b, broken))
            if tried[0] <= beta:
                break
        return tried

    def _lost(self, cid: str, k: int, baseline: Drawn, child: Drawn) -> bool:
        return min(baseline.lost_at.get(cid, math.inf), child.lost_at.get(cid, math.inf)) < k

    def _verdict(
        self, passed: bool, checks: Mapping[str, CategoryCheck], must_pass_broken: list[str],
        history: Mapping[str, list[tuple[int, CategoryCheck]]], cleared: Mapping[str, str] | None = None,
    ) -> GateVerdict:
        categories = {cat: _story(looks, (cleared or {}).get(cat)) for cat, looks in sorted(history.items()) if looks}
        return GateVerdict(
            passed, [checks[c] for c in sorted(checks)], self.gate.tolerance, self.gate.rule, self.gate.alpha,
            sorted(must_pass_broken), sequential=self.record(categories),
        )


def _story(looks: list[tuple[int, CategoryCheck]], cleared: str | None = None) -> dict[str, Any]:
    """How many samples per case a category was decided at, and why it took them (`cleared`: why it
    was accepted before the last look)."""
    k, last = looks[-1]
    reason = last.why + (f"; {cleared}" if cleared else "")
    if len(looks) == 1:
        why = f"decided at k = {k}: {reason}"
    else:
        undecided = ", ".join(str(s) for s, _ in looks[:-1])
        why = (
            f"no significant drop, but a broken third of its cases not ruled out at k = {undecided}: sampled to k = "
            f"{k}; {reason}"
        )
    return {"samples": k, "looks": len(looks), "why": why}


def _read(passes: Mapping[str, int], child_passes: Mapping[str, int], broken: int) -> frozenset[str]:
    """The cases `paired_test.broken_cases_p_value` reads: of those the child has not passed, the
    `broken` S0 passed most, and every case tied with the last of them. Only a case among them,
    passed by the child, can lower the p-value at this step."""
    candidates = sorted((a for cid, a in passes.items() if not child_passes[cid]), reverse=True)
    if len(candidates) < broken or broken < 1:
        return frozenset()
    return frozenset(cid for cid, a in passes.items() if not child_passes[cid] and a >= candidates[broken - 1])


def _passed_any(child: Drawn, cid: str) -> bool:
    """The child passed case `cid` in some sample drawn so far (then it is no case the child always fails)."""
    return cid in child.outcomes and child.outcomes[cid].passed > 0


def _first(outcome: CaseOutcome, k: int) -> CaseOutcome:
    return dataclasses.replace(outcome, passes=outcome.passes[:k])
