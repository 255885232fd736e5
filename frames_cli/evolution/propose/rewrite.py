"""Guarded rewriting: one rewriter call per blueprint skill, validated, retried with the errors, else dropped."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.errors import FramesError, InputError
from frames_cli.evolution.propose.consensus import Blueprint
from frames_cli.evolution.propose.diagnose import SKILL_NAME
from frames_cli.evolution.propose.prompting import REWRITE_FORMAT, json_block, skill_block
from frames_cli.evolution.propose.rewrite_errors import RewriteError, duplicate_errors, nul_errors, protected_errors
from frames_cli.sanitize import clean, escape_tags, one_line, structure_tags
from frames_cli.words import word_count

if TYPE_CHECKING:
    from frames_cli.evolution.propose.guards import RewriteGuard
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill import Skill
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.llm.messages.prompts import Block

#: Fewest words of a description a rewriter writes: "x" or "Refunds." tells an agent nothing about
#: when to load the skill (the catalog shows only name and description).
MIN_DESCRIPTION_WORDS = 3


@dataclass(frozen=True)
class RewriteLimits:
    """What a rewrite may produce. `max_body_lines` from `evolution.max_body_lines`; `retries` from
    `evolution.rewrite_retries` (extra attempts after the first); `duplicate_threshold` from
    `evolution.duplicate_threshold` (see `evolution.rules.duplicate_pairs`); `policy`: the base
    commit's policy sentences by section (`evolution.policy_sentences.policy_sections`): two that
    one section holds side by side are never a duplicate of each other."""

    max_body_lines: int
    retries: int
    duplicate_threshold: float = 0.4
    policy: Mapping[str, frozenset[str]] = field(default_factory=dict)


@dataclass
class RewriteOutcome:
    """The result of rewriting one blueprint skill.

    Attributes:
        skill: the blueprint's skill name.
        skill_text: the validated new SKILL.md text, or None when the change was dropped.
        attempts: rewriter calls made (1 + retries used).
        errors: per failed attempt, the validator's (or the call's) error lines.
        policy_changes: the policy sentences the accepted rewrite removed or changed, each as
            `policy_keeper.PolicyChange.to_json()` with the blueprint change that asked (usually none).
    """

    skill: str
    skill_text: str | None = None
    attempts: int = 0
    errors: list[list[str]] = field(default_factory=list)
    policy_changes: list[dict] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        """True when a rewrite passed validation (`skill_text` is set)."""
        return self.skill_text is not None

    def to_json(self) -> dict:
        """Plain JSON for the run state."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> RewriteOutcome:
        """Inverse of `to_json`."""
        return cls(**obj)


def skill_path(name: str) -> str:
    """Repository path of a skill's SKILL.md; `name` must already satisfy the Agent Skills rule."""
    return f"skills/{name}/SKILL.md"


def validate_rewrite(
    original: Skill | None, name: str, answer: Mapping[str, Any], limits: RewriteLimits, fallback_description: str = ""
) -> tuple[str | None, list[RewriteError]]:
    """Check one rewriter answer ({"body", "description"?}) against everything a rewrite must keep.

    Only the body and the description can come from the answer; the name, the metadata (back-links,
    tags, references) and the other front-matter keys are copied from `original`, and the result is
    rendered and parsed back, so a body that smuggles front matter or a second skill fails here.

    Checks: no NUL, no new prompt structure tag (`</skill>`), format (renders, parses back to the
    same name, metadata and body), body size, protected regions byte-identical (same texts, same
    order; a new skill may not create any), description length and characters, and no credential
    (what the audit log's Redactor would remove). Other control, bidirectional and zero-width
    characters are removed from the body and description (`sanitize.clean`), and blank lines
    before the body's first line. A description the answer writes holds at least
    MIN_DESCRIPTION_WORDS words. No front-matter block in the body (`skill_checks`). No rule stated
    twice: the body may not hold more sentences that repeat an earlier one's rule than the parent's
    body held (so near-alike lines the policy already had, such as a fee table, never count). An
    omitted or empty description keeps the current one (a new skill's: the blueprint's).

    Args:
        original: the parent's skill, or None for a new skill named `name`.
        fallback_description: a new skill's description when the answer gives none.

    Returns:
        (SKILL.md text, []) when valid, else (None, the errors, in the order of the checks above).
    """
    from frames_cli.formats.skill import Skill
    from frames_cli.formats.skill_checks import skill_problems
    from frames_cli.llm.store.audit import Redactor

    file = skill_path(name)
    errors = nul_errors(answer, file)
    # Model text: control, bidi and zero-width characters go before anything is compared or kept;
    # blank lines before the first line of text are not part of a body (a parsed body has none).
    body = re.sub(r"\A(?:[ \t]*\n)+", "", clean(answer["body"]))
    body = body if body.endswith("\n") else body + "\n"
    written = " ".join(clean(answer.get("description") or "").split())
    description = written or (original.description if original else fallback_description).strip()
    if (
        written and written != (original.description if original else "")
        and word_count(written) < MIN_DESCRIPTION_WORDS
    ):
        errors.append(RewriteError(
            "description",
            f"the description {written!r} says nothing: write a sentence of at least {MIN_DESCRIPTION_WORDS} words on "
            "what the skill does and when to use it, or leave it out to keep the current one",
            file, text=written,
        ))
    tags = structure_tags(body)
    if len(tags) > len(structure_tags(original.body if original else "")):
        errors.append(RewriteError(
            "prompt-tag", f"the body holds the prompt tag `{tags[0]}`; a skill is Markdown, not prompt markup", file,
            text=tags[0],
        ))
    lines = body.count("\n")
    if lines > limits.max_body_lines:
        errors.append(
            RewriteError("too-long", f"body has {lines} lines; at most {limits.max_body_lines} are allowed", file)
        )
    # A body over the limit is refused already: its repeats are not looked for (the check is
    # near-linear, but a hostile answer can be as long as the schema allows).
    if lines <= limits.max_body_lines:
        errors += duplicate_errors(body, original, limits.duplicate_threshold, limits.policy, file)
    errors += protected_errors(body, original, file)
    if original is not None:
        candidate = dataclasses.replace(original, body=body, description=description)
    else:
        candidate = Skill(name=name, description=description, body=body, metadata={})
    path = candidate.path or Path(skill_path(name))
    errors += [
        RewriteError("spec", p.message, file) for p in skill_problems(candidate, folder=name) if p.severity == "error"
    ]
    redact = Redactor()
    if redact(body) != body or redact(description) != description:
        # Skills are committed and pushed; a credential echoed by the model must never land there.
        errors.append(RewriteError(
            "credential", "the skill would contain an API key or other credential; leave secrets out of skills", file
        ))
    if errors:
        return None, errors
    return _round_trip(candidate, name, original, path)


