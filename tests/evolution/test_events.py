"""A run's typed events (evolution/state/events.py) print the lines `frames evolve` printed as strings.

Invariants:
1. Every kind of event renders exactly the line its f-string printed (lines of the bundled run
   `frames evolve --seed 0` where it prints one, else the emitter's text).
2. Every kind of the `Event` union has a line here.
3. An event is a `RunWarning` exactly when its line starts with "warning:", the prefix the CLI
   used to find warnings by; `frames evolve --json` prints those, and only those, by type.
"""

from __future__ import annotations

import io
from typing import get_args

import pytest
from rich.console import Console

from frames_cli.errors import Location
from frames_cli.evaluation.estimate import Estimate, RoleEstimate
from frames_cli.evolution.compare.gate import SmallCategory
from frames_cli.evolution.state import events as ev
from frames_cli.evolution.state import round_events as rounds
from frames_cli.evolution.state import run_warnings as warnings
from frames_cli.formats.problems import Problem

SHA = "02560a96d6c8" + "0" * 28
RUN = "20261202-123533-a0debf"
ESTIMATE = Estimate(roles={"executor": RoleEstimate(prompt_tokens=2_500, completion_tokens=500, max_tokens=9_000)})
SKILL = Problem(Location("02560a96d6c8:skills/x/SKILL.md", 3), "frontmatter: missing `name`")

