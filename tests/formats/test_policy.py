"""Policy documents: heading trees (ATX, setext, fenced code), titles, preambles and refused files."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.formats.policy import decode_policy, parse_policy, policy_files, read_policy, skip_reason, span_sha256

FIXTURES = Path(__file__).parents[1] / "fixtures" / "policies"


def _tree(section, out=None):
    out = [] if out is None else out
    out.append((" > ".join(section.path), section.level, section.start, section.own_end, section.end))
    for child in section.children:
        _tree(child, out)
    return out


def test_nested_headings_and_fenced_code() -> None:
    doc = read_policy(FIXTURES / "loan-review.md", "policies/loan-review.md")
    assert doc.title == "Consumer Loan Review Policy"
    tree = _tree(doc.root)
    assert tree[0] == ("Consumer Loan Review Policy", 1, 1, 8, 103)
    assert (
        "Consumer Loan Review Policy > 2. Assessment > 2.1 Income verification > 2.1.2 Self-employed applicants > "
        "Seasonal income",
        5,
        43,
        46,
        46,
    ) in tree
    # `# Credit check` inside the ``` block is not a heading.
    assert not any("Credit check" in row[0] for row in tree)
    credit = next(row for row in tree if row[0].endswith("2.3 Credit history"))
    assert credit[2:] == (61, 75, 75)


def test_setext_headings_and_preamble_without_title() -> None:
    doc = read_policy(FIXTURES / "expenses.md", "policies/expenses.md")
    assert doc.title == "Expenses" and doc.root.level == 0
    assert [(c.title, c.level, c.start, c.end) for c in doc.root.children] == [
        ("Travel", 1, 4, 18),
        ("Meals", 1, 19, 23),
        ("Claims", 1, 24, 28),
    ]
    assert doc.root.own_end == 3
    assert [c.title for c in doc.root.children[0].children] == ["Hotels"]


def test_plain_text_has_no_headings() -> None:
    doc = parse_policy(["# not a heading in .txt", "", "text"], "policies/notes.txt")
    assert doc.root.children == [] and doc.root.level == 0 and doc.title == "Notes"


def test_span_sha256_is_of_lines_joined_by_newline() -> None:
    import hashlib

    assert span_sha256(["a", "b", "c"], 2, 3) == hashlib.sha256(b"b\nc").hexdigest()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "p.md: empty policy document"),
        (b"  \n\n", "p.md: empty policy document"),
        (b"text\n\x89PNG\x00\x01",
         "p.md:2: binary file, not a policy document (policies/ holds Markdown or plain text)"),
        (b"ok\nbad \xe9t\xe9\n", "p.md:2: not UTF-8 text (byte 7)"),
        (b"x" * 101, "p.md: policy file is 101 bytes; the limit is 100 (split it into several documents)"),
    ],
)
def test_refused_files(data: bytes, message: str) -> None:
    with pytest.raises(InputError) as info:
        decode_policy(data, "p.md", max_bytes=100)
    assert str(info.value) == message


def test_companions_and_hidden_files_are_not_policy(tmp_path: Path) -> None:
    for name in ("a.md", "LICENSE", "LICENSE.tau2-bench", "SOURCE.md", "README.md", ".draft.md", "sub/b.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    assert [p.relative_to(tmp_path).as_posix() for p in policy_files(tmp_path)] == ["a.md", "sub/b.txt"]


def test_real_policies_with_companion_like_names_are_policy(tmp_path: Path) -> None:
    for name in ("Notice of Privacy Practices.md", "Source Code Policy.md", "Licensed Software Policy.md",
                 "LICENSE-MIT", "README.md", "SOURCE.md", "LICENSE.tau-bench"):
        (tmp_path / name).write_text("Text.\n")
    assert [p.name for p in policy_files(tmp_path)] == ["Licensed Software Policy.md", "Notice of Privacy Practices.md",
                                                        "Source Code Policy.md"]
    assert skip_reason(tmp_path / "LICENSE-MIT", tmp_path) == "companion file"


def test_front_matter_is_the_title_and_metadata_never_text() -> None:
    # A blank line inside the front matter must not turn its closing `---` into a setext heading.
    lines = ["---", "title: Get a travel card", "", "subtitle: \"Step 1b\"", "---", "",
             "Apply for the card before you travel."]
    doc = parse_policy(lines, "policies/card.md")
    assert doc.title == "Get a travel card" and doc.meta == {"title": "Get a travel card", "subtitle": "Step 1b"}
    assert doc.root.children == [] and doc.view[:5] == [""] * 5
    assert doc.content_lines(1, len(lines)) == 1
    # A `---` rule over ordinary text is no front matter.
    assert parse_policy(["---", "Just text", "---", "More"], "policies/x.md").meta == {}


def test_template_tags_comments_and_template_links_are_left_out_of_the_reading_view() -> None:
    lines = [
        '{% include "step-indicator.html"',
        "steps: travel-steps %}",
        "<!-- prettier-ignore -->",
        '[Next to Booking travel > ]({% page "/book" %})<br>',
        'See [your profile]({% page "/profile" %}) and [Concur](https://travel.gsa.gov).',
        '{% image "_img/a.png" "a screen" %}',
        "## <em>Book</em> lodging",
        "<h3>Hotel taxes</h3>",
        "Claim taxes {{ site.rate }}separately.",
    ]
    doc = parse_policy(lines, "policies/t.md")
    assert doc.view == ["", "", "", "", "See your profile and [Concur](https://travel.gsa.gov).", "",
                        "## <em>Book</em> lodging", "### Hotel taxes", "Claim taxes separately."]
    assert [s.title for s in doc.root.children] == ["Book lodging"] and doc.root.children[0].children[
        0
    ].title == "Hotel taxes"
    # Back-links still hash the file's own lines.
    assert doc.sha256(1, 2) == span_sha256(lines, 1, 2)


@pytest.mark.parametrize("separator", ["\f", "\u2028", "\u2029", "\r"])
def test_line_numbers_match_grep_whatever_separators_a_line_holds(separator: str) -> None:
    data = f"# Policy\n\nPage one.{separator}Still line three.\nLine four.\r\nLine five.\n".encode()
    assert decode_policy(data, "policies/p.md") == ["# Policy", "", f"Page one.{separator}Still line three.",
                                                    "Line four.", "Line five."]


def test_navigation_link_wrapped_over_two_lines_is_left_out() -> None:
    # 18F's "[Jump to Step 3: What to Consider While\nTraveling]({% page ... %})" became a
    # description's words and two key terms ("jump", "step").
    lines = ["[Jump to Step 3: What to Consider While", 'Traveling]({% page "/travel" %})', "", "Plans change.", "```",
             "[Back to top](#top)", "```"]
    doc = parse_policy(lines, "policies/t.md")
    assert doc.view == ["", "", "", "Plans change.", "```", "[Back to top](#top)", "```"]


@pytest.mark.parametrize("name", ["fees\nevil.md", "fees\x1b[2J.md", "fees\u202e.md"])
def test_a_file_name_that_would_forge_a_line_is_refused_shown_escaped(tmp_path: Path, name: str) -> None:
    # Issue 29: a newline in a policy's name gave a traceback, and coldstart wrote a skill whose
    # back-link no later command could read.
    path = tmp_path / "policies" / name
    path.parent.mkdir()
    path.write_text("# Fees\n\nEach bag costs 50 dollars.\n")
    with pytest.raises(InputError) as info:
        read_policy(path, f"policies/{name}")
    assert "file name" in info.value.message and "\n" not in str(info.value) and "\x1b" not in str(info.value)


def test_an_html_heading_written_over_several_lines_is_a_heading() -> None:
    # Issue 29: USWDS accordion headings (`<h3>` with a `<button>` on lines of their own) were text.
    lines = ["# Rights", "", '<h3 class="usa-accordion__heading">',
             '  <button type="button" class="usa-accordion__button" aria-expanded="false" aria-controls="a1">',
             "    First Amendment", "  </button>", "</h3>", '<div id="a1" class="usa-accordion__content">',
             "<p>Speech is free.</p>", "</div>"]
    doc = parse_policy(lines, "policies/p.md")
    assert _tree(doc.root)[1:] == [("Rights > First Amendment", 3, 3, 10, 10)]
    assert doc.view[3:7] == ["", "", "", ""]