def _round_trip(
    candidate: Skill, name: str, original: Skill | None, path: Path
) -> tuple[str | None, list[RewriteError]]:
    """(SKILL.md text of `candidate`, []) when it parses back to `name` and the same metadata, body and
    description, else (None, what changed)."""
    from frames_cli.formats.skill_file import parse_skill, render_skill

    file = skill_path(name)
    text = render_skill(candidate)
    try:
        parsed = parse_skill(text, path)
    except InputError as exc:
        return None, [RewriteError("round-trip", f"the rewritten skill is not a valid SKILL.md: {exc.message}", file)]
    found = []
    if parsed.name != name:
        found.append(f"name changed from {name!r} to {parsed.name!r}")
    if parsed.metadata != candidate.metadata or (original is not None and parsed.backlinks != original.backlinks):
        found.append("metadata or policy back-links changed; they are not the rewriter's to edit")
    if parsed.body != candidate.body or parsed.description != candidate.description:
        found.append("the body must be plain Markdown: it may not contain front matter or change other keys")
    return (None, [RewriteError("round-trip", m, file) for m in found]) if found else (text, [])


def rewriter_messages(
    skill: Skill | None, blueprint: Blueprint, anchors: Sequence[Case], siblings: Sequence[Skill],
    priors: Sequence[str] = (),
    left_out: Sequence[str] = (),
) -> list[dict]:
    """The rewriter's prompt (ARCHITECTURE prompt conventions): the target skill as a block, the
    blueprint and anchor cases as ```json blocks, siblings as one-line summaries, the reviewer
    advice (priors) attached to the skill as a bullet list, and, when there are any, earlier
    rewrites of this skill that attribution left out because cases that loaded them broke
    (`lessons.left_out_notes`; the section is absent otherwise, so other prompts stay as they were)."""
    from frames_cli.formats.skill import Skill
    from frames_cli.llm.messages.prompts import render

    target = skill or Skill(name=blueprint.skill, description=blueprint.description, body="", metadata={})
    anchor_records = [
        {
            "case_id": c.id,
            "category": c.category,
            "input": c.task.input,
            "expected": c.task.expected,
            "evidence": list(c.diagnosis.evidence),
            "notes": c.diagnosis.notes,
        }
        for c in anchors
    ]
    user = render(
        "rewriter_user",
        skill_name=target.name,
        description=target.description or "(new skill: write one)",
        target=skill_block(target, target=True),
        blueprint=json_block(blueprint.to_json(for_rewriter=True)),
        anchors=json_block(anchor_records),
        siblings="\n".join(f"- {s.summary()}" for s in siblings) or "(none)",
        priors="\n".join(f"- {p}" for p in priors) or "(none)",
        left_out=_left_out_section(left_out),
        answer_format=REWRITE_FORMAT,
    )
    return [{"role": "system", "content": render("rewriter_system")}, {"role": "user", "content": user}]


def _left_out_section(notes: Sequence[str]) -> Block:
    """The rewriter's section of earlier rewrites of its skill that broke cases ("" when none); model text escaped."""
    from frames_cli.llm.messages.prompts import Block

    if not notes:
        return Block("")
    lines = "\n".join(f"- {escape_tags(one_line(n))}" for n in notes)
    return Block("\nEarlier rewrites of this skill that were left out of a child because cases that loaded them broke "
                 f"(keep what those cases need; do not repeat what broke them):\n{lines}\n")