#: (event, the line it prints)
LINES: list[tuple[ev.Event, str]] = [
    (warnings.InputLeftOut(Problem(Location("cases/a.yaml", 4), "unknown key `foo`")),
     "warning: cases/a.yaml:4: unknown key `foo`; left out"),
    (warnings.SkillsLeftOut((SKILL,), 5),
     "warning: left out 1 skill(s) that do not load, using the other 5 (`frames validate` lists every problem, "
     "`frames adopt skills` repairs what it can): 02560a96d6c8:skills/x/SKILL.md:3: frontmatter: missing `name`"),
    (warnings.SkillsDrift(SHA, ("edited: baggage", "not committed: d")),
     "warning: skills/ in the working tree differs from the base commit 02560a96d6c8 that this run reads "
     "(edited: baggage; not committed: d): commit the skills for the run to see them"),
    (warnings.CategoriesKeptWhole((("baggage", 2), ("book", 3), ("cancel", 2), ("change-cabin", 2),
                                    ("modify-flights", 3), ("passengers", 2)), 4),
     "warning: 6 categories too small to split (fewer than 4 cases, or none would be held out) are kept whole, "
     "so their gate and front scores are in-sample: baggage (2), book (3), cancel (2), change-cabin (2), "
     "modify-flights (3), passengers (2)"),
    (warnings.CategoriesKeptWhole((("tiny", 3),), 4),
     "warning: 1 category too small to split (fewer than 4 cases, or none would be held out) is kept whole, "
     "so its gate and front scores are in-sample: tiny (3)"),
    (warnings.SmallCategories((SmallCategory("baggage", 2, 8), SmallCategory("compensation", 1, 8)), 1, "paper", False),
     "warning: categories too small to judge at k = 1 sample(s): baggage (2 cases, needs 8), compensation "
     "(1 case, needs 8); one flip of a noisy case can decide their verdict. Add cases to them or raise eval.samples"),
    (warnings.RunChangedSince(RUN, ("frames.yaml's evolution settings", "the cases")),
     f"warning: frames.yaml's evolution settings, the cases changed since run {RUN} started; it goes on as "
     "it started, and the next `frames evolve` after it finishes uses the new ones"),
    (warnings.GuardRulesChanged(RUN, 1, 2),
     f"warning: the guards' rules changed since run {RUN} started (rules 1 → 2, "
     "docs/decisions/0072-guards-measured-on-real-text.md); its next rounds drop proposals by the new rules, "
     "and its earlier rounds kept what the old ones let through"),
    (warnings.PendingSkipped("frames/r1", RUN, "unknown revision abc"),
     f"warning: pending branch frames/r1 of run {RUN} cannot be looked at (unknown revision abc); skipped"),
    (warnings.BranchMoved("frames/r1", "r2c1"),
     "warning: branch frames/r1 no longer points at r2c1: someone moved it, so it is left as it is"),
    (ev.AskingAgain(RUN, 3), f"run {RUN} lost 3 result(s) to the model layer; starting a new run to ask again"),
    (ev.EndingRebuilt(RUN, ("report.json", "report.md", "report.xml")),
     f"run {RUN} ended without report.json, report.md, report.xml: rebuilt from its state"),
    (ev.RunStarted(RUN, SHA, False, "diagnosis 24, selection 20, sealed test 20 cases; kept whole: baggage, book"),
     f"starting run {RUN} on 02560a96d6c8 (diagnosis 24, selection 20, sealed test 20 cases; "
     "kept whole: baggage, book)"),
    (ev.RunStarted(RUN, SHA, True, "one evaluation set E of 9 cases, as in the paper"),
     f"resuming run {RUN} on 02560a96d6c8 (one evaluation set E of 9 cases, as in the paper)"),
    (ev.Estimated(ESTIMATE),
     "estimate: at most 0 model calls (about 0), about 3,000 tokens (at most 9,000), about $0.00 (at most $0.00)"),
    (ev.Budget(ESTIMATE, None, None),
     "budget: none set (budget.max_tokens: null), so only the run's own stopping rules end it; the bound of "
     "9,000 tokens is what it could spend at worst"),
    (ev.OverBudget(ESTIMATE, 1_000, None),
     "warning: the estimate exceeds the budget (about 3,000 tokens > budget.max_tokens 1,000): the run will stop "
     "when the budget is spent; raise it in frames.yaml to run to the end"),
    (ev.BatchNotice("llm.batch: litellm knows no batch price for m; its batch calls are counted at the regular price"),
     "llm.batch: litellm knows no batch price for m; its batch calls are counted at the regular price"),
    (ev.PolicyAmended(("cancel",)),
     "policy amended under 1 skill (cancel): the diagnosers are shown the changed lines"),
    (ev.RetrievalLeftOut("policies/a.pdf: not UTF-8 text"), "retrieval: left out policies/a.pdf: not UTF-8 text"),
    (ev.RetrievalEmpty(SHA, True),
     "retrieval: no policy passage indexed: 02560a96d6c8 has no file under policies/, whose working-tree folder "
     "is a symlink (git stores the link, not the documents)"),
    (ev.RetrievalEmpty(SHA, False),
     "retrieval: no policy passage indexed: 02560a96d6c8 has no file under policies/, whose working-tree folder "
     "has documents not committed there"),
    (ev.EvaluatingBase(), "evaluating S0 (the base commit's skills)"),
    (ev.ResultsLost("r1c1", 7, 2, ("a", "b", "c", "d", "e", "f")),
     "r1c1: 7 result(s) lost to the model layer after 2 retries (a, b, c, d, e); left out of its scores and the "
     "gate; the next `frames evolve` asks again"),
    (ev.SamplesReused("r0c0", 12),
     "r0c0: 12 sample(s) of S0 taken from earlier draws on the same skills and cases (.frames/samples)"),
    (ev.SealedScoring("r0c0", 20), "scoring r0c0 on the sealed test set (20 cases)"),
    (rounds.RoundParent(1, "r0c0"), "round 1: parent r0c0"),
    (rounds.RoundBatches(1, "disjoint: 3 batches of up to 8 of 18 failures"),
     "round 1: batches disjoint: 3 batches of up to 8 of 18 failures"),
    (rounds.ProposalsDropped(1, 6, "proposal 1 for `modify-flight` (diagnoser 0): is not about the failure it "
                                   "cites: it shares no word with case tau2-airline-10"),
     "round 1: dropped 6 proposal(s) before the vote: proposal 1 for `modify-flight` (diagnoser 0): is not about "
     "the failure it cites: it shares no word with case tau2-airline-10 (and 5 more; `frames review` lists them)"),
    (rounds.ProposalsDropped(2, 1, "proposal 0 for `a` (diagnoser 1): carries a case value"),
     "round 2: dropped 1 proposal(s) before the vote: proposal 0 for `a` (diagnoser 1): carries a case value"),
    (rounds.CostRound(4, "the parent fails no diagnosis-set case and loads no skill", ()),
     "round 4: the parent fails no diagnosis-set case and loads no skill; condensing nothing"),
    (rounds.CostRound(4, "cost-directed: the parent fails 1 diagnosis-set case", ("`a`: loaded", "`b`: loaded")),
     "round 4: cost-directed: the parent fails 1 diagnosis-set case; condensing `a`: loaded, `b`: loaded"),
    (rounds.LabelConfirmed(2, 1, "c-7"),
     "round 2: diagnoser 1 disputes the label of c-7; a person confirmed it: it stays"),
    (rounds.LabelDisputed(2, "c-7", 0),
     "round 2: c-7 disputed by diagnoser 0 (its expected result contradicts the policy); it leaves the gate and the "
     "front until `label: confirmed` or `disputed` is set in its case file"),
    (rounds.EvaluatingChild(1, "r1c1", ("book-flight", "cancel-flight")),
     "round 1: evaluating r1c1 (changes book-flight, cancel-flight)"),
    (rounds.EvaluatingSubChild(1, "r1c2", "r1c1", ("cancel-flight",)),
     "round 1: evaluating r1c2 (r1c1 without cancel-flight)"),
    (rounds.Gated(1, "r1c1", False, "fail (ε=0.05): below floor in cancel, change-cabin (decided after 12 cases; "
                                    "18 not evaluated)"),
     "round 1: r1c1 gate fail (ε=0.05): below floor in cancel, change-cabin (decided after 12 cases; "
     "18 not evaluated)"),
    (rounds.Gated(1, "r1c2", True, "pass (ε=0.05, 9 categories)"), "round 1: r1c2 gate pass (ε=0.05, 9 categories)"),
    (rounds.NoChild(3, "no skill reached the vote threshold"),
     "round 3: no child (no skill reached the vote threshold)"),
    (rounds.AttributionStep(1, "r1c1: cancel, change-cabin broken by cancel-flight (by tau2-airline-39, "
                               "tau2-airline-7)"),
     "round 1: attribution r1c1: cancel, change-cabin broken by cancel-flight (by tau2-airline-39, tau2-airline-7)"),
    (rounds.SubChildTwin(2, ("a", "b"), "r1c2"), "round 2: the sub-child without a, b is identical to r1c2"),
    (ev.RecommendationStep("completing r1c1 on the 18 cases its early rejection skipped"),
     "recommendation: completing r1c1 on the 18 cases its early rejection skipped"),
    (ev.Recommended(None, "none", "not distinguishable from noise"),
     "recommendation: S0 stays (no review branch): not distinguishable from noise"),
    (ev.Recommended("r2c1", "final", "p = 0.01 on 6 unseen cases"),
     "recommendation: r2c1 (final): p = 0.01 on 6 unseen cases"),
    (ev.PendingWaiting("frames/r1 (r2c1): pending, 3 of 10 new cases for its next look (0 done); p = 0.2"),
     "pending review branch frames/r1 (r2c1): pending, 3 of 10 new cases for its next look (0 done); p = 0.2"),
    (ev.PendingLook("frames/r1", "r2c1", 10, RUN),
     f"looking at pending branch frames/r1 (r2c1) on 10 cases added after run {RUN}"),
    (ev.PendingLooked("frames/r1", "r2c1", "confirmed"), "pending branch frames/r1 (r2c1): confirmed"),
]


