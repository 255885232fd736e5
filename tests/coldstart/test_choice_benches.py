"""The catalog-choice benches' rankings: Lucene's BM25 idf, and the replay of the real-model trial."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

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
    row = {"id": "x", "model": "spool/executor", "created": 0, "messages": [{"role": "user", "content": prompt}],
           "answer": json.dumps({"load": ["s1", "s2"]})}
    for name in sc.FILES:
        (tmp_path / name).write_text(json.dumps(row) + "\n")
    turns = sc.first_turns(tmp_path)
    assert (
        len(turns) == 2
        and turns[0][0] == "c1"
        and turns[0][1] == "Please cancel my reservation and refund me."
        and turns[0][3] == ["s1", "s2"]
    )
    entries = turns[0][2]
    for rule in ("sim", "okapi", "lucene"):
        assert sc.rank(rule, turns[0][1], entries)[0] == "s2"


def _leave_set(tmp_path: Path, monkeypatch, cc, questions: list[dict] | None = None) -> None:
    """A two-section policy set `leave` (and its questions) in place of the bench's sets."""
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
    (tmp_path / "data" / "leave.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions or []))


def _skills(cc, work: Path, **kw):
    with cc.Bench("leave", work, **kw) as bench:
        return bench.skills()


def test_catalog_choice_replays_recorded_coldstart_answers(tmp_path: Path, monkeypatch) -> None:
    cc = _load("catalog_choice")
    _leave_set(tmp_path, monkeypatch, cc)
    verbatim, failures = _skills(cc, tmp_path / "verbatim")
    assert sorted(verbatim) == ["annual-leave", "sick-leave"] and failures == []

    # Nothing recorded: every request times out and its section stays verbatim.
    skills, failures = _skills(cc, tmp_path / "first", model="spool/coldstart", wait=0.05)
    assert len(failures) == len(skills) == 2 and all("no answer" in why for _, why in failures)

    # Answer each request as a model would, then record the answered requests.
    spool = tmp_path / "first" / "leave" / ".frames" / "spool"
    for request in spool.glob("*.request.json"):
        asked = json.loads(request.read_text())
        prompt = asked["messages"][0]["content"]
        name = prompt.split("Skill: ", 1)[1].split("\n", 1)[0]
        days = "25 days, 10 days in a row" if "annual" in name else "more than 3 days"
        answer = {"body": f"1. Check the leave asked for against the limits ({days}).\n",
                  "description": f"Decides whether staff leave is allowed: {days}. Use when someone asks for leave."}
        (spool / asked["answer_file"]).write_text(json.dumps(answer))
    # Each section asked three times: the first attempt and coldstart.rewrite_retries retries.
    assert cc.spool_replay.record(cc.answers_file("leave"), spool) == len(list(spool.glob("*.request.json"))) == 6
    recorded = list(cc.spool_replay.read(cc.answers_file("leave")).values())
    assert [r["id"] for r in recorded] == sorted(r["id"] for r in recorded) and all(
        r["messages"] and r["answer"] for r in recorded
    )

    # A fresh workspace replays the recording: both sections are rewritten, with the model's descriptions.
    # The answers are there before the first poll, so a long wait costs nothing unless replay is broken;
    # 0.05 s (the timeout above) failed under load.
    skills, failures = _skills(cc, tmp_path / "second", model="spool/coldstart", wait=10.0)
    assert failures == []
    assert sorted(s.description for s in skills.values()) == [
        "Decides whether staff leave is allowed: 25 days, 10 days in a row. Use when someone asks for leave.",
        "Decides whether staff leave is allowed: more than 3 days. Use when someone asks for leave.",
    ]


def test_a_recording_names_only_spool_ids(tmp_path: Path) -> None:
    import lzma

    spool_replay = _load("spool_replay")
    path = tmp_path / "x.jsonl.xz"
    good = {"id": "0" * 20, "model": "spool/executor", "messages": [], "answer": "{}"}
    path.write_bytes(
        lzma.compress((json.dumps(good) + "\n" + json.dumps({**good, "id": "../../escaped"}) + "\n").encode())
    )
    with pytest.raises(SystemExit, match=r"x\.jsonl\.xz:2: not a recorded answer"):
        spool_replay.replay(path, tmp_path / "spool")
    assert not list(tmp_path.rglob("escaped*"))


def test_catalog_choice_scores_a_models_choice_over_the_questions_it_answered(tmp_path: Path, monkeypatch) -> None:
    from frames_cli.executor.catalog import Catalog

    cc = _load("catalog_choice")
    flu, long_leave = "I have the flu, what do I send my manager?", "Can I take two weeks off in one go?"
    _leave_set(tmp_path, monkeypatch, cc, [{"question": flu, "file": "leave.md", "line": 10},
                                           {"question": long_leave, "file": "leave.md", "line": 6}])

    with cc.Bench("leave", tmp_path / "first", executor="spool/executor", wait=0.05, record=True) as bench:
        skills, _ = bench.skills()
        catalog = Catalog.of(skills)
        assert bench.model_rankings(catalog, [flu]) == {flu: None}
        # The request is the built-in executor's first turn; answer it as a model would.
        (request,) = bench.spool.glob("*.request.json")
        asked = json.loads(request.read_text())
        assert asked["messages"][0]["content"] == cc.first_turn(catalog, flu)
        sick = next(i for i, n in catalog.ids.items() if n == "sick-leave")
        (bench.spool / asked["answer_file"]).write_text(json.dumps({"load": [sick]}))
    assert len(cc.spool_replay.read(cc.answers_file("leave"))) == 1

    # Replayed, the answered question scores; the other is left out of the model's column, not a miss.
    result = cc.run_set("leave", None, False, tmp_path / "second", executor="spool/executor", wait=0.05)
    assert result["model"] == {"top1": 1.0, "top3": 1.0, "ranked": 1} and result["questions"] == 2
    assert result["bm25"]["ranked"] == 2


def test_the_shipped_recordings_answer_the_current_prompts(tmp_path: Path) -> None:
    """A change to the coldstart or executor prompt, or to how the catalog is shown, makes the
    recorded answers miss; the airline set (6 sections, 62 questions) shows it in seconds. One
    question is answered by the general rules, given with every case (decision 0099), not ranked."""
    cc = _load("catalog_choice")
    for model in (None, "spool/coldstart"):
        result = cc.run_set("tau2-airline", model, False, tmp_path / (model or "verbatim").replace("/", "-"),
                            executor="spool/executor")
        assert (result["questions"], result["given"], result["model"]["ranked"], result["listed"]) == (62, 1, 61, 5)
        assert model is None or result["rewritten"] == result["skills"] == 6
