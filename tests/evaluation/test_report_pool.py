"""EvalReport summaries, the table / Markdown / JUnit XML outputs, and the regression pool."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml
from rich.console import Console

from frames_cli.errors import InputError
from frames_cli.evaluation import report as reports
from frames_cli.evaluation.pool import RegressionPool
from frames_cli.evaluation.runner import CaseResult, EvalReport
from frames_cli.llm.messages.types import Usage
from frames_cli.workspace.layout import Workspace


def result(case_id: str, category: str, sample: int, passed: bool, skills=("alpha",), error: str | None = None,
           cost: float | None = 0.001) -> CaseResult:
    reason = "ok" if passed else (f"agent failed: {error}" if error
                                  else "missing cancel_reservation(reservation_id=\"X\")")
    return CaseResult(case_id, category, sample, passed, reason, None, list(skills), Usage(100, 10, cost), error)


@pytest.fixture
def report() -> EvalReport:
    # Three samples: c1 passes 3/3, c2 1/3 (one crash), c3 0/3.
    rows = [result("c1", "cancel", s, True) for s in range(3)]
    rows += [result("c2", "cancel", 0, True, ("beta",)), result("c2", "cancel", 1, False),
             result("c2", "cancel", 2, False, error="agent timed out after 5 s")]
    rows += [result("c3", "refuse", s, False, cost=None) for s in range(3)]
    return EvalReport(rows, samples=3)


def test_summaries(report: EvalReport) -> None:
    cats = report.per_category()
    assert list(cats) == ["cancel", "refuse"]
    assert (cats["cancel"].n_cases, cats["cancel"].n_results, cats["cancel"].passed) == (2, 6, 4)
    assert cats["cancel"].pass_rate == pytest.approx(4 / 6)
    # pass@3 from n = 3: a case counts when any sample passed; pass^3 when all did.
    assert cats["cancel"].pass_at_k == pytest.approx(1.0) and cats["cancel"].pass_hat_k == pytest.approx(0.5)
    assert report.overall().pass_hat_k == pytest.approx((1 + comb(1, 3) / comb(3, 3) + 0) / 3)
    assert report.pass_rate == pytest.approx(4 / 9)
    assert report.mean_prompt_tokens == 100 and report.mean_completion_tokens == 10 and report.mean_tokens == 110
    assert report.cost_usd == pytest.approx(0.006)
    again = EvalReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again.to_json() == report.to_json()


def test_junit_xml_parses_with_junitparser(report: EvalReport, tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    path.write_text(reports.junit_xml(report))
    xml = JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"cancel", "refuse"}
    assert (suites["cancel"].tests, suites["cancel"].failures, suites["cancel"].errors) == (6, 1, 1)
    cases = {c.name: c for c in suites["cancel"]}
    assert "c2 (sample 2)" in cases and cases["c1 (sample 0)"].is_passed
    (err,) = cases["c2 (sample 2)"].result
    assert isinstance(err, Error) and err.message == "agent failed: agent timed out after 5 s"
    (fail,) = cases["c2 (sample 1)"].result
    assert isinstance(fail, Failure) and "cancel_reservation" in fail.message
    assert all(c.classname == "refuse" for c in suites["refuse"])


def test_table_and_markdown(report: EvalReport) -> None:
    console = Console(record=True, width=140)
    console.print(reports.table(report))
    text = console.export_text()
    assert "pass@3" in text and "pass^3" in text and "4/6" in text and "66.7%" in text
    assert "c2 (sample 2) [cancel]: agent failed: agent timed out after 5 s" in text
    md = reports.markdown(report)
    assert "| cancel | 2 | 4/6 | 66.7% | 100.0% | 50.0% |" in md
    assert "| **overall** | 3 | 4/9 | 44.4% |" in md
    assert "mean tokens per case: 100 prompt + 10 completion = 110; cost: $0.0060" in md
    single = EvalReport([result("c1", "cancel", 0, True)])
    assert "pass@" not in reports.markdown(single)


def test_a_failure_shows_the_agents_answer_beside_the_expected_one_and_cuts_with_an_ellipsis() -> None:
    long = (
        "The answer must follow: " + "Nonrefundable fares must be explicitly approved by the authorizing official. " * 8
    )
    failed = CaseResult("k1", "booking", 0, False, "the answer differs", {"reply": "Yes, book it now."}, [],
                        Usage(1, 1, 0.0))
    report = EvalReport([failed])
    console = Console(record=True, width=400)
    console.print(reports.table(report, expected={"k1": long}))
    text = console.export_text()
    assert 'answer:   {"reply": "Yes, book it now."}' in text
    [shown] = [line.strip() for line in text.splitlines() if line.strip().startswith("expected:")]
    assert shown.endswith("…") and len(shown) == len("expected: ") + reports.ANSWER_SHOWN
    md = reports.markdown(report, expected={"k1": "refuse"})
    assert "  - expected: refuse" in md and '  - answer:   {"reply": "Yes, book it now."}' in md
    no_answer = EvalReport([CaseResult("k2", "booking", 0, False, "agent failed: timeout", None, [], Usage(1, 1, 0.0),
                                       "timeout")])
    assert "answer:   (no answer)" in reports.markdown(no_answer, expected={"k2": "refuse"})
    secret = reports.answer_lines(failed, {"k1": "use token ghp_" + "a" * 36})
    assert "ghp_" not in secret[0]


def test_pool_add_sample_anchors_and_reload(report: EvalReport, tmp_path: Path) -> None:
    (tmp_path / "frames.yaml").write_text("version: 1\n")
    ws = Workspace.open(tmp_path)
    pool = RegressionPool.load(ws)
    assert pool.add(report, "abc123") == ["c1"]  # only cases passing in every sample
    later = EvalReport([result("c4", "refuse", 0, True, ("beta", "alpha")), result("c5", "refuse", 0, True, ("beta",))])
    assert pool.add(later, "def456") == ["c4", "c5"]
    assert pool.anchors("alpha", 5) == ["c4", "c1"] and pool.anchors("beta", 1) == ["c5"]
    assert pool.sample(2, seed=7) == pool.sample(2, seed=7) and len(pool.sample(2, seed=7)) == 2
    assert pool.sample(10, seed=1) == ["c1", "c4", "c5"]
    pool.save()
    again = RegressionPool.load(ws)
    assert again.entries == pool.entries and again.entries["c4"].skills == ["alpha", "beta"]


def test_pool_bad_file_names_path_and_line(tmp_path: Path) -> None:
    (tmp_path / "frames.yaml").write_text("version: 1\n")
    (tmp_path / ".frames").mkdir()
    (tmp_path / ".frames" / "regression-pool.json").write_text('{\n  "version": 1,\n  "entries": [,]\n}\n')
    with pytest.raises(InputError, match=r"regression-pool.json:3: invalid JSON"):
        RegressionPool.load(Workspace.open(tmp_path))


def _pool_workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "frames.yaml").write_text("version: 1\n")
    return Workspace.open(tmp_path)


def test_pool_save_keeps_what_another_command_added_since_load(tmp_path: Path) -> None:
    # The defect: evolve saved the pool it loaded at start over what a concurrent eval added.
    ws = _pool_workspace(tmp_path)
    evolve, eval_ = RegressionPool.load(ws), RegressionPool.load(ws)
    eval_.add(EvalReport([result("e1", "cancel", 0, True), result("e2", "cancel", 0, True)]), "eval-commit")
    eval_.save()
    evolve.add(EvalReport([result("v1", "refuse", 0, True), result("e2", "cancel", 0, True, ("beta",))]),
               "evolve-commit")
    evolve.save()
    stored = RegressionPool.load(ws).entries
    assert set(stored) == {"e1", "e2", "v1"}
    # e2 was refreshed last by evolve: its entry wins, numbered after everything stored.
    assert stored["e2"].commit == "evolve-commit" and stored["e2"].skills == ["beta"]
    assert sorted(stored, key=lambda c: stored[c].seq) == ["e1", "v1", "e2"]
    assert len({e.seq for e in stored.values()}) == 3
    # The saving pool now holds the merged entries, and a second save adds nothing twice.
    assert evolve.entries == stored
    evolve.save()
    assert RegressionPool.load(ws).entries == stored


def _add_and_save(root: str, case_ids: list[str]) -> None:
    ws = Workspace.open(Path(root))
    for cid in case_ids:
        pool = RegressionPool.load(ws)
        pool.add(EvalReport([result(cid, "cancel", 0, True)]), "c")
        pool.save()


def test_pool_saves_from_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    import multiprocessing

    ws = _pool_workspace(tmp_path)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_add_and_save, args=(str(tmp_path), [f"w{w}-{i}" for i in range(15)]))
               for w in range(3)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
    assert [p.exitcode for p in workers] == [0, 0, 0]
    stored = RegressionPool.load(ws).entries
    assert set(stored) == {f"w{w}-{i}" for w in range(3) for i in range(15)}
    assert sorted(e.seq for e in stored.values()) == list(range(1, 46))
