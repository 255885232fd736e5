"""`frames report`: the HTML run report, on the synthetic run of test_front_review_promote_runs.

Invariants:
1. One self-contained file: three inline SVG pictures (front, categories, timeline), no script, no
   URL other than XML namespace names, a Content-Security-Policy that forbids every fetch.
2. It holds what a reviewer acts on: n beside rates, gate failures marked, the reason of each round
   without a child and of each candidate off the front, each candidate's diff, motivating cases and
   policy back-links, the simulator notice.
3. Opened in a real headless Chromium (the system's package; skipped with a message when none is
   installed), it renders with no console message and no blocked request, and a screenshot is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="matplotlib (a dependency of frames) is not installed: pip install -e .")

from bench.browser import find_chromium, open_in_chromium, urls_named
from helpers.review_world import RUN, SIM_MODELS, invoke, saved_with, three_rounds


def _report(world, tmp_path: Path) -> tuple[Path, str]:
    gate = world.state.candidate("r2c1").gate_details
    saved_with(world, round=3, checkpoint=three_rounds(gate), config=SIM_MODELS)
    out = tmp_path / "report.html"
    result = invoke(world, "report", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stdout
    return out, out.read_text()


def test_the_page_is_self_contained(world, tmp_path):
    _, html = _report(world, tmp_path)
    assert html.count("<svg") == 3
    assert "<script" not in html.lower() and " src=" not in html
    assert urls_named(html) == []
    assert """<meta http-equiv="Content-Security-Policy" content="default-src 'none';""" in html


def test_the_page_holds_what_a_reviewer_acts_on(world, tmp_path):
    _, html = _report(world, tmp_path)
    assert "pass rate (n=8)" in html and "cancel (n=4)" in html
    assert "a simulator of model behaviour, not a model" in html
    assert "no child: no skill reached the vote threshold" in html
    assert "r1c2: pass rate 62.5%" in html and "failed the gate: refund 50.0% &lt; floor 71.2%" in html
    # The heat map's red is a low rate, not a failed gate (issue 31); failures are named in red.
    assert "red low to green high" in html and "red: failed the gate" not in html
    assert '<span class="fail">FAIL</span>' in html
    assert "Always confirm the booking id before cancelling." in html  # r1c1's diff
    assert (
        "case-7 (cancel): expected &#x27;cancelled&#x27;, got &#x27;refunded&#x27; — cancelled the wrong booking"
        in html
    )
    assert "policy: <code>policies/airline.md:4-5 Airline Policy &gt; Cancel</code>" in html
    assert f"frames review {RUN}/r2c1" in html


def test_default_path_and_json(world, tmp_path):
    _report(world, tmp_path)
    result = invoke(world, "report", RUN, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["path"].endswith(f".frames/runs/{RUN}/report.html") and Path(data["path"]).is_file()
    assert invoke(world, "report", "20990101-000000-abcdef").exit_code == 2


def test_hostile_text_is_escaped(world, tmp_path):
    state = saved_with(world)
    state.candidates[1].failures[0].reason = "<script>alert(1)</script><img src=http://x.invalid/a.png>"
    from frames_cli.evolution.state.runs import save_state
    from frames_cli.workspace.layout import Workspace

    save_state(Workspace(world.root), state)
    out = tmp_path / "r.html"
    assert invoke(world, "report", "--out", str(out)).exit_code == 0
    html = out.read_text()
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.skipif(find_chromium() is None,
                    reason="no Chromium installed (Debian: apt-get install chromium); the browser check is skipped")
def test_chromium_renders_it_offline_without_console_errors(world, tmp_path):
    page, _ = _report(world, tmp_path)
    seen = open_in_chromium(page, tmp_path / "report.png")
    assert seen.problems == []
    assert "Pareto front" in seen.dom and seen.dom.count("<svg") == 3
    assert seen.screenshot.stat().st_size > 10_000
    # The check can fail: a page that loads an image from the network is caught on the console.
    bad = tmp_path / "bad.html"
    bad.write_text(page.read_text().replace("</body>", '<img src="http://192.0.2.1/x.png"></body>'))
    assert any("192.0.2.1" in line for line in open_in_chromium(bad, tmp_path / "bad.png").problems)
