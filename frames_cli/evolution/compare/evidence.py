"""How strong the evidence is that a child beats S0, and which member gets a review branch.

The rule: choose on what the diagnosers saw, confirm on what they did not.

1. **Order.** The children that were evaluated on every case of the run's sets are ordered by their
   pass rate on the diagnosis set (in-sample: the cases diagnosers and rewriters saw), ties to the
   older child. The order reads no selection case a diagnoser never saw and no sample drawn for
   step 2.
2. **Confirm, in that order** (the fixed-sequence procedure: Maurer, Hothorn & Lehmacher, in
   Biometrie in der chemisch-pharmazeutischen Industrie 6 (1995) 3–18; Westfall & Krishen, J. Stat.
   Plan. Inference 99 (2001) 25–40). Each child in turn is compared with S0, case by case, by the
   exact one-sided paired test of paired_test.upper_p_value at level α, on its confirmation cases:
   - the **unseen** cases: selection cases no diagnoser saw, with the samples the run drew;
   - the **fresh** cases: the selection cases that were also diagnosed (categories kept whole),
     on samples of S0 and of the child drawn after the order was fixed. A diagnosed case is there
     because S0 failed it once; drawn again, S0 tends to pass it whatever the change (regression
     to the mean), so neither side's earlier samples are compared.
   A significant child that passed the gate gets the branch and the walk ends; a significant child
   that failed the gate hands the turn to the next; the first child that is not significant ends
   the walk with no branch. At most `limit` children are tested.
3. **Status.** *final* when the gain is significant on the unseen cases alone; *pending* when it is
   significant only with the fresh samples of diagnosed cases (the child was written for those
   cases: a real gain there may not carry to new ones). A pending branch waits for cases ingested
   after the run (no diagnoser of the run saw them): each later look scores S0 and the member on
   them (evolution/decide/prospective.py).

Why the level holds: when no child is better than S0 on any case, the first test rejects with
probability at most α, because its child was chosen without its confirmation samples; every branch
needs that rejection. So P(any branch, pending or final) ≤ α however many children a run makes,
without the Bonferroni split over children that left a team-sized run no power.

This module is pure: the samples come in through a callable, so a run (evolution/decide/confirm.py), a
recorded run (bench/recommend.py) and the A/A bench share the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frames_cli.formatting import plural
from frames_cli.evolution.compare.verdict import CaseOutcome, outcomes_from_results
from frames_cli.evolution.compare.paired_test import upper_p_value

#: A recommendation's status: a branch whose gain holds on unseen cases; one waiting for cases added
#: after the run; one those cases went against (the branch is deleted); one they never decided
#: (`evolution.pending.max_looks` looks; the branch stays, in-sample evidence only); no branch.
STATUSES = ("final", "pending", "withdrawn", "unconfirmed", "none")


@dataclass(frozen=True)
class Tally:
    """A member against S0 on one group of cases, k samples each side.

    Attributes:
        cases: cases compared (both sides have k samples).
        fixed: cases where the member passed more samples than S0.
        broken: cases where it passed fewer.
        p: the one-sided exact p-value of "the member passes more often than S0" over these cases
            (paired_test.upper_p_value); 1.0 when no case changed.
    """

    cases: int = 0
    fixed: int = 0
    broken: int = 0
    p: float = 1.0

    @classmethod
    def of(cls, base: Mapping[str, CaseOutcome], member: Mapping[str, CaseOutcome], k: int) -> Tally:
        """Compare the first k samples of every case both sides hold k samples of.

        Raises:
            ValueError: k < 1.
        """
        strata = []
        for case_id in sorted(base.keys() & member.keys()):
            a, b = base[case_id].passes[:k], member[case_id].passes[:k]
            if len(a) == k and len(b) == k:
                strata.append((sum(b), sum(a)))
        # upper_p_value tests its first side passing more often: the member's passes go there.
        p = upper_p_value(strata, k)
        return cls(len(strata), sum(b > a for b, a in strata), sum(b < a for b, a in strata), p)

    @property
    def changed(self) -> int:
        """Cases where the two sides differ."""
        return self.fixed + self.broken

    def words(self, what: str = "") -> str:
        """ "5 of 5 changed unseen cases fixed", "3 fixed, 1 broken
        of 14 unseen cases", "none of 6 unseen cases changed"."""
        noun = f"{what} case" if what else "case"
        if not self.changed:
            return f"none of {plural(self.cases, noun)} changed" if self.cases else f"no {noun}s"
        if not self.broken:
            return f"{self.fixed} of {self.changed} changed {noun}{'s' if self.changed != 1 else ''} fixed"
        return f"{self.fixed} fixed, {self.broken} broken of {plural(self.cases, noun)}"

    def to_json(self) -> dict[str, Any]:
        """{"cases", "fixed", "broken", "p"}."""
        return {"cases": self.cases, "fixed": self.fixed, "broken": self.broken, "p": self.p}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tally:
        """Inverse of `to_json`."""
        return cls(int(data["cases"]), int(data["fixed"]), int(data["broken"]), float(data["p"]))


