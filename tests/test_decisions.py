"""docs/decisions/ keeps its convention: numbered records with a Status and a Date, an index row for
each, and a record that a later one supersedes or amends linked both ways."""

import re
from pathlib import Path

DECISIONS = Path(__file__).resolve().parents[1] / "docs" / "decisions"
LINK = r"\[(\d{4})\]\(\1-[a-z0-9-]+\.md\)"


def _records() -> dict[str, tuple[str, str]]:
    """Number -> (file name, text) of every record."""
    return {path.name[:4]: (path.name, path.read_text()) for path in sorted(DECISIONS.glob("[0-9]*.md"))}


def _field(text: str, name: str) -> str:
    found = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    assert found, f"no {name}: line"
    return found.group(1)


def _successors(text: str) -> list[str]:
    return re.findall(LINK, _field(text, "Status"))


def test_records_are_numbered_in_order_and_open_with_title_status_and_date() -> None:
    records = _records()
    assert list(records) == [f"{i:04d}" for i in range(1, len(records) + 1)]
    for number, (name, text) in records.items():
        assert re.fullmatch(rf"{number}-[a-z0-9]+(-[a-z0-9]+)*\.md", name)
        assert text.startswith(f"# {number}. "), name
        assert re.match(r"(Accepted|Amended by \[|Superseded by \[)", _field(text, "Status")), name
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", _field(text, "Date")), name


def test_a_superseded_or_amended_record_and_its_successor_name_each_other() -> None:
    records = _records()
    for number, (name, text) in records.items():
        status = _field(text, "Status")
        if status.startswith("Superseded"):
            assert len(_successors(text)) == 1, name
        for later in _successors(text):
            assert later > number, name
            verb = "Supersedes" if status.startswith("Superseded") else "Amends"
            assert re.search(rf"^{verb} \[{number}\]", records[later][1], re.MULTILINE), (name, later)
        for verb, earlier in re.findall(rf"^(Supersedes|Amends) {LINK}", text, re.MULTILINE):
            assert number in _successors(records[earlier][1]), (name, earlier)
            assert _field(records[earlier][1], "Status").startswith(
                "Superseded" if verb == "Supersedes" else "Amended"), (name, earlier)


def test_the_index_lists_every_record_with_its_title_and_status() -> None:
    index = (DECISIONS / "README.md").read_text()
    for number, (name, text) in _records().items():
        row = re.search(rf"^\| {number} \| \[(.*)\]\({re.escape(name)}\) \| (.*?) \|", index, re.MULTILINE)
        assert row, f"{name} has no row in docs/decisions/README.md"
        title = text.split("\n", 1)[0].removeprefix(f"# {number}. ")
        assert row.group(1).replace("\\|", "|") == title, name
        kind = _field(text, "Status").split(" [", 1)[0]
        assert row.group(2) == " ".join([kind, ", ".join(_successors(text))]).strip(), name
