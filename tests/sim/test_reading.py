"""The simulator's prompt readers agree with their defining patterns applied to the whole prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from frames_cli.executor.builtin import first_turn
from frames_cli.executor.catalog import Catalog
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.messages.prompts import Block, render
from frames_cli.sim import reading

# The definitions the readers implement (reading.py jumps to literals first, for speed).
CASE_ID = re.compile(r"^Case id: *(\S+) *$", re.MULTILINE)
BLOCK = re.compile(r"<skill((?: +[a-z_-]+=\"[^\"]*\")*)>\n?(.*?)\n?</skill>", re.DOTALL)
CATALOG = re.compile(r"^(?:- )?(\S+): ([a-z0-9]+(?:-[a-z0-9]+)*) — (.*)$", re.MULTILINE)


def json_after_defined(prompt: str, heading: str) -> object:
    match = re.search(rf"^{re.escape(heading)}:\s*\n```json\n(.*?)\n```", prompt, re.MULTILINE | re.DOTALL)
    try:
        return json.loads(match.group(1)) if match else None
    except ValueError:
        return None


def line_value_defined(prompt: str, label: str) -> str | None:
    match = re.search(rf"^{re.escape(label)}: *(.+)$", prompt, re.MULTILINE)
    return match.group(1).strip() if match else None


PROMPTS = [
    "",
    "Case id: c-1",
    "Case id: c-1\nCase id:   c-2  \nxCase id: c-3\nCase id: two words\n",
    "Intro Case id: c-9\nCase id:\nCase id: c-4\n\nCase id: \n",
    "Case id: first\n\n3 skills available:\n- s1a2b: baggage-rules — Bags: what is free.\ns9: refunds — x — y\n"
    "- sX: Not-A-Name — no\n-  s2: two-spaces — no\nnot a line — at all\n",
    '<skill id="s1" name="a">\nbody one\n</skill>\n<skill name="b" target="true">body\n\n</skill>'
    '<skill bad>skipped</skill><skill name="c">\n\n</skill><skill name="d">\n</skill><skill name=">" x="y">z</skill>',
    '<skill name="open">never closed\n<skill name="also">still open',
    '<skill name="outer">\n<skill name="inner">\ntext\n</skill>\n</skill>',
    # Labelled JSON fences and lines: mid-line labels, a broken fence before a good one, a label
    # whose fence never closes, regex characters in a label, an empty value.
    'Intro Failures:\n```json\n[1]\n```\nFailures:\n```json\n[2, \n```\nFailures:  \n\n```json\n[{"a": 3}]\n```\n'
    "Answer:\n```json\n\"yes\"\n```\nCategory: baggage \nCategory: other\n",
    "Blueprint:\n```json\n{}\nAnchor cases: []\nA.b (c):\n```json\n[0]\n```\nxCategory: no\nCategory:\n",
    "Failures:\n```json\n[1]\n\n```\nAnswer: \n```json\n{\"x\": [1,\n2]}\n```",
]
LABELS = ("Failures", "Answer", "Blueprint", "Anchor cases", "A.b (c)", "Category", "Case id")


@pytest.mark.parametrize("prompt", PROMPTS)
def test_readers_match_their_patterns(prompt):
    found = CASE_ID.findall(prompt)
    assert reading.case_id(prompt) == (found[-1] if found else None)
    expected = [(dict(re.findall(r'([a-z_-]+)="([^"]*)"', attrs)), text) for attrs, text in BLOCK.findall(prompt)]
    assert [(b.attrs, b.text) for b in reading.skill_blocks(prompt)] == expected
    assert reading.catalog(prompt) == CATALOG.findall(prompt)
    for label in LABELS:
        assert reading.json_after(prompt, label) == json_after_defined(prompt, label)
        assert reading.line_value(prompt, label) == line_value_defined(prompt, label)


def test_readers_on_a_real_executor_conversation():
    catalog = Catalog.of(SkillSet.from_dir(Path(__file__).parents[2] / "skills"))
    first = first_turn(catalog, "c-7", "Cancel my trip.", "JSON", 3)
    second = render("executor_answer", case_id="c-7",
                    skills=Block("\n\n".join(catalog.block(sid) for sid in list(catalog.ids)[:3])))
    prompt = "\n\n".join([first, '{"load": []}', second])
    assert reading.case_id(prompt) == CASE_ID.findall(prompt)[-1]
    assert [b.text for b in reading.skill_blocks(prompt)] == [text for _, text in BLOCK.findall(prompt)]
    assert reading.catalog(prompt) == CATALOG.findall(prompt) and len(reading.catalog(prompt)) > 1
