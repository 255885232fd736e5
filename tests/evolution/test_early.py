"""Early rejection: the decision is the full evaluation's, always.

Invariants:
1. Over random S0 and child outcomes, must-pass marks, tolerances, rules, orders and batch sizes, a
   child stopped early is one the full evaluation rejects, and a child the full evaluation accepts
   is evaluated in full.
2. A staged evaluation that runs to the end gives `evaluate`'s report; one that stops lists the
   cases it skipped, and its results are exactly `evaluate`'s for the cases it ran.
3. The decisive order puts must-pass cases S0 passed first and cases S0 always failed last.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from frames_cli.evaluation.runner import CaseResult, evaluate
from frames_cli.evaluation.staged import Staging, evaluate_staged
from frames_cli.evolution.compare.early import certain_rejection, decisive_order, rejection_rule
from frames_cli.evolution.compare.gate import PerCategoryGate
from frames_cli.evolution.compare.verdict import CaseOutcome
from frames_cli.executor.base import AgentResult
from frames_cli.formats.case import Case, Check, Source, Task
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.messages.types import Usage


def _random_world(rng: random.Random) -> tuple[dict[str, CaseOutcome], dict[str, CaseOutcome]]:
    k = rng.choice([1, 1, 2, 3, 5, 8])  # from k = 5 the noise-aware rule's one-case test takes part
    base, child = {}, {}
    for c in range(rng.randint(1, 4)):
        p_base, p_child = rng.random(), rng.random()
        for i in range(rng.randint(1, 7)):
            cid = f"c{c}-{i}"
            must = rng.random() < 0.1
            base[cid] = CaseOutcome(f"cat{c}", tuple(rng.random() < p_base for _ in range(k)), must)
            child[cid] = CaseOutcome(f"cat{c}", tuple(rng.random() < p_child for _ in range(k)), must)
    return base, child


def _decisive(baseline, tolerance: float, parent=None):
    """`decisive_order` over `baseline` as the `order(done, pending)` a staged decision takes."""
    return lambda done, pending: decisive_order(baseline, pending, tolerance, done, parent)


def _staged_decision(gate: PerCategoryGate, base, child, order, batch: int) -> tuple[bool, int]:
    """(passed, cases evaluated) as the loop decides with early rejection, feeding `child` batch by
    batch in the order `order(done, pending)` gives."""
    done, pending = {}, list(base)
    while pending:
        pending = order(done, pending)
        done.update({cid: child[cid] for cid in pending[:batch]})
        pending = pending[batch:]
        if pending and certain_rejection(gate, base, done, pending) is not None:
            return False, len(done)
    return gate.check(base, child).passed, len(done)


def test_early_stop_never_changes_a_verdict():
    rng = random.Random(20261201)
    stopped = 0
    for trial in range(1500):
        base, child = _random_world(rng)
        gate = PerCategoryGate(rng.choice([0.0, 0.05, 0.2, 0.5]), rng.choice(["paper", "noise-aware"]),
                               rng.choice([0.05, 0.5]))
        parent = _random_world(rng)[1] if trial % 3 == 0 else None
        if trial % 2:
            order = _decisive(base, gate.tolerance, parent if parent and set(parent) == set(base) else None)
        else:
            order = lambda _done, pending: rng.sample(pending, len(pending))  # noqa: E731
        full = gate.check(base, child).passed
        early, evaluated = _staged_decision(gate, base, child, order, rng.randint(1, 4))
        assert early == full, (trial, base, child)
        if full:
            assert evaluated == len(base)  # an accepted child is evaluated in full
        stopped += evaluated < len(base)
    assert stopped > 100  # the property was exercised on early stops, not only on full runs


def test_decisive_order_puts_must_pass_first_and_hopeless_cases_last():
    base = {
        "a": CaseOutcome("big", (True,)), "b": CaseOutcome("big", (False,)),
        "c": CaseOutcome("big", (True,), must_pass=True),
        "d": CaseOutcome("small", (True,)), "e": CaseOutcome("big", (True,)),
    }
    order = decisive_order(base, list(base), 0.05)
    assert order[0] == "c"  # must-pass first
    assert order[1:] == [
        "d",
        "b",
        "a",
        "e",
    ]  # "small" clears its floor by less; in "big" the case the parent failed first
    none = {"z": CaseOutcome("never", (False,)), **base}
    assert decisive_order(none, list(none), 0.05)[-1] == "z"  # a floor of 0 cannot fail
    parent = {**base, "a": CaseOutcome("big", (False,)), "e": CaseOutcome("big", (False,))}
    assert decisive_order(base, list(base), 0.05, None, parent)[1:] == [
        "a",
        "e",
        "b",
        "d",
    ]  # the parent is below the floor in "big"
    # Results so far count as they are: "small" passed, so "big" (predicted by S0) is nearer its floor.
    assert decisive_order(base, ["a", "b", "e"], 0.05, {"c": base["c"], "d": base["d"]}) == ["b", "a", "e"]


def _case(cid: str, category: str) -> Case:
    return Case(cid, category, Source("manual"), "", Task({"text": cid, "fields": {}}, "yes", Check("exact")))


class _Scripted:
    """An executor answering from a table (case id → answer per sample) and recording what it ran."""

    def __init__(self, answers: dict[str, Sequence[str]]):
        self.answers = answers
        self.ran: list[str] = []

    def run(self, cases, skills, sample=0):
        self.ran += [c.id for c in cases if sample == 0]
        return [AgentResult(c.id, self.answers[c.id][sample], [], Usage(10, 1), []) for c in cases]


def _eight_cases():
    """Eight cases (four cancel, four book), answered right in both samples but x1, no skills, and
    their full evaluation: (cases, answers, skills, full report)."""
    cases = [_case(f"x{i}", "cancel" if i < 4 else "book") for i in range(8)]
    answers = {c.id: ["yes", "yes"] for c in cases}
    answers["x1"] = ["no", "no"]
    skills = SkillSet.from_files({})
    return cases, answers, skills, evaluate(cases, skills, _Scripted(answers), samples=2)


def test_staged_evaluation_equals_evaluate_and_records_what_it_skipped():
    cases, answers, skills, full = _eight_cases()
    never = evaluate_staged(cases, skills, _Scripted(answers),
                            Staging(lambda _r, p: list(reversed(p)), lambda _r, _p: None, 3), samples=2)
    assert never.skipped == [] and never.report.to_json() == full.to_json()

    s0 = {c.id: CaseOutcome(c.category, (True, True)) for c in cases}
    rule = rejection_rule(PerCategoryGate(0.05), s0, set())
    executor = _Scripted(answers)
    outcome = evaluate_staged(cases, skills, executor, Staging(lambda _r, p: p, rule, 2), samples=2)
    assert outcome.skipped == ["x2", "x3", "x4", "x5", "x6", "x7"]
    assert executor.ran == ["x0", "x1"]
    assert "cancel: below the floor" in outcome.reason
    assert [r.to_dict() for r in outcome.report.results] == [r.to_dict() for r in full.results
                                                             if r.case_id in ("x0", "x1")]


def test_staging_order_must_list_every_pending_case_once():
    cases = [_case("a", "c"), _case("b", "c")]
    with pytest.raises(ValueError, match="every pending case once"):
        evaluate_staged(cases, SkillSet.from_files({}), _Scripted({}),
                        Staging(lambda _r, p: p[:1], lambda _r, _p: None, 1))


def test_results_carry_their_category_for_the_rule():
    # The stop rule reads results as the gate does: one CaseResult per case and sample.
    s0 = {"a": CaseOutcome("c", (True,)), "b": CaseOutcome("c", (True,))}
    rule = rejection_rule(PerCategoryGate(0.0), s0, set())
    assert rule([CaseResult("a", "c", 0, False, "")], ["b"]) is not None
    assert rule([CaseResult("a", "c", 0, True, "")], ["b"]) is None


def test_an_evolve_run_decides_as_with_full_evaluation_and_records_what_it_skipped(tmp_path):
    """The loop end to end on the evolution test workspace, with ε = 0 so that children get rejected.

    Which child the simulator makes worse depends on every prompt's wording, so the test tries a few
    seeds until a run rejects a child early; every run tried must decide as the full evaluation does.
    """
    import copy
    import json

    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.workspace.layout import Workspace

    from helpers.airline import CONFIG, build_repo

    stopped, analysed = [], []
    for seed in range(1, 9):
        # Attribution off and on: on, the cases it needs are evaluated after the stop
        # (early.cases_to_settle), so its sub-children and the rounds after are the full evaluation's too.
        for steps in (0, 2):
            states = {}
            for early in (False, True):
                config = copy.deepcopy(CONFIG)
                config["evolution"].update(tolerance=0.0, early_rejection=early, max_rounds=5, patience=5, seed=seed,
                                           attribution_steps=steps)
                repo = build_repo(tmp_path / f"{seed}-{steps}-{early}", config)
                states[early] = evolve(Workspace.open(repo.root), EvolveOptions()).state
            full, staged = states[False], states[True]
            def same(c):
                return c.id, c.gate_passed, c.changed_skills, c.diff_size, c.failed_categories(), c.cut_from, c.left_out

            assert [same(c) for c in full.candidates] == [same(c) for c in staged.candidates], (
                f"seed {seed}, attribution {steps}"
            )
            for a, b in zip(full.candidates, staged.candidates):
                if b.gate_passed or b.parent_id is None:
                    assert (a.pass_rate, a.per_category, a.mean_tokens) == (b.pass_rate, b.per_category, b.mean_tokens)
            analysed += [c.id for c in staged.candidates if c.attribution]
            evals = tmp_path / f"{seed}-{steps}-True" / ".frames" / "runs" / staged.run_id / "evals"
            for c in (c for c in staged.candidates if c.gate_details.get("early_stop")):
                early = c.gate_details["early_stop"]
                assert not c.gate_passed and early["skipped"] and early["reason"]
                ran = {r["case_id"] for r in json.loads((evals / f"{c.id}.json").read_text())["results"]}
                assert (
                    ran.isdisjoint(early["skipped"]) and len(ran) == early["evaluated"] and set(early["settled"]) <= ran
                )
                stopped.append(c.id)
        if stopped and analysed:
            break
    assert stopped and analysed, "no child was rejected early, or none analysed, in seeds 1-8: the test shows nothing"


def test_early_stop_at_the_first_look_never_changes_a_sequential_verdict():
    """With sequential sampling, early rejection asks the first look (k samples, α_1); the full
    evaluation replays every look on up to 4k samples. A child stopped early is one the full
    sequential gate rejects; one it accepts is evaluated in full."""
    from frames_cli.evolution.compare.sequential import Drawn, SequentialGate

    rng = random.Random(20261202)
    stopped = later = 0
    for trial in range(600):
        k = rng.choice([1, 2, 5])
        base, child = {}, {}
        for c in range(rng.randint(1, 4)):
            p_base, p_child = rng.random(), rng.random()
            for i in range(rng.randint(1, 7)):
                must = rng.random() < 0.1
                base[f"c{c}-{i}"] = CaseOutcome(f"cat{c}", tuple(rng.random() < p_base for _ in range(4 * k)), must)
                child[f"c{c}-{i}"] = CaseOutcome(f"cat{c}", tuple(rng.random() < p_child for _ in range(4 * k)), must)
        seq = SequentialGate.plan(PerCategoryGate(rng.choice([0.0, 0.05, 0.2]), "noise-aware", rng.choice([0.05, 0.5])),
                                  k, 4 * k)
        full = seq.decide(Drawn(base), Drawn(child)).verdict
        first = {cid: CaseOutcome(o.category, o.passes[:k], o.must_pass) for cid, o in base.items()}
        first_child = {cid: CaseOutcome(o.category, o.passes[:k], o.must_pass) for cid, o in child.items()}
        order = _decisive(first, seq.gate.tolerance)
        early, evaluated = _staged_decision(seq.first_look(), first, first_child, order, rng.randint(1, 4))
        if evaluated < len(base):
            assert not early and not full.passed, (trial, base, child)
            stopped += 1
        else:
            assert full.passed or not early or any(s["samples"] > k for s in full.sequential["categories"].values())
        later += any(s["samples"] > k for s in full.sequential["categories"].values())
    assert stopped > 50 and later > 50  # both early stops and later looks were exercised


def test_cases_to_settle_names_what_the_records_of_an_early_stop_still_need():
    from frames_cli.evolution.compare.early import cases_to_settle

    o = lambda cat, passes, must=False: CaseOutcome(cat, tuple(passes), must)  # noqa: E731
    base = {"f1": o("fail", [1]), "f2": o("fail", [1]), "f3": o("fail", [0]), "f4": o("fail", [1]),
            "u1": o("open", [1]), "u2": o("open", [1]), "u3": o("open", [0]),
            "p1": o("safe", [1]), "p2": o("safe", [0]), "p3": o("safe", [0]), "m1": o("safe", [1], True)}
    gate = PerCategoryGate(0.0)
    # "fail": two of three S0 passes lost already, so it fails whatever f4 gives; "open": one of two
    # S0 passes lost, so u2 decides it; "safe" (the child gained p3) passes whatever its pending cases
    # give, but m1 is must-pass and S0 passed it.
    done = {"f1": o("fail", [0]), "f2": o("fail", [0]), "u1": o("open", [0]), "p1": o("safe", [1]),
            "p3": o("safe", [1])}
    pending = ["f3", "f4", "u2", "u3", "p2", "m1"]
    parent = {cid: o(b.category, [0], b.must_pass) for cid, b in base.items()}
    assert cases_to_settle(gate, base, done, pending, parent) == ["u2", "u3", "m1"]
    # Attribution analyses "fail" and "open": also the pending cases there that the parent passed.
    parent = {cid: o(b.category, [1 if cid in ("f4", "f3") else 0], b.must_pass) for cid, b in base.items()}
    parent["d1"] = o("fail", [1])  # a diagnosis-set case the gate does not judge
    assert cases_to_settle(gate, base, done, [*pending, "d1"], parent) == ["f3", "f4", "u2", "u3", "m1", "d1"]


def test_an_early_verdict_names_only_evaluated_cases_as_better_or_worse():
    o = lambda cat, passes: CaseOutcome(cat, tuple(passes))  # noqa: E731
    base = {"a1": o("a", [1]), "a2": o("a", [1]), "b1": o("b", [0]), "b2": o("b", [0]), "b3": o("b", [1])}
    done = {"a1": o("a", [0]), "a2": o("a", [0]), "b1": o("b", [1])}
    verdict = certain_rejection(PerCategoryGate(0.05), base, done, ["b2", "b3"])
    assert verdict is not None and verdict.failed_categories() == ["a"]
    checks = {c.category: c for c in verdict.checks}
    assert checks["a"].pass_to_fail == ["a1", "a2"]
    # b2 passes in the best completion that decided the rejection, but it was never evaluated.
    assert checks["b"].fail_to_pass == ["b1"]


def test_early_stop_with_settled_cases_gives_the_full_evaluations_records():
    """After the stop and the settled cases, the verdict's failing categories and broken must-pass
    cases are the full evaluation's, and so is attribution's analysis (broken cases, implicated skills)."""
    from frames_cli.evolution.round.attribution import attribute
    from frames_cli.evolution.compare.early import cases_to_settle

    rng = random.Random(20261203)
    settled_any = stopped = 0
    for trial in range(800):
        base, child = _random_world(rng)
        parent = {cid: CaseOutcome(o.category, tuple(rng.random() < 0.5 for _ in o.passes), o.must_pass)
                  for cid, o in base.items()}
        gate = PerCategoryGate(rng.choice([0.0, 0.05, 0.2]), rng.choice(["paper", "noise-aware"]),
                               rng.choice([0.05, 0.5]))
        done, pending = {}, list(base)
        batch = rng.randint(1, 4)
        while pending:
            pending = decisive_order(base, pending, gate.tolerance, done, parent)
            done.update({cid: child[cid] for cid in pending[:batch]})
            pending = pending[batch:]
            if pending and certain_rejection(gate, base, done, pending) is not None:
                break
        if not pending:
            continue
        stopped += 1
        extra = cases_to_settle(gate, base, done, pending, parent)
        settled_any += bool(extra)
        done.update({cid: child[cid] for cid in extra})
        left = [cid for cid in pending if cid not in extra]
        early, full = certain_rejection(gate, base, done, left), gate.check(base, child)
        assert early is not None and not full.passed
        assert early.failed_categories() == full.failed_categories(), trial
        assert early.must_pass_broken == full.must_pass_broken, trial
        loaded = {cid: {f"s{ord(cid[-1]) % 3}"} for cid in base}
        got = attribute("c", "gate", early.failed_categories(), parent, done, loaded, ["s0", "s1", "s2"], (),
                        early.must_pass_broken)
        want = attribute("c", "gate", full.failed_categories(), parent, child, loaded, ["s0", "s1", "s2"], (),
                         full.must_pass_broken)
        assert got == want, trial
    assert stopped > 100 and settled_any > 30  # both exercised


def test_a_stopped_staged_evaluation_still_evaluates_the_cases_settle_names():
    cases, answers, skills, full = _eight_cases()
    s0 = {c.id: CaseOutcome(c.category, (True, True)) for c in cases}
    executor = _Scripted(answers)
    staging = Staging(lambda _r, p: p, rejection_rule(PerCategoryGate(0.05), s0, set()), 2, lambda _r, p: [p[-1], p[0]])
    outcome = evaluate_staged(cases, skills, executor, staging, samples=2)
    assert outcome.settled == ["x2", "x7"] and outcome.skipped == ["x3", "x4", "x5", "x6"]
    assert executor.ran == ["x0", "x1", "x7", "x2"]
    assert [r.to_dict() for r in outcome.report.results] == [r.to_dict() for r in full.results
                                                             if r.case_id in ("x0", "x1", "x2", "x7")]
    with pytest.raises(ValueError, match="settle rule"):
        evaluate_staged(cases, skills, _Scripted(answers),
                        Staging(lambda _r, p: p, staging.stop, 2, lambda _r, _p: ["x0"]), samples=2)
