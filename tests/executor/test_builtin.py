"""The built-in agent through the real model layer: catalog, loading by id, blindness, cache.

Invariants:
1. The first prompt is the catalog: its size, then `- id: name — description` lines; nothing else of the skills
   but the bodies of `general-rules` skills, given with every case and not listed.
2. Unknown ids are refused and the model is asked again; known ids come back as `<skill id=..>` blocks.
3. Nothing of a case's diagnosis reaches any prompt the model receives (audit log; recording provider).
4. A second evaluation of unchanged skills and cases makes no executor model call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import install_scripted, remove_scripted

from frames_cli.evaluation.runner import evaluate
from frames_cli.executor.builtin import BuiltinExecutor, first_turn
from frames_cli.executor.catalog import Catalog
from frames_cli.formats.case_files import load_cases
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.store.audit import read_exchanges
from frames_cli.llm.client.client import ModelClient
from frames_cli.workspace.config import ExecutorConfig

MARKER = "QX-BLIND-4411"
SKILLS = {
    "baggage-allowance": ("Free checked bags by membership and cabin.",
                          "Silver members get 2 free checked bags per passenger in economy."),
    "cancel-flight": ("Cancel reservations.",
                      "Basic economy reservations can be cancelled only within 24 hours of booking."),
    "delay-compensation": ("Delays and compensation.",
                           "Offer compensation for delays only when the delay is longer than three hours."),
}


def write_skills(root: Path) -> SkillSet:
    for name, (description, body) in SKILLS.items():
        path = root / "skills" / name / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return SkillSet.from_dir(root / "skills")


def plant_marker(cases_file: Path) -> None:
    """Put the marker in every diagnosis field of every case (the simulator's world reads them)."""
    text = cases_file.read_text()
    text = text.replace("  diagnosis:\n",
                        f"  diagnosis:\n    symptom: {MARKER} symptom\n    cause: {MARKER} cause\n    notes: {MARKER} "
                        f"notes\n    trajectory: [{{state: {MARKER}}}]\n")
    cases_file.write_text(text)


@pytest.fixture
def world(sim_workspace):
    plant_marker(sim_workspace.workspace.cases_dir / "fixture.yaml")
    skills = write_skills(sim_workspace.workspace.root)
    cases = load_cases([sim_workspace.workspace.cases_dir / "fixture.yaml"])
    assert all(MARKER in json.dumps(c.to_dict()) for c in cases)
    return sim_workspace, skills, cases


def test_catalog_lines_and_stable_ids() -> None:
    skills = SkillSet.from_files({f"skills/{n}/SKILL.md": f"---\nname: {n}\ndescription: {d}\n---\n{b}\n".encode()
                                  for n, (d, b) in SKILLS.items()})
    catalog = Catalog.of(skills)
    lines = catalog.text().splitlines()
    assert lines[0] == "3 skills available:"
    assert all(re.fullmatch(r"- s[0-9a-f]{4}: [a-z-]+ — .+", ln) for ln in lines[1:])
    smaller = Catalog.of(skills.without("cancel-flight"))
    assert smaller.id_of("baggage-allowance") == catalog.id_of("baggage-allowance")
    assert catalog.names([catalog.id_of("cancel-flight"), "baggage-allowance", "nope"]) == [
        "cancel-flight",
        "baggage-allowance",
    ]


def test_catalog_leads_with_procedures_and_lists_reference_skills_last() -> None:
    files = {f"skills/{n}/SKILL.md": f"---\nname: {n}\ndescription: {d}\n---\n{b}\n".encode()
             for n, (d, b) in SKILLS.items()}
    files["skills/definitions/SKILL.md"] = (
        b"---\nname: definitions\ndescription: Terms.\nmetadata:\n  frames-tags: kyc, reference\n---\nA term.\n"
    )
    catalog = Catalog.of(SkillSet.from_files(files))
    assert list(catalog.ids.values()) == ["baggage-allowance", "cancel-flight", "delay-compensation", "definitions"]


def test_blind_evaluation_and_zero_calls_on_rerun(world) -> None:
    ws, skills, cases = world
    executor_config = ExecutorConfig()
    with ModelClient(ws.workspace, ws.config, run_dir=ws.run_dir) as client:
        first = evaluate(cases, skills, BuiltinExecutor(client, executor_config), samples=2)
        calls = client.ledger.to_dict()["roles"]["executor"]["calls"]
    assert calls == len(cases) * 2 * 2  # catalog turn + answer turn, per case and sample
    exchanges = read_exchanges(ws.run_dir / "exchanges.jsonl")
    assert len(exchanges) == calls
    for record in exchanges:
        assert MARKER not in json.dumps(record["messages"])
    first_prompt = exchanges[0]["messages"][0]["content"]
    assert "3 skills available:" in first_prompt and "<skill" not in first_prompt
    assert "Silver members get" not in first_prompt  # bodies only after loading
    result = first.results[0]
    assert [s["result"].split(" ")[0] for s in result.trajectory] == ["loaded", "answered"]
    assert result.skills_used and set(result.skills_used) <= set(SKILLS)
    assert first.mean_prompt_tokens > 0 and first.cost_usd is not None

    with ModelClient(ws.workspace, ws.config, run_dir=ws.run_dir.with_name("second")) as client:
        second = evaluate(cases, skills, BuiltinExecutor(client, executor_config), samples=2)
        ledger = client.ledger.to_dict()["roles"]["executor"]
    assert ledger["calls"] == 0 and ledger["cached"] == calls
    assert [r.to_dict() for r in second.results] == [r.to_dict() for r in first.results]


class Scripted:
    """A litellm custom provider that answers from a queue and records every prompt it receives."""

    def __init__(self, answers: list[dict[str, Any]]):
        from litellm.llms.custom_llm import CustomLLM

        from frames_cli.llm.transport.providers import make_response

        outer = self
        self.answers, self.prompts = list(answers), []

        class Handler(CustomLLM):
            def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
                outer.prompts.append("\n\n".join(m["content"] for m in messages))
                return make_response(f"scripted/{model}", json.dumps(outer.answers.pop(0)), "stop", 50, 5)

        self.handler = Handler()


@pytest.fixture
def scripted():
    def install(answers: list[dict[str, Any]]) -> Scripted:
        provider = Scripted(answers)
        install_scripted(provider.handler)
        return provider

    yield install
    remove_scripted()


def test_unknown_ids_are_refused_and_asked_again(world, scripted) -> None:
    ws, skills, cases = world
    catalog = Catalog.of(skills)
    bags = catalog.id_of("baggage-allowance")
    provider = scripted([{"load": ["s9999", bags]}, {"load": [bags]}, {"answer": "4", "skills_used": [bags]}])
    config = ws.configured(models={"executor": "scripted/agent"})
    with ModelClient(ws.workspace, config, use_cache=False) as client:
        (result,) = BuiltinExecutor(client, ExecutorConfig()).run([cases[1].agent_view()], skills)
    assert result.error is None and result.output == "4" and result.skills_used == ["baggage-allowance"]
    assert [s["result"] for s in result.trajectory] == ["refused unknown ids: s9999", "loaded baggage-allowance",
                                                        "answered"]
    assert "These ids are not in the catalog: s9999." in provider.prompts[1]
    assert f'<skill id="{bags}" name="baggage-allowance">' in provider.prompts[2]
    assert "Silver members get 2 free checked bags" in provider.prompts[2]
    assert all(MARKER not in p for p in provider.prompts)
    assert result.usage.prompt_tokens == 150 and result.usage.completion_tokens == 15


def test_too_many_load_turns_fail_the_case(world, scripted) -> None:
    ws, skills, cases = world
    bags = Catalog.of(skills).id_of("baggage-allowance")
    scripted([{"load": [bags]}, {"load": [bags]}])
    config = ws.configured(models={"executor": "scripted/agent"})
    with ModelClient(ws.workspace, config, use_cache=False) as client:
        (result,) = BuiltinExecutor(client, ExecutorConfig(max_turns=1)).run([cases[0].agent_view()], skills)
    assert result.error == "no answer after 1 turns of loading skills" and result.output is None


GENERAL = ("---\nname: general-rules\ndescription: Rules for every request.\nmetadata:\n  frames-tags: airline, "
           "general-rules\n---\nGet an explicit yes before any change to a booking.\n")


def test_a_general_rules_skill_is_given_before_the_listing_and_not_listed() -> None:
    files = {f"skills/{n}/SKILL.md": f"---\nname: {n}\ndescription: {d}\n---\n{b}\n".encode()
             for n, (d, b) in SKILLS.items()}
    plain = Catalog.of(SkillSet.from_files(files))
    catalog = Catalog.of(SkillSet.from_files({**files, "skills/general-rules/SKILL.md": GENERAL.encode()}))
    rules = catalog.id_of("general-rules")
    assert catalog.given == [rules] and list(catalog.listed.values()) == list(plain.ids.values())
    assert catalog.text() == plain.text()  # the listing: 3 skills, the general one not among them
    first = first_turn(catalog, "c1", "Cancel my trip.", "JSON", 3)
    given_at, listing_at = first.index(f'<skill id="{rules}" name="general-rules">'), first.index("3 skills available:")
    assert "Rules for every task of their policy, loaded already" in first[:given_at] and given_at < listing_at
    assert "Get an explicit yes before any change to a booking." in first
    # Without one, nothing is given: the first turn opens on the listing.
    bare = first_turn(plain, "c1", "Cancel my trip.", "JSON", 3)
    assert "<skill" not in bare and "loaded already" not in bare
    assert bare.split("\n\n")[1].startswith("3 skills available:")


def test_a_given_skill_costs_no_load(world, scripted) -> None:
    ws, skills, cases = world
    (ws.workspace.root / "skills" / "general-rules").mkdir()
    (ws.workspace.root / "skills" / "general-rules" / "SKILL.md").write_text(GENERAL)
    skills = SkillSet.from_dir(ws.workspace.root / "skills")
    catalog = Catalog.of(skills)
    rules, bags = catalog.id_of("general-rules"), catalog.id_of("baggage-allowance")
    # The model does not name the given rules among what it used: they were read all the same.
    provider = scripted([{"load": [rules]}, {"load": [rules, bags]}, {"answer": "4", "skills_used": [bags]}])
    config = ws.configured(models={"executor": "scripted/agent"})
    with ModelClient(ws.workspace, config, use_cache=False) as client:
        (result,) = BuiltinExecutor(client, ExecutorConfig(max_skill_loads=1)).run([cases[1].agent_view()], skills)
    assert result.output == "4" and result.skills_used == ["general-rules", "baggage-allowance"]
    assert [s["result"] for s in result.trajectory] == ["loaded nothing", "loaded baggage-allowance", "answered"]
    assert "(none: the skills you asked for are loaded already)" in provider.prompts[1]
    assert result.trajectory[0]["state"] == "catalog of 3 skills; given: general-rules"
