"""Sections that make a skill (issue 30): text with no rule or procedure joins a neighbour, names
read as the task, bodies read as prose without dead in-page links, and links to other policy
documents become `frames-references`."""

from __future__ import annotations

from frames_cli.coldstart.links import LinkIndex, Target, anchor, references
from frames_cli.coldstart.naming import assign_names, slug
from frames_cli.coldstart.prose import sentences
from frames_cli.coldstart.sectioning import cut_document
from frames_cli.coldstart.writer import verbatim_body
from frames_cli.formats.policy import parse_policy
from frames_cli.workspace.config import ColdstartConfig

# moving.md of the 18F handbook, shortened: an introduction pointing below, a "Policy links" list
# and a "Questions?" contact line whose Slack tag left an empty bullet.
MOVING = [
    "---", "title: Moving and changing your address", "---", "",
    "The instructions below will help guide you through how to initiate the moving", "process.", "",
    "## Short-term relocation", "", "If you are relocating for 120 days or less, you do not need to notify PeopleOps.",
    "",
    "## Change your Slack location", "", "We put our location after our names in Slack. To update it,",
    "[open your profile](https://slack.example/profile), click **Edit**, and update the letters after your last name.",
    "",
    "## Policy links", "", "- [GSA Telework and Remote Work Policy](https://gsa.example/telework)", "",
    "## Questions?", "", '- {% slack_channel "people-ops" %}',
    "- [TTS-PeopleOps@gsa.gov](mailto:TTS-PeopleOps@gsa.gov)",
]


def _cut(lines: list[str], file: str = "policies/moving.md", **cfg):
    doc = parse_policy(lines, file)
    chunks = cut_document(doc, ColdstartConfig(min_tokens=1, **cfg))
    return doc, chunks, assign_names(chunks)


def test_a_greeting_a_link_list_and_a_contact_line_join_a_neighbour_and_name_nothing() -> None:
    doc, chunks, names = _cut(MOVING)
    assert names == ["short-term-relocation", "change-slack-location"]
    # The introduction opens the first section; the contact line joins the section that names
    # PeopleOps; the link list, sharing no word with any, the section before it.
    assert [[(p.start, p.end) for p in c.pieces] for c in chunks] == [[(5, 6), (8, 10), (21, 24)], [(12, 15), (17, 19)]]
    assert [[p.heading[-1:] for p in c.asides] for c in chunks] == [[(), ("Questions?",)], [("Policy links",)]]
    body = verbatim_body(chunks[0])
    assert body.endswith("## Questions?\n\n- [TTS-PeopleOps@gsa.gov](mailto:TTS-PeopleOps@gsa.gov)\n"), (
        "the empty bullet is gone"
    )


def test_a_section_that_states_facts_or_data_stays_a_skill() -> None:
    # A data model (airline's "User") and a one-sentence answer are substance; a reference section stays.
    _, _, names = _cut(["# Air", "", "## Domain basic", "", "### User", "Each user has a profile containing:",
                        "- user id", "- email", "",
                        "## What if who is traveling changes?", "",
                        "A follow-up to the original approval email is sufficient."], max_tokens=20)
    assert names == ["domain-basic", "who-is-traveling-changes"]


def test_sentences_are_read_whole_over_line_breaks_and_abbreviations() -> None:
    lines = ["Choose the payment method, and upload a receipt only over $75 (this threshold is $25 for",
             "[local vouchers](#how-do-i-create-a-local-voucher)).", "",
             "The fiscal year must be listed (i.e. FY24) on the form. Done."]
    found = [s.text for s in sentences(list(enumerate(lines, 1)))]
    assert found == ["Choose the payment method, and upload a receipt only over $75 (this threshold is $25 for local "
                     "vouchers).",
                     "The fiscal year must be listed (i.e. FY24) on the form.", "Done."]


def test_names_read_as_the_task() -> None:
    assert slug("Which receipts must I keep?", 48) == "keep-receipts"
    assert slug("Who is my authorizing official and what is my budget?", 48) == "authorizing-official-and-budget"
    assert slug("How should I estimate my expenses", 48) == "estimate-expenses"
    assert slug("Change your Slack location", 48) == "change-slack-location"
    assert slug("Brief overview of vouchers", 48) == "vouchers"
    assert (
        slug("Know Your Customer (KYC) checks", 48) == "know-your-customer-checks"
    )  # a name's capitalised "Your" stays


def test_a_body_reads_as_prose_without_dead_in_page_links() -> None:
    lines = [
        "# Amendments", "", "## Overview", "", "Travel plans change, and the travel team is ready to",
        "rebook you: see [issues with reimbursement](#issues-with-reimbursement).", "", "- **[!]**",
        "  [Changes made at the airport](#changes-made-at-the-airport)",
        "- [Changes made before ticketing](#before-ticketing)", "",
        "1. Call the airline and ask for", "   its government desk.", "", "[_Having Trouble_](#having-trouble)", "",
        "```", "keep",
        "  as written", "```",
    ]
    _, chunks, _ = _cut(lines)
    body = verbatim_body(chunks[0])
    assert body == (
        "# Amendments\n\n## Overview\n\nTravel plans change, and the travel team is ready to rebook you: see issues "
        "with reimbursement.\n\n1. Call the airline and ask for its government desk.\n\n```\nkeep\n  as written\n```\n"
    )


def test_heading_anchors_are_the_site_generators() -> None:
    assert (
        anchor("Changes made prior to an authorization's approval in Concur")
        == "changes-made-prior-to-an-authorization-s-approval-in-concur"
    )
    assert (
        anchor("How can I get my travel approved to attend a training, or other \"IRL\" gathering\\*?")
        == "how-can-i-get-my-travel-approved-to-attend-a-training-or-other-irl-gathering"
    )


def test_links_to_other_policy_documents_become_references() -> None:
    faq = parse_policy(["---", "title: FAQ", "redirect_from:", "  - /travel-faq/", "---", "", "## Book lodging", "",
                        "Book hotels in Concur.", "",
                        "## Claim mileage", "", "Claim mileage on the voucher; [book lodging](#book-lodging) first."],
                        "policies/travel-guide-faq.md")
    guide = parse_policy(
        [
            "# Travel",
            "",
            "## Hotels",
            "",
            'Book [hotels]({% page "/travel-and-leave/travel-faq/#book-lodging" %}) two weeks before you travel.',
            "",
            "## Rules",
            "",
            "Every claim must follow the [whole FAQ](travel-guide-faq.md) and [the FTR](https://ecfr.example/ftr).",
        ],
        "policies/guide.md",
    )
    index = LinkIndex([faq, guide])
    assert index.resolve("policies/guide.md", "/travel-and-leave/travel-faq/#book-lodging") == Target(
        "policies/travel-guide-faq.md", 7
    )
    assert (
        index.resolve("policies/guide.md", "https://ecfr.example/ftr") is None
        and index.resolve("policies/guide.md", "/elsewhere/") is None
    )
    chunks = cut_document(faq, ColdstartConfig(min_tokens=1)) + cut_document(guide, ColdstartConfig(min_tokens=1))
    names = assign_names(chunks)
    assert names == ["book-lodging", "claim-mileage", "hotels", "travel-rules"]
    # An in-page link to another skill, a Liquid page link with an anchor, a relative link to a
    # whole document (its first skill); the outside world and a skill's own text name nothing.
    assert references(chunks, names, [faq, guide]) == [[], ["book-lodging"], ["book-lodging"], ["book-lodging"]]
