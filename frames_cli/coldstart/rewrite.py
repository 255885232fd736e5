"""The model path of coldstart: each section rewritten into a procedure, checked, retried with the errors.

The back-links never come from the model: they are computed from the chunk, so a rewrite cannot
change which policy text a skill answers for. A rewrite that still fails its checks after
`coldstart.rewrite_retries` retries is dropped and the verbatim text is written instead, with the
reason reported (and recorded nowhere in the skill, so the next run tries again).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from frames_cli.coldstart.lint import cut_word, defects
from frames_cli.coldstart.neighbours import Neighbour
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.coldstart.writer import make_skill
from frames_cli.formats.protected import scan_protected
from frames_cli.formats.skill import Skill
from frames_cli.formats.skill_checks import skill_problems
from frames_cli.sanitize import clean

if TYPE_CHECKING:
    from frames_cli.evaluation.runner import Progress
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.workspace.config import FramesConfig

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
# What a description must not carry: template tags, HTML comments, links, table rows, front matter.
_DESCRIPTION_MARKUP = re.compile(
    r"\{[%{#]|[%}#]\}|<!--|\]\(|(?:^|\s)\|\s|\|\s*:?-{2,}|^\s*(?:title|subtitle|layout):", re.MULTILINE
)
#: Fewest words a description has: a heading word alone says nothing about when to use a skill.
MIN_DESCRIPTION_WORDS = 6
#: Fewest content words of the section a description shares: it is built from the section's terms.
MIN_SHARED_TERMS = 2
#: Characters the prompt asks a description to stay within, and the most accepted (a model that
#: overshoots a little is not sent back for it; one that writes a paragraph is). The catalog is sent
#: with every executor call, so these set most of its cost: at 250 a model wrote 225 characters on
#: average (67.5 catalog tokens per skill on 18F); docs/decisions/0098 has the measurements.
DESCRIPTION_CHARS, MAX_MODEL_DESCRIPTION = 180, 250


def numbers(text: str) -> list[str]:
    """The distinct numbers written in `text` ("5", "24", "15:00:00", "2024-05-15" as 2024, 05, 15,
    "(877) 472-6716" as 877, 472, 6716: a body that writes it "877-472-6716" keeps it)."""
    return list(dict.fromkeys(_NUMBER.findall(text)))


def check_rewrite(source: str, answer: dict[str, Any], max_body_lines: int) -> list[str]:
    """Problems of a model's REWRITE answer for the policy text `source` (empty when acceptable).

    Checks: a non-empty body within `max_body_lines` lines, every number of the source still
    written in the body (a cheap, checkable proxy for "keeps every rule and number"), no protected
    region markers, and a description as `check_description` has it.
    """
    body = str(answer.get("body") or "")
    problems = []
    if not body.strip():
        problems.append("the body is empty")
    lines = len(body.splitlines())
    if lines > max_body_lines:
        problems.append(f"the body has {lines} lines; at most {max_body_lines} are allowed")
    missing = [n for n in numbers(source) if n not in numbers(body)]
    if missing:
        problems.append(f"the body drops these numbers of the policy text: {', '.join(missing)}")
    regions, bad = scan_protected(body)
    if regions or bad or "frames:protected" in body:
        problems.append("the body must not contain `<!-- frames:protected -->` markers")
    return problems + check_description(source, answer.get("description"))


def check_description(source: str, description: object) -> list[str]:
    """Problems of a model's description for the policy text `source` (empty when acceptable).

    Checks: 1 to MAX_MODEL_DESCRIPTION characters (the prompt asks for DESCRIPTION_CHARS: the
    catalog is sent with every executor call); no `<`, `>` or `---` (the spec and the reference
    validator); no template tags, HTML comments, Markdown links or table rows; no word list or cut
    word (`lint.defects`); at least MIN_DESCRIPTION_WORDS words; at least MIN_SHARED_TERMS content
    words (`words.tokens`) of the section, so it says what this section decides.
    """
    from frames_cli.words import tokens, word_count

    text = str(description or "")
    if not text.strip():
        return ["the description is missing: say what the skill decides and when to use it"]
    problems = []
    if len(text) > MAX_MODEL_DESCRIPTION:
        problems.append(
            f"the description has {len(text)} characters; write one or two sentences of at most {DESCRIPTION_CHARS}"
        )
    flat = " ".join(text.split())
    for defect in defects(flat):
        where = f" ({cut_word(flat)})" if defect == "cut word" else ""
        problems.append(f"the description holds a {defect}{where}: write plain, whole sentences")
    if any(c in text for c in "<>") or "---" in text:
        problems.append("the description must not contain `<`, `>` or `---`")
    if _DESCRIPTION_MARKUP.search(text):
        problems.append(
            "the description must be plain sentences: no template tags, HTML comments, links, table rows or front "
            "matter"
        )
    if word_count(text) < MIN_DESCRIPTION_WORDS:
        problems.append(
            f"the description must be a sentence of at least {MIN_DESCRIPTION_WORDS} words saying what the skill "
            "decides and when to use it"
        )
    shared = set(tokens(text)) & set(tokens(source))
    if len(shared) < MIN_SHARED_TERMS:
        problems.append(
            f"the description must use the section's own terms (it shares {len(shared)} content words with it; at "
            f"least {MIN_SHARED_TERMS})"
        )
    return problems


def rule_text(section: str) -> str:
    """The policy text a rewrite must keep: `section` as the prompt shows it (`shown_section`: the
    verbatim body, `writer.verbatim_body`) without headings (they become the name). Not the file's
    lines nor `Chunk.text`: a number the prompt never shows cannot be demanded, or a model could
    only meet the check by inventing it. The body leaves out template tags (18F's `{% image
    "_img/travel/11-book-hotel-now.png" ... %}`, decision 0066) and tables of contents of in-page
    links ("[... (usually within 4-72 hours of departure)](#changes-made-before-...)", decision
    0100). Numbers the prompt shows, the digits of a link's address included, are still required."""
    return "\n".join(line for line in section.splitlines() if not line.lstrip().startswith("#"))


def shown_section(skill: Skill) -> str:
    """The policy text the rewrite prompt shows for the verbatim `skill`: its body."""
    return skill.body.rstrip("\n")


def _lines_attr(chunk: Chunk) -> str:
    return ",".join(f"{p.start}-{p.end}" for p in chunk.pieces)


class ModelRewriter:
    """Rewrites verbatim coldstart skills with the model of role `coldstart` (a `base.Rewriter`).

    Args:
        client: the model layer (cache, retries, ledger and audit live there).
        config: settings; `models.coldstart` names the model, `coldstart.rewrite_retries` bounds the
            retries with validator errors, `evolution.max_body_lines` bounds the body.
        progress: called with (sections settled, sections to rewrite) as each one settles; None = quiet.
    """

    def __init__(self, client: ModelClient, config: FramesConfig, progress: Progress | None = None):
        self.client = client
        self.config = config
        self.progress = progress
        self.mode = f"model {config.models.coldstart}"

    def _request(self, chunk: Chunk, skill: Skill, errors: list[str], near: list[Neighbour]) -> Any:
        from frames_cli.llm.messages.prompts import render
        from frames_cli.llm.messages.schemas import COLDSTART_REWRITE
        from frames_cli.llm.messages.types import ChatRequest

        feedback = ""
        if errors:
            feedback = (
                "\nYour previous answer was rejected:\n"
                + "\n".join(f"- {e}" for e in errors)
                + "\nFix these problems and answer again.\n"
            )
        prompt = render(
            "coldstart_rewrite",
            skill_name=skill.name,
            description=skill.description,
            file=chunk.doc.file,
            lines=_lines_attr(chunk),
            heading=" > ".join(chunk.heading),
            section=shown_section(skill),
            neighbours="\n".join(n.line() for n in near) or "(none)",
            errors=feedback,
            description_chars=DESCRIPTION_CHARS,
        )
        return ChatRequest(
            role="coldstart", messages=[{"role": "user", "content": prompt}], schema=COLDSTART_REWRITE, tag=skill.name
        )

    def __call__(
        self, items: list[tuple[Chunk, Skill]], neighbours: dict[str, list[Neighbour]] | None = None
    ) -> list[tuple[Skill, str | None]]:
        """Rewrite every (chunk, verbatim skill); all first attempts go out as one concurrent batch,
        then each retry round batches the rejected ones again. `progress` hears of each section
        as it settles: rewritten, or rejected for the last time. Each prompt lists the skill's
        `neighbours` (name, file, heading), so its description can set it apart from them."""
        neighbours = neighbours or {}
        results: list[tuple[Skill, str | None]] = [(skill, "not attempted") for _, skill in items]
        errors: dict[int, list[str]] = {i: [] for i in range(len(items))}
        limit = self.config.evolution.max_body_lines
        settled = 0

        async def attempt(i: int, final: bool) -> bool:
            """One try at section `i`; True when the answer was rejected."""
            nonlocal settled
            chunk, verbatim = items[i]
            reply = await self.client.achat(
                self._request(chunk, verbatim, errors[i], neighbours.get(verbatim.name, []))
            )
            found = (
                [f"the model call failed: {reply.error}"] if not reply.ok
                else check_rewrite(rule_text(shown_section(verbatim)), reply.data, limit)
            )
            if not found:
                # Model text: control, bidi and zero-width characters never reach a skill body.
                description = clean(reply.data.get("description") or verbatim.description)
                body = clean(reply.data["body"])
                body = body if body.endswith("\n") else body + "\n"
                rewritten = make_skill(
                    verbatim.name, chunk, body, " ".join(description.split()), self.mode, verbatim.references
                )
                # Whatever `frames validate` would refuse (a front-matter block in the body, ...) is refused here.
                found = [p.message for p in skill_problems(rewritten, folder=verbatim.name) if p.severity == "error"]
            if found:
                errors[i] = found
                results[i] = (verbatim, "; ".join(found))
            else:
                results[i] = (rewritten, None)
            if self.progress and (final or not found):
                settled += 1
                self.progress(settled, len(items))
            return bool(found)

        pending = list(range(len(items)))
        last = self.config.coldstart.rewrite_retries
        for round_no in range(last + 1):
            if not pending:
                break
            # gather, not chat_many: a reply is checked (and shown in `progress`) as soon as it comes.
            rejected = self.client.gather(functools.partial(attempt, final=round_no == last), pending)
            pending = [i for i, again in zip(pending, rejected) if again]
        return results
