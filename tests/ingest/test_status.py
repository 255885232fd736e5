"""`frames status` shows cases per source and the policy sections no case covers."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def test_status_counts_sources_and_lists_uncovered_sections(workspace: Path):
    data = json.loads(runner.invoke(app, ["status", "--json", "--repo", str(workspace)]).stdout)
    assert data["cases_by_source"] == {} and len(data["uncovered"]) == 8
    assert runner.invoke(app, ["ingest", "review-log", str(DATA / "reviews-week12.csv"), "--repo",
                               str(workspace)]).exit_code == 0
    sheet = workspace / "sheet.yaml"
    sheet.write_text("- question: Can I add one checked bag to reservation 4WQ150?\n"
                     "  answer: Added one checked bag to 4WQ150, no extra charge (gold member).\n", encoding="utf-8")
    assert runner.invoke(app, ["ingest", "cases", str(sheet), "--repo", str(workspace)]).exit_code == 0
    result = runner.invoke(app, ["status", "--json", "--repo", str(workspace)])
    data = json.loads(result.stdout)
    # 4 rejected rows, 2 approved (one also came from the sheet); the evidence of
    # covers "Modify flight", the reviewer's own words on R-101 cover "Cancel flight".
    assert data["cases_by_source"] == {"import": 1, "review-log": 4, "review-log-approved": 2}
    uncovered = {u["heading"].split(" > ")[-1] for u in data["uncovered"]}
    assert "Modify flight" not in uncovered and "Cancel flight" not in uncovered and "Book flight" in uncovered
    text = runner.invoke(app, ["status", "--repo", str(workspace)]).stdout
    assert "cases by source: import 1, review-log 4, review-log-approved 2" in text
    assert "policies/airline.md:63-102 Airline Agent Policy > Book flight" in text