@pytest.mark.parametrize(("event", "line"), LINES, ids=[f"{type(e).__name__}-{i}" for i, (e, _) in enumerate(LINES)])
def test_an_event_prints_the_line_the_run_printed(event: ev.Event, line: str) -> None:
    assert str(event) == line


def test_every_kind_of_event_has_a_line_here() -> None:
    assert set(get_args(ev.Event)) - {type(e) for e, _ in LINES} == set()


def test_a_warning_is_known_by_its_type_and_its_line_still_says_so() -> None:
    assert [(type(e).__name__, isinstance(e, warnings.RunWarning)) for e, line in LINES] == [
        (type(e).__name__, line.startswith("warning:")) for e, line in LINES
    ]


def test_round_events_carry_their_round() -> None:
    assert {e.round for e, _ in LINES if isinstance(e, rounds.RoundEvent)} == {1, 2, 3, 4}


def _shown(quiet: bool) -> list[str]:
    from frames_cli.commands.evolve.evolve import RunProgress

    screen = io.StringIO()
    with RunProgress(Console(file=screen, width=400, color_system=None), quiet=quiet) as bar:
        for event, _ in LINES:
            bar.event(event)
    return [line for line in screen.getvalue().splitlines() if line]  # not the progress display's blank line


def test_evolve_with_json_prints_only_the_warnings_and_without_it_every_line() -> None:
    assert _shown(quiet=True) == [line for e, line in LINES if isinstance(e, warnings.RunWarning)]
    assert _shown(quiet=False) == [line for _, line in LINES]
