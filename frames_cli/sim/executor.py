"""Simulated agent under test: loads relevant skills, answers right more often the more of its case's rules they hold.

P(correct) rises from `simulator.floor` to `simulator.ceiling` with what the loaded skills tell it
about the case (`matching.knowledge`: the case's rules, shared with other cases, or its own
evidence copied literally); DESIGN §8.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from frames_cli.sim import reading
from frames_cli.sim.base import SimCall
from frames_cli.sim.matching import bm25_ranked, knowledge, skill_text

# Tool-call names that only read state (tau2 naming); any other action writes.
_READ_PREFIXES = ("get_", "search_", "list_", "find_", "calculate", "think")
_GENERIC_WRONG = "I am sorry, I cannot help with that request."


def _query(case: Any) -> str:
    """What relevance is judged on: the case input and its evidence (the sim knows the case)."""
    text = case.task.input.get("text", "") if isinstance(case.task.input, dict) else str(case.task.input)
    return " ".join([text, *case.diagnosis.evidence])


def behave(call: SimCall) -> dict[str, Any]:
    """Turn 1 (a catalog, no block of a listed skill): `{"load": [ids]}`. Turn 2 (blocks of
    listed skills): `{"answer", "skills_used"}`. Blocks of skills the first turn gives (rules for
    every task, not in the listing) do not make a turn the second.

    P(correct) = floor + (ceiling − floor) · knowledge, measured only inside the `<skill ...>`
    blocks of the prompt, given and loaded (`matching.knowledge`, with `simulator.policy_reading`).
    An unknown case id gets a null answer (nothing to know).
    """
    case = call.world.get(reading.case_id(call.prompt))
    blocks = [b for b in reading.skill_blocks(call.prompt) if "id" in b.attrs]
    if case is None:
        return {"answer": None, "skills_used": []}
    entries = reading.catalog(call.prompt)
    listed = {sid for sid, _, _ in entries}
    if not any(b.attrs["id"] in listed for b in blocks):
        best = bm25_ranked(_query(case), ((sid, skill_text(name, desc)) for sid, name, desc in entries))
        if best:
            return {"load": [sid for sid, _ in best[: call.config.loads]]}
    cfg = call.config
    facts = call.world.facts(case)
    known = knowledge(
        case.diagnosis.evidence, facts.rules, facts.values, call.world.policy, [b.text for b in blocks],
        cfg.policy_reading, facts.statements,
    )
    p_correct = cfg.floor + (cfg.ceiling - cfg.floor) * known
    rng = call.rng(case.id, "answer")
    answer = case.task.expected if rng.random() < p_correct else wrong_answer(case.task.expected, rng)
    return {"answer": answer, "skills_used": [b.name for b in blocks]}


def wrong_answer(expected: Any, rng: random.Random) -> Any:
    """A plausible wrong answer of the same shape as `expected`.

    Action lists: drop an action, alter an argument, or add a write where none is expected.
    Text: the other of yes/no, else a refusal. Numbers: off by one. Mappings: one value altered.
    """
    if isinstance(expected, list):
        return _wrong_list(expected, rng)
    if isinstance(expected, dict):
        return _alter_one(copy.deepcopy(expected), rng)
    if isinstance(expected, bool):
        return not expected
    if isinstance(expected, (int, float)):
        return expected + 1
    if isinstance(expected, str):
        flip = {"yes": "no", "no": "yes", "true": "false", "false": "true"}
        return flip.get(expected.strip().lower(), _GENERIC_WRONG if expected != _GENERIC_WRONG else "")
    return _GENERIC_WRONG


def _wrong_list(expected: list, rng: random.Random) -> list:
    actions = [a for a in expected if isinstance(a, dict) and "name" in a]
    choices = ["drop"] if expected else []
    if any(isinstance(a, dict) and a.get("arguments") for a in actions):
        choices.append("alter")
    if not any(not str(a["name"]).startswith(_READ_PREFIXES) for a in actions):
        choices.append("write")
    out = copy.deepcopy(expected)
    kind = rng.choice(choices or ["write"])
    if kind == "drop":
        del out[rng.randrange(len(out))]
    elif kind == "alter":
        target = rng.choice([a for a in out if isinstance(a, dict) and a.get("arguments")])
        target["arguments"] = _alter_one(target["arguments"], rng)
    elif actions or not expected:
        ids = [v for a in actions for k, v in (a.get("arguments") or {}).items() if k == "reservation_id"]
        out.append({"name": "cancel_reservation", "arguments": {"reservation_id": ids[0] if ids else "UNKNOWN"}})
    else:
        out.append("extra step")
    return out


def _alter_one(mapping: dict, rng: random.Random) -> dict:
    if not mapping:
        return {"unexpected": True}
    key = rng.choice(sorted(mapping))
    mapping[key] = wrong_answer(mapping[key], rng) if not isinstance(mapping[key], str) else mapping[key] + "X"
    return mapping
