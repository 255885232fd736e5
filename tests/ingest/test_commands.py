"""`frames ingest review-log | trace | cases | generate | amendment` end to end on a real workspace."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.formats.case_files import load_cases

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def frames(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_review_log_imports_good_rows_reports_bad_ones_and_is_idempotent(workspace: Path):
    result = frames("ingest", "review-log", DATA / "reviews-week12.csv", "--repo", workspace)
    assert result.exit_code == 0, result.output
    for line in (6, 8, 10, 14):
        assert f"reviews-week12.csv:{line}: error:" in result.stderr
    out = workspace / "cases" / "review-log-reviews-week12.yaml"
    cases = load_cases([out])
    assert len(cases) == 6  # 7 good rows, R-112 folded into R-102
    approved = [c for c in cases if c.source.kind == "review-log-approved" and c.also_from]
    assert [s.ref.rsplit("(", 1)[-1] for s in approved[0].also_from] == ["R-112)"]
    pool = json.loads((workspace / ".frames" / "regression-pool.json").read_text())["entries"]
    assert sorted(e["case_id"] for e in pool) == sorted(c.id for c in cases if c.source.kind == "review-log-approved")
    assert len(pool) == 2 and {e["commit"] for e in pool} == {""}  # not a git repository: no commit known
    priors = yaml.safe_load((workspace / "priors.yaml").read_text())
    assert [p["text"][:25] for p in priors["unmatched"]] == ["Be more empathetic when t"]
    before = out.read_bytes()
    assert frames("ingest", "review-log", DATA / "reviews-week12.csv", "--repo", workspace).exit_code == 0
    assert out.read_bytes() == before


def test_strict_and_all_bad_files_exit_2_and_write_nothing(workspace: Path):
    result = frames("ingest", "review-log", DATA / "reviews-week12.csv", "--strict", "--repo", workspace)
    assert result.exit_code == 2 and "reviews-week12.csv:6:" in result.stderr and "--strict" in result.stderr
    bad = workspace / "bad.csv"
    bad.write_text("question,verdict\n,rejected\nhello,maybe\n", encoding="utf-8")
    result = frames("ingest", "review-log", bad, "--repo", workspace)
    assert result.exit_code == 2 and "bad.csv:2:" in result.stderr and "bad.csv:3:" in result.stderr
    assert list((workspace / "cases").iterdir()) == [] and not (workspace / "priors.yaml").exists()


def test_mapped_jsonl_log_attaches_advice_to_matching_skills(workspace: Path):
    result = frames("ingest", "review-log", DATA / "reviews-queue-b.jsonl", "--json", "--repo", workspace,
                    "--map", "input=conversation.user_text,output=agent_reply,verdict=decision",
                    "--map", "correct=gold_answer,category=queue")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["cases"] == 2 and report["categories"] == {"compensation": 2}
    assert [(p["text"][:20], p["skills"]) for p in report["priors"]] == [
        ("Always mention the c", ["compensation"]), ("When adding bags, sa", ["book-flight"]), ("be friendlier", [])]
    assert [p["location"].rsplit(":", 1)[-1] for p in report["problems"] if p["severity"] == "error"] == ["5", "8"]


def test_the_same_case_from_two_sources_is_one_case_with_both_sources(workspace: Path):
    assert frames("ingest", "review-log", DATA / "reviews-week12.csv", "--repo", workspace).exit_code == 0
    sheet = workspace / "sheet.csv"
    sheet.write_text(
        "question,answer,topic\nCan I add one checked bag to reservation 4WQ150?,\"Added one checked bag to 4WQ150, no "
        "extra charge (gold member).\",baggage\nHow many passengers can one reservation have?,five,booking\n",
        encoding="utf-8",
    )
    result = frames("ingest", "cases", sheet, "--repo", workspace)
    assert result.exit_code == 0, result.output
    assert [c.task.expected for c in load_cases([workspace / "cases" / "import-sheet.yaml"])] == ["five"]
    grown = [c for c in load_cases([workspace / "cases" / "review-log-reviews-week12.yaml"])
             if any(s.kind == "import" for s in c.also_from)]
    assert len(grown) == 1 and grown[0].task.input["text"].startswith("Can I add one checked bag")
    assert "duplicate:" in result.stdout


def test_trace_command_writes_cases_with_trajectories(workspace: Path):
    result = frames("ingest", "trace", DATA / "traces.jsonl", "--repo", workspace)
    assert result.exit_code == 0, result.output
    cases = load_cases([workspace / "cases" / "trace-traces.yaml"])
    assert len(cases) == 4 and "traces.jsonl:6: error: invalid JSON" in result.stderr
    assert max(len(c.diagnosis.trajectory) for c in cases) == 5


def test_a_malformed_priors_file_stops_the_import_before_any_case_is_written(workspace: Path):
    (workspace / "priors.yaml").write_text("skills: [not, a, mapping\n", encoding="utf-8")
    result = frames("ingest", "review-log", DATA / "reviews-week12.csv", "--repo", workspace)
    assert result.exit_code == 2 and "priors.yaml:" in result.stderr and "invalid YAML" in result.stderr
    assert list((workspace / "cases").iterdir()) == []


def test_a_broken_case_file_elsewhere_is_reported_and_left_alone(workspace: Path):
    broken = workspace / "cases" / "hand-written.yaml"
    broken.write_text("- id: h1\n  category: cancel\n", encoding="utf-8")
    result = frames("ingest", "trace", DATA / "traces.jsonl", "--repo", workspace)
    assert result.exit_code == 0, result.output
    assert "hand-written.yaml:1: warning: missing key `task` (file left unchanged)" in result.stderr
    assert broken.read_text() == "- id: h1\n  category: cancel\n"
