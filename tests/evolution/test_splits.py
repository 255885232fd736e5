"""Held-out sets: the counted cases divided per category, stably by case id (evolution/state/splits.py).

Invariants:
1. Adding a case keeps every other case in its set (the place is a hash of the id alone).
2. A category too small to split is kept whole (diagnosed and gated, none sealed) and named in a warning.
3. `selection: 0, test: 0` is the paper's single evaluation set E, with no warning.
4. Cases of `split.test_cases` are sealed whatever their hash.
5. In a run, diagnosers and rewriters see only diagnosis-set cases; the gate and the front use the
   selection set; the sealed test set is scored once at the end, for S0 and every front member.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.errors import ConfigError
from frames_cli.evolution.state.splits import SETS, Split, split_cases
from frames_cli.formats.case_record import case_from_dict
from frames_cli.workspace.config import SplitConfig
from frames_cli.workspace.config_file import parse_config

from helpers.airline import CONFIG, build_repo, make_cases


def case(cid: str, category: str):
    return case_from_dict({"id": cid, "category": category,
                           "task": {"input": "q", "expected": "yes", "check": {"kind": "exact"}}})


def where(split: Split) -> dict[str, frozenset[str]]:
    """case id → the sets it is in."""
    out: dict[str, set[str]] = {}
    for name in SETS:
        for cid in split.ids(name):
            out.setdefault(cid, set()).add(name)
    return {cid: frozenset(names) for cid, names in out.items()}


def test_adding_a_case_keeps_every_other_case_in_its_set() -> None:
    rng = random.Random(5)
    config = SplitConfig(selection=0.3, test=0.2, min_cases=4)
    cases = [case(f"c-{rng.getrandbits(40):x}", rng.choice(["a", "b", "c"])) for _ in range(60)]
    before = where(split_cases(cases, config))
    for _ in range(30):
        added = case(f"new-{rng.getrandbits(40):x}", rng.choice(["a", "b", "c"]))
        after = where(split_cases([*cases, added], config))
        assert {cid: sets for cid, sets in after.items() if cid != added.id} == before
    # Every case of a split category is in exactly one set, and every set has cases.
    split = split_cases(cases, config)
    assert not split.whole and all(len(sets) == 1 for sets in before.values())
    assert all(split.ids(name) for name in SETS)


def test_a_small_category_is_kept_whole_and_named() -> None:
    cases = [case(f"big-{i}", "big") for i in range(40)] + [case(f"tiny-{i}", "tiny") for i in range(3)]
    split = split_cases(cases, SplitConfig(selection=0.3, test=0.2, min_cases=4))
    assert split.whole == ("tiny",)
    tiny = {f"tiny-{i}" for i in range(3)}
    assert tiny <= set(split.diagnosis) and tiny <= set(split.selection) and not tiny & set(split.test)
    (kept,) = split.warnings()
    assert kept.sizes == (("tiny", 3),)
    warning = str(kept)
    assert "1 category too small to split" in warning and "in-sample" in warning and warning.endswith(": tiny (3)")
    more = split_cases(cases + [case(f"wee-{i}", "wee") for i in range(2)],
                       SplitConfig(selection=0.3, test=0.2, min_cases=4))
    (kept,) = more.warnings()
    warning = str(kept)
    assert "2 categories too small to split" in warning and warning.endswith(": tiny (3), wee (2)")
    assert split.counts["test"].get("tiny", 0) == 0 and split.counts["diagnosis"]["tiny"] == 3


def test_no_held_out_share_is_the_papers_single_set() -> None:
    cases = [case(f"x-{i}", "a" if i % 2 else "b") for i in range(9)]
    split = split_cases(cases, SplitConfig(selection=0, test=0))
    assert split.paper and split.diagnosis == split.selection == tuple(sorted(c.id for c in cases))
    assert split.test == () and split.warnings() == []


def test_test_case_files_are_sealed_whatever_their_hash() -> None:
    cases = [case(f"x-{i}", "a") for i in range(12)]
    sealed = [case(f"held-{i}", "a") for i in range(4)]
    split = split_cases(cases, SplitConfig(selection=0.3, test=0.0), sealed)
    assert set(split.test) == {c.id for c in sealed}
    assert not set(split.test) & (set(split.diagnosis) | set(split.selection))


def test_shares_that_leave_nothing_to_diagnose_are_refused() -> None:
    with pytest.raises(ConfigError, match="at most 0.9"):
        parse_config("evolution:\n  split:\n    selection: 0.6\n    test: 0.4\n")


def test_a_run_diagnoses_only_the_diagnosis_set_and_seals_the_test_set(tmp_path: Path) -> None:
    config = json.loads(json.dumps(CONFIG))
    config["evolution"]["split"] = {"selection": 0.3, "test": 0.2, "min_cases": 4}
    repo = build_repo(tmp_path / "ws", config)

    result = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root), "--json"])

    assert result.exit_code == 0, result.output
    menu = json.loads(result.stdout)
    state = json.loads((repo.root / ".frames" / "runs" / menu["run_id"] / "state.json").read_text())
    split = state["checkpoint"]["split"]
    held_out = set(split["selection"]) | set(split["test"])
    assert split["test"] and held_out and not held_out & set(split["diagnosis"])
    from frames_cli.llm.store.audit import read_exchanges

    exchanges = read_exchanges(repo.root / ".frames" / "runs" / menu["run_id"] / "exchanges.jsonl")
    seen = [e for e in exchanges if e["role"] in ("diagnoser", "rewriter")]
    assert seen, "the run must diagnose something"
    for exchange in seen:
        prompt = "\n".join(m["content"] for m in exchange["messages"])
        assert not [cid for cid in held_out if f'"{cid}"' in prompt], exchange["tag"]
    by_id = {c["id"]: c for c in state["candidates"]}
    for cid in ["r0c0", *state["front"]]:
        sets = by_id[cid]["sets"]
        assert sets["test"]["cases"] == len(split["test"]) and sets["selection"]["pass_rate"] == by_id[cid]["pass_rate"]
    assert all("test" not in c["sets"] for c in state["candidates"] if c["id"] not in ["r0c0", *state["front"]])
    assert menu["sets"]["test"] == split["counts"]["test"]
    report = (repo.root / ".frames" / "runs" / menu["run_id"] / "report.md").read_text()
    assert "## Cases per set" in report and "sealed test set" in report

    scored = CliRunner().invoke(app, ["eval", "--repo", str(repo.root), "--set", "selection", "--json"])
    assert scored.exit_code == 0, scored.output
    assert sorted({r["case_id"] for r in json.loads(scored.stdout)["results"]}) == sorted(split["selection"])


def test_eval_refuses_set_with_cases(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws")
    result = CliRunner().invoke(app, ["eval", "--repo", str(repo.root), "--set", "test", "--cases", "cases/*"])
    assert result.exit_code == 2 and "--set and --cases cannot be combined" in result.stderr
    assert yaml.safe_load((repo.root / "cases" / "airline.yaml").read_text()) == make_cases()
