"""Guards on what evolution may write: no case facts as rules, no junk, no policy sentence dropped silently.

Three checks, each switched by `evolution.guards.*` in frames.yaml
(docs/decisions/0025-guards-on-proposals-and-rewrites.md):

- case values (`case_values`) and rule form (`rule_form`): a proposed rule, or a line a rewrite
  adds, may carry no value a case's record holds and must be a rule for the agent; the case-value
  index decides (`CaseValues.why_not`, evolution/propose/case_index.py). `guard_proposals` drops
  the proposals it refuses, `added_line_errors` turns the added lines it refuses into errors.
- `PolicyKeeper` (`policy_sentences`, evolution/propose/policy_keeper.py): a rewrite may not remove or
  change a sentence its skill held from the policy at S0 unless the blueprint asked for exactly
  that. `RewriteGuard` applies it and the text checks to a rewrite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.evolution.propose.case_index import CaseValues
from frames_cli.evolution.propose.rewrite_errors import RewriteError

if TYPE_CHECKING:
    from frames_cli.evolution.propose.consensus import Blueprint
    from frames_cli.evolution.propose.diagnose import DiagnoserResult
    from frames_cli.evolution.propose.policy_keeper import PolicyChange, PolicyKeeper
    from frames_cli.formats.skill import Skill

#: The version of the guards' rules: raised whenever a change to them changes what a run drops, so
#: that a run records which rules it ran under (`snapshot.run_snapshot`) and a resumed run says
#: when they changed. 1: up to issue 27; 2: grammar by a tagger (stub, fragment, narrative),
#: evaluator's notes and grounding (docs/decisions/0072-guards-measured-on-real-text.md); 3: one
#: case's facts (docs/decisions/0096-case-facts-are-not-rules.md).
GUARD_RULES = 3


def guard_proposals(results: Sequence[DiagnoserResult], values: CaseValues) -> list[str]:
    """Drop every proposal whose rule text (its change, and a new skill's description) `values.why_not`
    refuses: a value some case holds, a sentence with its values cut out, or what is not a rule for
    the agent; the reason goes to the diagnoser result's `dropped`, as other drops do.

    Mutates `results` in place (their `proposals` and `dropped`).

    Returns:
        The lines added to `dropped`, in diagnoser order (for the round's record and the review).
    """
    lines: list[str] = []
    for result in results:
        kept = []
        for p in result.proposals:
            why = values.why_not(f"{p.change}\n{p.description}", p.skill, p.case_ids, p.rules)
            if why is None:
                kept.append(p)
                continue
            line = f"proposal {p.position} for `{p.skill}` (diagnoser {p.diagnoser}): {why}"
            result.dropped.append(line)
            lines.append(line)
        result.proposals = kept
    return lines


def added_line_errors(original: Skill | None, body: str, values: CaseValues, file: str) -> list[RewriteError]:
    """Errors for the lines a rewrite adds (lines not in the original body) that `values.why_not` refuses;
    `file` is the skill's path."""
    before = set(original.body.splitlines()) if original is not None else set()
    errors = []
    for number, line in enumerate(body.splitlines(), 1):
        if line in before or not line.strip():
            continue
        why = values.why_not(line)
        if why is not None:
            errors.append(RewriteError(
                "added-line", f"the added line {line.strip()!r} {why}; state the rule in general terms", file, number,
                line.strip(),
            ))
    return errors


@dataclass
class RewriteGuard:
    """The guards a rewrite passes after `rewrite.validate_rewrite`; each is None when switched off.

    Attributes:
        keeper: policy sentences of S0 (`evolution.guards.policy_sentences`).
        values: the case-value index (`evolution.guards.case_values`), applied to added lines.
    """

    keeper: PolicyKeeper | None = None
    values: CaseValues | None = None

    def check(
        self, parent: Skill | None, body: str, blueprint: Blueprint
    ) -> tuple[list[RewriteError], list[PolicyChange]]:
        """(errors, allowed policy changes) of one rewrite of `parent` (the blueprint's skill) into
        `body`; see the two guards."""
        from frames_cli.evolution.propose.rewrite import skill_path

        errors: list[RewriteError] = []
        changes: list[PolicyChange] = []
        if self.keeper is not None:
            errors, changes = self.keeper.check(parent, body, blueprint)
        if self.values is not None:
            errors += added_line_errors(parent, body, self.values, skill_path(blueprint.skill))
        return errors, changes