def gain_p_value(base: Mapping[str, CaseOutcome], child: Mapping[str, CaseOutcome], k: int) -> float:
    """The one-sided p-value of "the child passes more often than S0" over the cases both were scored
    on with k samples (the first k of each side; Tally). 1.0 when no case differs.

    Raises:
        ValueError: k < 1.
    """
    return Tally.of(base, child, k).p


def answered_outcomes(results: Iterable[Mapping[str, Any]]) -> dict[str, CaseOutcome]:
    """Per-case outcomes of result records ({case_id, category, sample, passed, lost}) without the
    cases whose answer was lost in some sample: a missing answer says nothing of the skills."""
    records = list(results)
    lost = {r["case_id"] for r in records if r.get("lost")}
    return outcomes_from_results(r for r in records if r["case_id"] not in lost)


def pass_rate(outcomes: Mapping[str, CaseOutcome], k: int) -> float:
    """Share of passed samples over the first k samples of every case (0.0 with no case)."""
    total = sum(len(o.passes[:k]) for o in outcomes.values())
    return sum(sum(o.passes[:k]) for o in outcomes.values()) / total if total else 0.0


def combined(*tallies: Tally) -> Tally:
    """Counts added; p left at 1.0 (the p of a union needs the strata: `Confirmation.of`)."""
    return Tally(sum(t.cases for t in tallies), sum(t.fixed for t in tallies), sum(t.broken for t in tallies))


