"""The rewrite's number check (`coldstart.rewrite.check_rewrite`) demands the numbers of the section as
the prompt shows it: none of text the prompt leaves out (a table of contents of in-page links);
every amount, day, time, date, percentage, phone number and link address it shows (decision 0100)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from frames_cli.coldstart.rewrite import ModelRewriter, check_rewrite, numbers, rule_text, shown_section
from frames_cli.coldstart.sectioning import Chunk, cut_document
from frames_cli.coldstart.writer import VERBATIM, make_skill, verbatim_body
from frames_cli.formats.policy import parse_policy
from frames_cli.llm.messages.types import ChatReply
from frames_cli.workspace.config import ColdstartConfig, FramesConfig

F18 = Path(__file__).resolve().parents[2] / "bench" / "data" / "catalog_choice" / "18f-travel"
DESCRIPTION = "Decides the refund: how much is paid back and within how many hours of the request it is paid."

# The body a large language model wrote for 18F's "Changes made at the airport or train station"
# when answering the rewrite prompt (bench/data/catalog_choice/18f-travel.spool-answers.jsonl.xz).
AIRPORT_BODY = """\
1. Confirm the change is happening while the traveler is at the airport or train station.
2. First, work with the airline the original ticket is booked with; it can generally reschedule the traveler on \
another flight.
   - For possibly expedited service, call the airline and ask to speak with its government travel team.
3. Only if the airline's options won't work with the traveler's schedule: call AdTrav at (877) 472-6716. Before \
doing so, weigh:
   - the $35 fee for using AdTrav, and that flights on other airlines may be more expensive and could strain the \
project's or unit's budget; against
   - the value of the traveler's time: time involuntarily delayed counts as work time (billable time if the travel \
is for a billable project), and travel comp time may be claimed for delays that cause arrival home after business \
hours.
4. Whichever was used (airline or AdTrav), make note of any difference in price.
5. Take no further action in Concur until after the traveler returns.
"""


def _chunks(name: str) -> list[Chunk]:
    path = F18 / name
    return cut_document(parse_policy(path.read_text(encoding="utf-8").splitlines(), f"policies/{name}"),
                        ColdstartConfig())


def _airport() -> Chunk:
    (chunk,) = [c for c in _chunks("travel-guide-a-amended-authorizations.md")
                if c.heading[-1] == "Changes made at the airport or train station"]
    return chunk


class _Client:
    """Answers every rewrite request with `answer` and keeps the prompts it was sent."""

    def __init__(self, answer: dict[str, Any]):
        self.answer = answer
        self.prompts: list[str] = []

    async def achat(self, request: Any) -> ChatReply:
        self.prompts.append(request.messages[0]["content"])
        return ChatReply(request, text="", data=self.answer)

    def gather(self, fn: Any, items: list[int]) -> list[Any]:
        async def run() -> list[Any]:
            return await asyncio.gather(*(fn(item) for item in items))

        return asyncio.run(run())


def _rewrite(chunk: Chunk, body: str) -> tuple[Any, str | None, _Client]:
    verbatim = make_skill("s", chunk, verbatim_body(chunk), "The verbatim description of the section.", VERBATIM)
    client = _Client({"body": body, "description": "Says how to change a trip at the airport or train station: "
                                                   "rebook with the airline first, else AdTrav for a $35 fee."})
    ((skill, error),) = ModelRewriter(client, FramesConfig())([(chunk, verbatim)])  # type: ignore[arg-type]
    return skill, error, client


def test_a_table_of_contents_the_prompt_leaves_out_demands_no_number() -> None:
    # The section's chunk starts at the page's list of in-page links, one of which reads "(usually
    # within 4-72 hours of departure)". The body (and so the prompt) leaves such a list out; the
    # check demanded its 72 and refused this answer twice, so the skill stayed verbatim.
    chunk = _airport()
    assert "4-72 hours" in "\n".join(chunk.text(p) for p in chunk.pieces)
    skill, error, client = _rewrite(chunk, AIRPORT_BODY)
    assert error is None and skill.metadata["frames-coldstart"] == "model None"
    assert "4-72" not in client.prompts[0] and "(877) 472-6716" in client.prompts[0]
    # The same answer without the AdTrav fee is refused for it, at once and on each retry.
    skill, error, client = _rewrite(chunk, AIRPORT_BODY.replace("the $35 fee", "the fee"))
    assert error == "the body drops these numbers of the policy text: 35"
    assert skill.metadata["frames-coldstart"] == VERBATIM and len(client.prompts) == 3


def test_every_number_demanded_is_in_the_prompt() -> None:
    """Over every section of the 18F policies: the numbers a body without any is refused for are
    exactly those of the prompt's policy text, headings left out."""
    checked = 0
    for path in sorted(F18.glob("*.md")):
        if path.name in ("LICENSE.md", "SOURCE.md"):
            continue
        for chunk in _chunks(path.name):
            _, error, client = _rewrite(chunk, "A body with no number.\n")
            (shown,) = re.findall(r"<policy [^\n]*>\n(.*)\n</policy>", client.prompts[0], re.DOTALL)
            assert shown == shown_section(make_skill("s", chunk, verbatim_body(chunk), "d", VERBATIM))
            in_prompt = numbers("\n".join(line for line in shown.splitlines() if not line.startswith("#")))
            found = re.search(r"the body drops these numbers of the policy text: ([^;]*)", error or "")
            assert (found.group(1).split(", ") if found else []) == in_prompt, chunk.heading
            checked += 1
    assert checked >= 65


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("$25 within 24 hours, by 15:00 on 2024-05-15, 10% or 1,000.50 USD",
         ["25", "24", "15:00", "2024", "05", "15", "10", "1,000.50"]),
        ("call AdTrav at (877) 472-6716", ["877", "472", "6716"]),
        # A link's address the prompt shows is text the body must keep (decision 0100).
        ("[Confused by error messages?](https://docs.google.com/document/d/1zD020XAXRIpuXPKgY0zadLBNJmBaRj_29/edit)",
         ["1", "020", "0", "29"]),
    ],
)
def test_numbers_are_every_run_of_digits_written(text: str, found: list[str]) -> None:
    assert numbers(text) == found


def test_a_body_dropping_a_real_number_is_still_refused() -> None:
    source = rule_text("# Refunds\n\nRefund $25 within 24 hours; call (877) 472-6716 or see the "
                       "[refund form](https://example.gov/forms/77).\n")
    whole = {"body": "1. Refund $25 within 24 hours.\n2. For questions call 877-472-6716 or see the [refund form]"
                     "(https://example.gov/forms/77).\n", "description": DESCRIPTION}
    assert check_rewrite(source, whole, 500) == []
    for body, dropped in (
        ("1. Refund within 24 hours.\n2. Call (877) 472-6716, see https://example.gov/forms/77.\n", "25"),
        ("1. Refund $25 within a day.\n2. Call (877) 472-6716, see https://example.gov/forms/77.\n", "24"),
        ("1. Refund $25 within 24 hours.\n2. Call (877) 472-6715, see https://example.gov/forms/77.\n", "6716"),
        ("1. Refund $25 within 24 hours.\n2. Call (877) 472-6716.\n", "77"),
    ):
        assert check_rewrite(source, {"body": body, "description": DESCRIPTION}, 500) == [
            f"the body drops these numbers of the policy text: {dropped}"
        ], body
