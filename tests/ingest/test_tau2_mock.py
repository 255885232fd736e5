"""`frames ingest tau2` on a database of another shape (issue 29: τ²'s mock domain traced back).

τ²'s mock domain keeps tasks, not reservations, and names its users with a string; given as the
airline database it raised AttributeError. It is now a located error at the database file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.ingest.tau2.converter import Tau2Converter

TASK = {
    "id": "create_task_1",
    "description": {"purpose": "Test creating a task"},
    "user_scenario": {"instructions": {"domain": "mock",
                                       "reason_for_call": "You want to create a task called 'Important Meeting'.",
                                       "known_info": "Your user id is user_1.",
                                       "task_instructions": "Ask the agent to create it."}},
    "evaluation_criteria": {"actions": [{"action_id": "a1", "name": "create_task",
                                         "arguments": {"user_id": "user_1", "title": "Important Meeting"}}]},
}
MOCK_DB = {
    "tasks": {"task_1": {"task_id": "task_1", "title": "Test task", "status": "pending"}},
    "users": {"user_1": {"user_id": "user_1", "name": "Test User", "tasks": ["task_1"]}},
}


@pytest.mark.parametrize(("db", "domain", "fragment"), [
    (MOCK_DB, "airline", "holds no `reservations` table"),
    ({**MOCK_DB, "reservations": {"R1": {"user_id": "user_1"}}}, "airline",
     "user 'user_1' is not an object with a first and last name"),
    ({**MOCK_DB, "orders": {"#W1": "not an object"}}, "retail", "record '#W1' of `orders` is not an object"),
])
def test_a_database_of_another_domain_is_a_located_error(tmp_path: Path, db: dict, domain: str, fragment: str) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([TASK]))
    (tmp_path / "db.json").write_text(json.dumps(db))
    with pytest.raises(InputError) as info:
        Tau2Converter(tmp_path / "tasks.json", tmp_path / "db.json", domain=domain).convert()
    assert fragment in info.value.message and info.value.location.path == tmp_path / "db.json"


def test_the_mock_domain_itself_is_named_as_unknown(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([TASK]))
    (tmp_path / "db.json").write_text(json.dumps(MOCK_DB))
    converter = Tau2Converter(tmp_path / "tasks.json", tmp_path / "db.json")
    assert converter.convert() == [] and "unknown tau2 domain 'mock'" in converter.problems[0].message
