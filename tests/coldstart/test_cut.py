"""The deterministic cut and the names: exact coverage, splits, merges, unique valid names."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.coldstart.naming import assign_names, slug
from frames_cli.coldstart.sectioning import cut_document
from frames_cli.coldstart.writer import describe
from frames_cli.formats.policy import parse_policy, read_policy
from frames_cli.formats.skill import NAME_RE
from frames_cli.workspace.config import ColdstartConfig

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "policies"
DOCS = {
    "policies/airline.md": ROOT / "policies" / "airline.md",
    "policies/loan-review.md": FIXTURES / "loan-review.md",
    "policies/data-retention.txt": FIXTURES / "data-retention.txt",
    "policies/expenses.md": FIXTURES / "expenses.md",
}


def _covered_once(doc, chunks) -> bool:
    counts: dict[int, int] = {}
    for chunk in chunks:
        for piece in chunk.pieces:
            for no in range(piece.start, piece.end + 1):
                counts[no] = counts.get(no, 0) + 1
    content = {no for no, ln in enumerate(doc.lines, 1) if ln.strip()}
    return all(counts.get(no) == 1 for no in content) and set(counts) <= set(range(1, len(doc.lines) + 1))


@pytest.mark.parametrize("file", sorted(DOCS))
@pytest.mark.parametrize("cfg", [ColdstartConfig(), ColdstartConfig(max_lines=8, max_tokens=120, min_lines=2)], ids=["default", "tight"])
def test_every_content_line_in_exactly_one_chunk(file: str, cfg: ColdstartConfig) -> None:
    doc = read_policy(DOCS[file], file)
    chunks = cut_document(doc, cfg)
    assert _covered_once(doc, chunks)
    names = assign_names(chunks)
    assert len(set(names)) == len(names) and all(NAME_RE.match(n) and len(n) <= 64 for n in names)
    for chunk in chunks:
        text = describe(chunk)
        assert 0 < len(text) <= 1024 and "<" not in text and ">" not in text and "---" not in text


def test_airline_default_cut_is_one_skill_per_process() -> None:
    doc = read_policy(DOCS["policies/airline.md"], "policies/airline.md")
    chunks = cut_document(doc, ColdstartConfig())
    assert assign_names(chunks) == [
        "airline-agent-policy-general-rules",
        "domain-basic",
        "book-flight",
        "modify-flight",
        "cancel-flight",
        "refunds-and-compensation",
    ]
    assert [(p.start, p.end) for c in chunks for p in c.pieces] == [(1, 15), (17, 61), (63, 101), (103, 131), (133, 152), (154, 167)]
    assert chunks[0].kind == "general"


def test_long_sections_split_at_sub_headings_and_bare_heading_merges_into_first_child() -> None:
    doc = read_policy(DOCS["policies/airline.md"], "policies/airline.md")
    chunks = cut_document(doc, ColdstartConfig(max_lines=20, min_lines=3))
    by_name = dict(zip(assign_names(chunks), chunks))
    # "## Domain Basic" alone (1 content line) folds into "### User".
    assert [(p.heading[-1], p.start, p.end) for p in by_name["user"].pieces] == [("Domain Basic", 17, 17), ("User", 19, 31)]
    # "Book flight" has no sub-headings: split at paragraphs into parts of at most 20 content lines.
    parts = [n for n in by_name if n.startswith("book-flight-part-")]
    assert parts == ["book-flight-part-1", "book-flight-part-2"]
    assert all(by_name[n].content_lines <= 20 for n in parts)


def test_headingless_text_splits_into_named_parts() -> None:
    doc = read_policy(DOCS["policies/data-retention.txt"], "policies/data-retention.txt")
    chunks = cut_document(doc, ColdstartConfig(max_lines=10, min_lines=3))
    names = assign_names(chunks)
    assert names[0] == "data-retention-part-1" and len(names) >= 4
    assert all(c.content_lines <= 10 for c in chunks[:-1])
    assert "Data retention (part 1 of" in describe(chunks[0])


def test_over_long_paragraph_is_cut_before_list_items() -> None:
    lines = ["Intro line."] + [f"- item {i} rule text" for i in range(12)]
    doc = parse_policy(lines, "policies/list.txt")
    chunks = cut_document(doc, ColdstartConfig(max_lines=5, min_lines=1))
    starts = [c.pieces[0].start for c in chunks]
    assert starts == [1, 6, 11]
    assert all(doc.lines[s - 1].startswith("- ") for s in starts[1:])


def test_tiny_last_part_merges_into_previous() -> None:
    lines = ["Para one a.", "Para one b.", "Para one c.", "", "Para two a.", "Para two b.", "Para two c.", "", "Tail."]
    doc = parse_policy(lines, "policies/t.txt")
    chunks = cut_document(doc, ColdstartConfig(max_lines=3, min_lines=2))
    assert [[(p.start, p.end) for p in c.pieces] for c in chunks] == [[(1, 3)], [(5, 7), (9, 9)]]


def test_name_clashes_escalate_to_longer_heading_paths() -> None:
    a = parse_policy(["# Cards", "", "## Refunds", "r1", "r2", "r3", "## Fees", "f1", "f2", "f3"], "policies/cards.md")
    b = parse_policy(["# Loans", "", "## Refunds", "x1", "x2", "x3"], "policies/loans.md")
    cfg = ColdstartConfig(max_lines=4, min_lines=1)
    chunks = cut_document(a, cfg) + cut_document(b, cfg)
    assert assign_names(chunks) == ["cards-refunds", "fees", "loans-refunds"]


def test_slug() -> None:
    assert slug("Refunds & Compensation") == "refunds-compensation"
    assert slug("Überprüfung der Kündigung") == "uberprufung-der-kundigung"
    assert slug("？？") == "section"
    long = slug("word " * 30)
    assert len(long) <= 64 and not long.endswith("-") and NAME_RE.match(long)


def test_descriptions_say_what_and_when() -> None:
    described = {}
    for file in ("policies/expenses.md", "policies/loan-review.md", "policies/data-retention.txt"):
        doc = read_policy(DOCS[file], file)
        chunks = cut_document(doc, ColdstartConfig())
        described.update(zip(assign_names(chunks), map(describe, chunks)))
    # Setext heading lines are not the lead; the file name stands in for a missing title.
    assert described["travel"] == "Travel, from the Expenses policy: Book all flights and hotels through the travel portal. Use when a task involves travel."
    # Section numbers are left out; a sentence that opens a list ends with an ellipsis.
    assert described["eligibility"] == "Eligibility, from the Consumer Loan Review Policy: An applicant must … Use when a task involves eligibility."
    # Wrapped lines of a paragraph are joined before the first sentence is taken.
    assert described["data-retention"].startswith(
        "Data retention, from the Data retention policy: This notice describes how long the customer support team keeps each kind of record, and what it must do"
    )
    assert described["expenses-general-rules"] == (
        "General rules of the Expenses policy that apply to every task: Expense rules for all staff. Use for any task under this policy."
    )


def test_fenced_code_with_blank_lines_is_never_cut_apart() -> None:
    lines = ["Intro one.", "Intro two.", "", "```", "step 1", "", "step 2", "", "step 3", "```", "", "Outro one.", "Outro two."]
    doc = parse_policy(lines, "policies/code.md")
    chunks = cut_document(doc, ColdstartConfig(max_lines=4, min_lines=1))
    assert [[(p.start, p.end) for p in c.pieces] for c in chunks] == [[(1, 2)], [(4, 10)], [(12, 13)]]