@dataclass(frozen=True)
class Confirmation:
    """One child's confirmation against S0 (step 2 of the module docstring).

    Attributes:
        member: the child's id.
        in_sample: its pass rate on the diagnosis set (0..1), which placed it in the order.
        gate_passed: the gate's verdict on it.
        unseen: on the selection cases no diagnoser saw.
        fresh: on the diagnosed selection cases, fresh samples of both sides; None when they could not
            be drawn (a recorded run) or there are none.
        p: the exact p-value over the unseen and fresh cases together.
        significant: p ≤ α.
    """

    member: str
    in_sample: float
    gate_passed: bool
    unseen: Tally
    fresh: Tally | None
    p: float
    significant: bool

    @classmethod
    def of(
        cls, member: str, in_sample: float, gate_passed: bool,
        unseen: tuple[Mapping[str, CaseOutcome], Mapping[str, CaseOutcome]],
        fresh: tuple[Mapping[str, CaseOutcome], Mapping[str, CaseOutcome]] | None, k: int, alpha: float,
    ) -> Confirmation:
        """Test `member` on (S0, member) outcomes of its unseen and fresh cases (case ids must not overlap).

        Raises:
            ValueError: k < 1, or a case in both groups.
        """
        if fresh is not None and set(fresh[0]) & set(unseen[0]):
            raise ValueError("a case is both unseen and re-drawn")
        u = Tally.of(unseen[0], unseen[1], k)
        f = Tally.of(fresh[0], fresh[1], k) if fresh is not None else None
        base = {**unseen[0], **(fresh[0] if fresh else {})}
        child = {**unseen[1], **(fresh[1] if fresh else {})}
        p = Tally.of(base, child, k).p
        return cls(member, in_sample, gate_passed, u, f, p, p <= alpha)

    def evidence(self) -> str:
        """The gain's evidence in a few words: "5 of 5 changed unseen cases fixed (p = 0.031)"; with fresh
        samples "…; diagnosed cases on fresh samples: 7 fixed, 1 broken of 14 cases"."""
        text = f"{self.unseen.words('unseen')} (p = {self.unseen.p:.2g})" if self.unseen.cases else "no unseen case"
        if self.fresh is not None and self.fresh.cases:
            text += f"; diagnosed cases on fresh samples: {self.fresh.words()}"
        return text

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "member": self.member, "in_sample": self.in_sample, "gate_passed": self.gate_passed,
            "unseen": self.unseen.to_json(), "fresh": None if self.fresh is None else self.fresh.to_json(), "p": self.p,
            "significant": self.significant,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Confirmation:
        """Inverse of `to_json`."""
        fresh = data.get("fresh")
        return cls(
            str(data["member"]), float(data["in_sample"]), bool(data["gate_passed"]), Tally.from_json(data["unseen"]),
            None if fresh is None else Tally.from_json(fresh), float(data["p"]), bool(data["significant"]),
        )


@dataclass(frozen=True)
class Ranked:
    """A child as the order sees it: id, pass rate on the diagnosis set (0..1), gate verdict."""

    member: str
    in_sample: float
    gate_passed: bool


