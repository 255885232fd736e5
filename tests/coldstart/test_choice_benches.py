"""The catalog-choice benches' rankings: Lucene's BM25 idf, and the replay of the real-model trial."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_catalog_bench_idf_falls_with_the_lines_a_word_is_on() -> None:
    cc = _load("catalog_choice")
    # Six lines; "half" is on 3, "most" on 5, "rare" on 1.
    corpus = [["half", "most", "rare"], ["half", "most"], ["half", "most"], ["most"], ["most"], ["other"]]
    lucene = cc._bm25(corpus).idf
    assert lucene["rare"] > lucene["half"] > lucene["most"] > 0
    cc.IDF["variant"] = "okapi"
    try:
        okapi = cc._bm25(corpus).idf
    finally:
        cc.IDF["variant"] = "lucene"
    # rank-bm25's floor gives the word on 5 lines more weight than the word on 3.
    assert okapi["most"] > okapi["half"] == 0


def test_sim_choice_replays_a_first_turn_and_ranks_its_catalog(tmp_path: Path) -> None:
    sc = _load("sim_choice")
    prompt = (
        "Case id: c1\n\n3 skills available:\n"
        "- s1: general-rules — General rules that apply to every task.\n"
        "- s2: cancel-flight — Cancel a reservation and refund it.\n"
        "- s3: book-flight — Book a new reservation with bags.\n\n"
        "Request:\nPlease cancel my reservation and refund me.\n\nDetails:\n{}"
    )
    row = {"id": "x", "model": "spool/executor", "created": 0, "messages": [{"role": "user", "content": prompt}], "answer": json.dumps({"load": ["s1", "s2"]})}
    for name in sc.FILES:
        (tmp_path / name).write_text(json.dumps(row) + "\n")
    turns = sc.first_turns(tmp_path)
    assert len(turns) == 2 and turns[0][0] == "c1" and turns[0][1] == "Please cancel my reservation and refund me." and turns[0][3] == ["s1", "s2"]
    entries = turns[0][2]
    for rule in ("sim", "okapi", "lucene"):
        assert sc.rank(rule, turns[0][1], entries)[0] == "s2"


def test_catalog_choice_replays_recorded_coldstart_answers(tmp_path: Path, monkeypatch) -> None:
    cc = _load("catalog_choice")
    policies = tmp_path / "set"
    policies.mkdir()
    (policies / "leave.md").write_text(
        "# Leave policy\n\n## Annual leave\n\nStaff take at most 25 days of annual leave a year.\n"
        "A request for more than 10 days in a row needs the manager's approval.\n\n"
        "## Sick leave\n\nStaff who are ill for more than 3 days send a doctor's note to the manager.\n"
    )
    monkeypatch.setattr(cc, "SETS", {"leave": policies})
    monkeypatch.setattr(cc, "DATA", tmp_path / "data")
    (tmp_path / "data").mkdir()

    verbatim, failures = cc.make_skills("leave", None, tmp_path / "verbatim")
    assert sorted(verbatim) == ["annual-leave", "sick-leave"] and failures == []

    # Nothing recorded: every request times out and its section stays verbatim.
    skills, failures = cc.make_skills("leave", "spool/coldstart", tmp_path / "first", wait=0.05)
    assert len(failures) == len(skills) == 2 and all("no answer" in why for _, why in failures)

    # Answer each request as a model would, then record the answered requests.
    spool = tmp_path / "first" / "leave" / ".frames" / "spool"
    for request in spool.glob("*.request.json"):
        asked = json.loads(request.read_text())
        prompt = asked["messages"][0]["content"]
        name = prompt.split("Skill: ", 1)[1].split("\n", 1)[0]
        days = "25 days, 10 days in a row" if "annual" in name else "more than 3 days"
        answer = {"body": f"1. Check the leave asked for against the limits ({days}).\n", "description": f"Decides whether staff leave is allowed: {days}. Use when someone asks for leave."}
        (spool / asked["answer_file"]).write_text(json.dumps(answer))
    # Each section asked three times: the first attempt and coldstart.rewrite_retries retries.
    assert cc.record_answers("leave", spool) == len(list(spool.glob("*.request.json"))) == 6
    recorded = list(cc.read_answers("leave").values())
    assert [r["id"] for r in recorded] == sorted(r["id"] for r in recorded) and all(r["messages"] and r["answer"] for r in recorded)

    # A fresh workspace replays the recording: both sections are rewritten, with the model's descriptions.
    skills, failures = cc.make_skills("leave", "spool/coldstart", tmp_path / "second", wait=0.05)
    assert failures == []
    assert sorted(s.description for s in skills.values()) == [
        "Decides whether staff leave is allowed: 25 days, 10 days in a row. Use when someone asks for leave.",
        "Decides whether staff leave is allowed: more than 3 days. Use when someone asks for leave.",
    ]


def test_catalog_choice_replays_a_models_choice_from_the_executors_first_turn(tmp_path: Path, monkeypatch) -> None:
    from frames_cli.executor.catalog import Catalog

    cc = _load("catalog_choice")
    policies = tmp_path / "set"
    policies.mkdir()
    (policies / "leave.md").write_text("# Leave\n\n## Annual leave\n\nStaff take at most 25 days a year.\n\n## Sick leave\n\nIll staff send a doctor's note after 3 days.\n")
    monkeypatch.setattr(cc, "SETS", {"leave": policies})
    monkeypatch.setattr(cc, "DATA", tmp_path / "data")
    (tmp_path / "data").mkdir()
    question = "I have the flu, what do I send my manager?"

    with cc.Bench("leave", tmp_path / "first", executor="spool/executor", wait=0.05, record=True) as bench:
        skills, _ = bench.skills()
        catalog = Catalog.of(skills)
        assert bench.model_rankings(catalog, [question]) == {question: None}
        # The request is the built-in executor's first turn; answer it as a model would.
        (request,) = bench.spool.glob("*.request.json")
        asked = json.loads(request.read_text())
        assert asked["messages"][0]["content"] == cc.first_turn(catalog, question)
        sick = next(i for i, n in catalog.ids.items() if n == "sick-leave")
        (bench.spool / asked["answer_file"]).write_text(json.dumps({"load": [sick]}))
    assert len(cc.read_answers("leave")) == 1

    with cc.Bench("leave", tmp_path / "second", executor="spool/executor", wait=0.05) as bench:
        skills, _ = bench.skills()
        assert bench.model_rankings(Catalog.of(skills), [question]) == {question: ["sick-leave"]}
