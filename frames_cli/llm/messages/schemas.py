"""JSON Schemas of every role's answer: the contract between prompts, the simulator and the code.

Each schema is checked with jsonschema after JSON extraction; a reply that still fails after the
repair turn is a failed call, never data (DESIGN §7).
"""

from __future__ import annotations

from typing import Any

#: Longest text of any one answer field, in characters: a skill file's limit
#: (formats/skill_file.MAX_SKILL_BYTES), so a runaway or hostile answer is a failed call, never a
#: text frames spends time on.
MAX_TEXT = 800_000
#: Most items of any one list in an answer (proposals, disputes, cases, case ids): a diagnoser
#: batch holds at most a few dozen failing cases; thousands of items are a runaway answer.
MAX_ITEMS = 200

_STR = {"type": "string", "maxLength": MAX_TEXT}
_STR_LIST = {"type": "array", "items": _STR, "maxItems": MAX_ITEMS}

#: Built-in executor, turn that picks skills: `{"load": ["s1", "s4"]}`, or answers at once.
EXECUTOR_STEP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "load": {"type": "array", "items": _STR, "maxItems": 20},
        "answer": {},
        "skills_used": _STR_LIST,
    },
    "anyOf": [{"required": ["load"]}, {"required": ["answer"]}],
}

#: Diagnoser: proposals for skill changes motivated by failing cases (DESIGN §4 step 3).
DIAGNOSIS: dict[str, Any] = {
    "type": "object",
    "required": ["proposals"],
    "properties": {
        "proposals": {
            "type": "array",
            "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "required": ["skill", "change", "rules", "rationale", "case_ids"],
                "properties": {
                    "skill": {"type": "string", "minLength": 1, "maxLength": 64},
                    "new_skill": {"type": "boolean"},
                    "description": _STR,
                    "change": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
                    # The sentences the change adds to the skill, each a whole rule; [] when it adds none.
                    "rules": _STR_LIST,
                    "rationale": _STR,
                    "case_ids": _STR_LIST,
                },
            },
        },
        # A failing case whose expected result contradicts the policy: a label to check, not a rule to learn.
        "disputes": {
            "type": "array",
            "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "required": ["case_id", "passage"],
                "properties": {
                    "case_id": {"type": "string", "minLength": 1, "maxLength": 200},
                    "passage": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}, "reason": _STR,
                },
            },
        },
    },
}

#: Rewriter and coldstart rewriter: the whole new body (and optionally a new description).
REWRITE: dict[str, Any] = {
    "type": "object",
    "required": ["body"],
    "properties": {
        "body": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
        "description": {"type": "string", "maxLength": 1024},
    },
}

#: Coldstart rewrite: the section as a procedure and the description the model writes for it.
COLDSTART_REWRITE: dict[str, Any] = {
    "type": "object",
    "required": ["body", "description"],
    "properties": {
        "body": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
        "description": {"type": "string", "minLength": 1, "maxLength": 1024},
    },
}

#: Case generator: new cases for policy sections no case covers yet.
GENERATED_CASES: dict[str, Any] = {
    "type": "object",
    "required": ["cases"],
    "properties": {
        "cases": {
            "type": "array",
            "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "required": ["input", "expected", "category", "evidence"],
                "properties": {
                    "input": {"type": "object"},
                    "expected": {},
                    "check": {"type": "object"},
                    "category": {"type": "string", "minLength": 1, "maxLength": 200},
                    "evidence": {"type": "array", "items": _STR, "minItems": 1, "maxItems": MAX_ITEMS},
                },
            },
        }
    },
}

#: LLM rubric check (judge).
#: Answer-key reader (`models.keys`): the requirements a reviewer's comment states, each a whole
#: sentence of it (`ingest/keys/answer_key_model.py` checks that), or none and why.
ANSWER_KEY: dict[str, Any] = {
    "type": "object",
    "required": ["requirements"],
    "properties": {
        "requirements": {
            "type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 2000}, "maxItems": 20,
        },
        "none": {"enum": ["", "link", "vague", "tone", "narrative", "empty"]},
        "unsure": {"type": "string", "maxLength": 500},
    },
}

RUBRIC_VERDICT: dict[str, Any] = {
    "type": "object",
    "required": ["pass", "reason"],
    "properties": {"pass": {"type": "boolean"}, "reason": _STR},
}

#: `frames adopt` with `models.coldstart`: a description for a skill that has none.
ADOPT_DESCRIPTION: dict[str, Any] = {
    "type": "object",
    "required": ["description"],
    "properties": {"description": {"type": "string", "minLength": 1, "maxLength": 1024}},
}