@dataclass(frozen=True)
class Recommendation:
    """Which member the run gives a review branch, and how strong the evidence is.

    Attributes:
        member: the member with the branch; None when S0 stays.
        status: one of STATUSES (see the module docstring and evolution/decide/prospective.py).
        alpha: the level α of every test.
        steps: the children tested, in order (the walk of step 2).
        lacks: what the evidence could not include (a recorded run has no fresh samples).
        rule: "confirm" (this module's rule), "paper" (α = 1: the highest pass rate, untested) or
            "legacy" (a run recorded before this rule: `note` says what it decided on).
        note: for a "legacy" record, its evidence in words; for a run with no child to test, why.
        budget_spent: the budget ran out while the samples the rule needs were drawn: nothing was
            decided (status "none"), which is no evidence either way.
        looks: the prospective looks at a pending branch, oldest first (evolution/decide/prospective.py JSON).
    """

    member: str | None
    status: str
    alpha: float
    steps: tuple[Confirmation, ...] = ()
    lacks: tuple[str, ...] = ()
    rule: str = "confirm"
    looks: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    note: str = ""
    budget_spent: bool = False

    @property
    def chosen(self) -> Confirmation | None:
        """The confirmation of the member with the branch (None when S0 stays)."""
        return next((s for s in self.steps if s.member == self.member), None)

    def words(self) -> str:
        """The evidence in words for the menu, reports, `frames runs` and `frames promote`:
        "5 of 5 changed unseen cases fixed (p = 0.031); significant",
        "in-sample only: review with care (…); pending until new cases confirm it",
        "not distinguishable from noise (r3c1: …)"."""
        if self.rule == "paper":
            return "the paper's rule (the highest pass rate; no test against noise)"
        if self.rule == "legacy":
            return self.note
        chosen = self.chosen
        if chosen is not None and self.status == "final" and self.looks:
            look = self.looks[-1]
            both = Tally.from_json(look["unseen_and_new"]) if "unseen_and_new" in look else None
            shown = both.words("unseen or later") if both is not None else "the unseen and later cases"
            text = (f"confirmed on cases no diagnoser saw (look {look['look']}): {shown} (p = {look['p_gain']:.2g} ≤ "
                    f"{look['level']:.2g}); in-sample when it was made: {chosen.evidence()}")
            return text + (f"; lacks {'; '.join(self.lacks)}" if self.lacks else "")
        if chosen is not None and self.status == "final":
            text = f"{chosen.evidence()}; significant"
        elif chosen is not None and self.status == "pending":
            text = (
                f"in-sample only: review with care ({chosen.evidence()}; p = {chosen.p:.2g} with the diagnosed cases)"
            )
            text += "; pending until cases added after the run confirm it"
        elif chosen is not None and self.status == "withdrawn":
            text = f"withdrawn: worse than S0 on cases added after the run (in-sample: {chosen.evidence()})"
        elif chosen is not None:
            text = (
                "unconfirmed: cases added after the run did not decide it; in-sample only: review with care "
                f"({chosen.evidence()})"
            )
        elif self.steps:
            last = self.steps[-1]
            text = f"not distinguishable from noise ({last.member}: {last.evidence()})"
        else:
            text = self.note or "no child to test"
        if self.looks:
            text += f"; {look_words(self.looks[-1])}"
        return text + (f"; lacks {'; '.join(self.lacks)}" if self.lacks else "")

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (kept in the run state)."""
        return {
            "member": self.member, "status": self.status, "alpha": self.alpha,
            "steps": [s.to_json() for s in self.steps], "lacks": list(self.lacks), "rule": self.rule,
            "looks": [dict(x) for x in self.looks], "note": self.note, "budget_spent": self.budget_spent,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Recommendation:
        """Inverse of `to_json`.

        Raises:
            ValueError: an unknown status.
        """
        status = str(data["status"])
        if status not in STATUSES:
            raise ValueError(f"unknown recommendation status {status!r}")
        return cls(
            data.get("member"), status, float(data["alpha"]),
            tuple(Confirmation.from_json(s) for s in data.get("steps", [])), tuple(data.get("lacks", [])),
            str(data.get("rule", "confirm")), tuple(dict(x) for x in data.get("looks", [])), str(data.get("note", "")),
            bool(data.get("budget_spent", False)),
        )


def look_words(look: Mapping[str, Any]) -> str:
    """One prospective look (evolution/decide/prospective.py) in words: "look 1: 10 new cases, 4 of 4 changed
    cases fixed (p = 0.004 with the unseen cases, level 0.017): final"."""
    tally = Tally.from_json(look["new"])
    return (
        f"look {look['look']}: {tally.cases} new cases, {tally.words()} (p = {look['p_gain']:.2g} on the cases no "
        f"diagnoser saw, level {look['level']:.2g}): {look['status']}"
    )


def order(children: Iterable[Ranked]) -> list[Ranked]:
    """Children by pass rate on the diagnosis set, highest first; ties keep the given (creation) order."""
    ranked = list(children)
    return sorted(ranked, key=lambda c: -c.in_sample)


def decide(children: Sequence[Ranked], confirm: Callable[[Ranked], Confirmation], alpha: float, limit: int,
           lacks: Sequence[str] = ()) -> Recommendation:
    """The rule of the module docstring over `children` (in creation order), testing at most `limit`.

    `confirm(child)` returns the child's Confirmation at level `alpha`; it is called in the order's
    sequence and only as far as the walk goes, so samples are drawn for no child beyond it.

    Raises:
        ValueError: `alpha` outside (0, 1) or `limit` < 1.
    """
    if not 0 < alpha < 1 or limit < 1:
        raise ValueError("alpha must be in (0, 1) and limit at least 1")
    steps: list[Confirmation] = []
    for child in order(children)[:limit]:
        step = confirm(child)
        steps.append(step)
        if not step.significant:
            break
        if step.gate_passed:
            status = "final" if step.unseen.p <= alpha else "pending"
            return Recommendation(step.member, status, alpha, tuple(steps), tuple(lacks))
    return Recommendation(None, "none", alpha, tuple(steps), tuple(lacks))
