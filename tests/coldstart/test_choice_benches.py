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
