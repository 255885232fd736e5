"""Why a rewrite is refused, as data: the validator's and the rewrite guards' errors, and the
validator's checks of a body's characters, repeated rules and protected regions.

Each error carries its kind, the skill file, the body line and the text it is about beside the
message people read (the run state, the report and the review keep the message). The rewriter's
retry shows the errors as a ```json block, so a model, and the simulated rewriter, act on the
fields instead of reading a sentence back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from frames_cli.formats.skill import Skill

#: What a rewrite got wrong. "spec": a rule of the Agent Skills spec or a lint error of
#: `formats.skill_checks`; "round-trip": the rendered file does not parse back to what was written
#: (name, metadata, body or description changed, or no valid SKILL.md at all).
ErrorKind = Literal[
    "nul", "description", "prompt-tag", "too-long", "duplicate-rule", "protected-region", "spec", "credential",
    "round-trip", "policy-sentence", "added-line",
]

@dataclass(frozen=True)
class RewriteError:
    """One reason a rewrite is refused.

    Attributes:
        kind: what is wrong (`ErrorKind`).
        message: the line people and the model read, as the validator has always written it.
        file: the skill's repository path (skills/<name>/SKILL.md).
        line: the 1-based body line it is about, when it is about one.
        text: the sentence it is about ("" when none): for "duplicate-rule" the repeated sentence
            on `line`, for "added-line" the line, for "policy-sentence" the policy's sentence.
    """

    kind: ErrorKind
    message: str
    file: str
    line: int | None = None
    text: str = ""

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict:
        """The error as the retry shows it: kind, file, line and text where they say something, message."""
        out: dict = {"kind": self.kind, "file": self.file}
        if self.line is not None:
            out["line"] = self.line
        if self.text:
            out["text"] = self.text
        out["message"] = self.message
        return out


def nul_errors(answer: Mapping[str, Any], file: str) -> list[RewriteError]:
    """A NUL character in the body or the description, with its line."""
    errors = []
    for key in ("body", "description"):
        text = answer.get(key) or ""
        if "\0" in text:
            line = text.count(chr(10), 0, text.index(chr(0))) + 1
            errors.append(RewriteError(
                "nul", f"the {key} holds a NUL character at line {line}; a skill is plain text", file,
                line if key == "body" else None,
            ))
    return errors


def duplicate_errors(
    body: str, original: Skill | None, threshold: float, policy: Mapping[str, frozenset[str]], file: str
) -> list[RewriteError]:
    """The rules `body` states twice, when it repeats more of them than the parent's body did
    (`rules.duplicate_pairs` with `threshold` and the `policy`'s sentences by section)."""
    from frames_cli.evolution.propose.rules import duplicate_pairs

    duplicates = duplicate_pairs(body, threshold, policy)
    inherited = (
        duplicate_pairs(original.body, threshold, policy, limit=len(duplicates) + 1)
        if original and duplicates else []
    )
    if len(duplicates) <= len(inherited):
        return []
    return [
        RewriteError(
            "duplicate-rule",
            (
                f"lines {d.first_line} and {d.second_line} state"
                if d.first_line != d.second_line
                else f"line {d.first_line} states"
            )
            + (
                f" the same rule twice; state it once, keeping whatever else the lines say: {_clip(d.first)!r} / "
                f"{_clip(d.second)!r}"
            ),
            file, d.second_line, d.second,
        )
        for d in duplicates
    ]


def protected_errors(body: str, original: Skill | None, file: str) -> list[RewriteError]:
    """Protected regions that are malformed, or not byte for byte the parent's (a new skill has none)."""
    from frames_cli.formats.protected import protected_regions

    try:
        unchanged = protected_regions(body) == (protected_regions(original.body) if original else [])
    except ValueError as exc:
        return [RewriteError("protected-region", f"protected-region markers are malformed: {exc}", file)]
    if unchanged:
        return []
    return [RewriteError(
        "protected-region",
        "protected regions changed: every text between <!-- frames:protected --> and "
        "<!-- /frames:protected --> must stay byte-identical, none added or removed",
        file,
    )]


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