def rewrite(
    client: ModelClient,
    parent: SkillSet,
    blueprints: Sequence[Blueprint],
    anchors: Mapping[str, Sequence[Case]],
    limits: RewriteLimits,
    *,
    round_no: int,
    priors: Mapping[str, Sequence[str]] | None = None,
    guard: RewriteGuard | None = None,
    left_out: Mapping[str, Sequence[str]] | None = None,
) -> list[RewriteOutcome]:
    """Rewrite every blueprint skill concurrently; each skill retries with its errors, then is dropped.

    Propose only: returns SKILL.md texts, writes nothing. Retries are new requests that show the
    rewriter its previous answer and the validator's errors, so they are cached separately and a
    resumed run replays the same sequence from the cache.

    Args:
        anchors: skill name → anchor cases (cases of the regression pool that passed using it).
        priors: skill name → reviewer advice attached to it (context for the rewriter, not rules).
        guard: the guards of evolution/propose/guards.py a valid answer must also pass (policy sentences
            kept, no case value in an added line); their errors are retried like the validator's.
        left_out: skill name → its earlier rewrites that were left out because cases broke
            (`lessons.left_out_notes`), shown to its rewriter.

    Returns:
        One outcome per blueprint, in order.
    """
    from frames_cli.llm.client.client import ChatRequest
    from frames_cli.llm.messages.schemas import REWRITE

    async def one(blueprint: Blueprint) -> RewriteOutcome:
        original = parent.get(blueprint.skill)
        outcome = RewriteOutcome(blueprint.skill)
        if original is None and not SKILL_NAME.match(blueprint.skill):
            outcome.errors.append([f"`{blueprint.skill}` is not a valid skill name"])
            return outcome
        siblings = [s for s in parent.values() if s.name != blueprint.skill]
        advice = (priors or {}).get(blueprint.skill, ())
        messages = rewriter_messages(
            original, blueprint, anchors.get(blueprint.skill, ()), siblings, advice,
            (left_out or {}).get(blueprint.skill, ()),
        )
        for attempt in range(limits.retries + 1):
            outcome.attempts += 1
            tag = f"round{round_no}/rewrite/{blueprint.skill}/{attempt}"
            reply = await client.achat(ChatRequest(role="rewriter", messages=messages, schema=REWRITE, tag=tag))
            if not reply.ok:
                # A failed call (after the client's own retries and repair) is not fixable by
                # showing errors again; stop here and drop the change.
                outcome.errors.append([f"rewriter call failed: {reply.error}"])
                return outcome
            text, errors = validate_rewrite(original, blueprint.skill, reply.data, limits, blueprint.description)
            changes: list = []
            if text is not None and guard is not None:
                errors, changes = guard.check(original, reply.data["body"], blueprint)
            if text is not None and not errors:
                outcome.skill_text = text
                outcome.policy_changes = [c.to_json() for c in changes]
                return outcome
            outcome.errors.append([e.message for e in errors])
            messages = messages + [
                {"role": "assistant", "content": reply.text or ""},
                {"role": "user", "content": retry_message(errors)},
            ]
        return outcome

    return client.gather(one, list(blueprints))


def retry_message(errors: Sequence[RewriteError]) -> str:
    """The rewriter's retry: the errors of its last answer as a ```json block under ERRORS_HEADING."""
    from frames_cli.llm.messages.conventions import ERRORS_HEADING
    from frames_cli.llm.messages.prompts import render

    return render("rewriter_retry", heading=ERRORS_HEADING, errors=json_block([e.to_json() for e in errors]))


def plan_changes(
    parent: SkillSet, outcomes: Sequence[RewriteOutcome], allowed: set[str] | frozenset[str]
) -> dict[str, bytes]:
    """The one gate between plan and apply: file changes for the child commit.

    Only skills in `allowed` (the names the vote produced; never anything read from a model answer
    or a case) may change, and only their own SKILL.md. Unchanged texts are left out.

    Returns:
        {"skills/<name>/SKILL.md": new bytes}, sorted by path.

    Raises:
        FramesError: an outcome targets a skill outside `allowed` (a bug; nothing is applied).
    """
    changes: dict[str, bytes] = {}
    for outcome in outcomes:
        if not outcome.accepted:
            continue
        if outcome.skill not in allowed:
            raise FramesError(f"refusing to change skill `{outcome.skill}`: it is not in this round's blueprint")
        original = parent.get(outcome.skill)
        data = outcome.skill_text.encode("utf-8")  # type: ignore[union-attr]
        if original is None or data != render_original(original):
            changes[skill_path(outcome.skill)] = data
    return dict(sorted(changes.items()))


def render_original(skill: Skill) -> bytes:
    """The parent's SKILL.md bytes as rendered (to tell an unchanged rewrite from a real one)."""
    from frames_cli.formats.skill_file import render_skill

    return render_skill(skill).encode("utf-8")

