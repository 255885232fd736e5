"""The simulator's world: the workspace's cases, the rules they turn on, and the policy's values.

A case turns on rules that other cases share. Each evidence sentence of a case, with the case's own
values taken out (its ids, names, amounts, dates: `casevalues`), is a rule when at least
MIN_RULE_WORDS content words remain ("Agent should refuse to proceed with the cancellation.");
another case whose evidence says the same in most of the same words needs the same rule. What is
left of a sentence that is mostly values ("Agent does not cancel H8Q05L." → "Agent does not
cancel."), or that reads as a sentence with its values cut out ("Agent assigns payment to.",
`casevalues.stub`), is a fact of its case, not a rule: only the case's own line can state it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from frames_cli.casevalues import case_values, is_rule_word, policy_values, stub, without_values
from frames_cli.ingest.text import token_set

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: Content words an evidence sentence must keep, once its case's values are out, to be a rule.
MIN_RULE_WORDS = 3


@dataclass(frozen=True)
class CaseFacts:
    """What the world derives from one case.

    Attributes:
        values: the values and person names its record holds (`casevalues.case_values`).
        rules: its evidence sentences as rules (the case's values taken out), in evidence order.
    """

    values: frozenset[str]
    rules: tuple[str, ...]


@dataclass
class SimWorld:
    """What the simulated models "know": every case with its expected answer and evidence, and the
    values the policy states (rule values, which a line may carry and still be general).

    The executor simulator finds its case by the `Case id:` line of the prompt; the judge grades
    against `task.expected`. The world is read once and shared by every call of a client.
    """

    cases: dict[str, Case] = field(default_factory=dict)
    policy: frozenset[str] = frozenset()
    # No lock: the world is pickled to `llm.processes` workers, and two threads that race here
    # compute the same facts (one dict assignment wins).
    _facts: dict[str, tuple[Case, CaseFacts]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_cases(cls, cases: Iterable[Case], policy_texts: Iterable[str] = ()) -> SimWorld:
        """A world of `cases` (a later duplicate id wins) and the policy documents' texts."""
        return cls({c.id: c for c in cases}, frozenset(policy_values(policy_texts)))

    @classmethod
    def from_workspace(cls, workspace: Workspace, config: FramesConfig) -> SimWorld:
        """The cases matched by `eval.cases` (a glob relative to the workspace root) and the policy
        documents under `policies/`.

        Raises:
            InputError: a case file is malformed (path and line in the message).
        """
        from frames_cli.formats.case_files import case_files, load_cases

        return cls.from_cases(load_cases(case_files(workspace.root, config.eval.cases)), policy_texts(workspace))

    def get(self, case_id: str | None) -> Case | None:
        """The case with `case_id`, or None (unknown or no id)."""
        return self.cases.get(case_id) if case_id else None

    def facts(self, case: Case) -> CaseFacts:
        """The values and rules of `case`, derived once per case object (a world's cases may be replaced)."""
        known = self._facts.get(case.id)
        if known is not None and known[0] is case:
            return known[1]
        values, names = case_values(case)
        drop = values - self.policy
        own_names = {n for n in names if not is_rule_word(n, self.policy)}
        rules = []
        for sentence in case.diagnosis.evidence:
            rule = without_values(sentence, drop, own_names)
            if len(token_set(rule)) >= MIN_RULE_WORDS and stub(rule) is None and rule not in rules:
                rules.append(rule)
        facts = CaseFacts(frozenset(values | own_names), tuple(rules))
        self._facts[case.id] = (case, facts)
        return facts


def policy_texts(workspace: Workspace) -> list[str]:
    """The texts of the workspace's policy documents (UTF-8, undecodable bytes replaced); [] without any."""
    from frames_cli.formats.policy import policy_files

    folder = workspace.policies_dir
    if not folder.is_dir():
        return []
    return [p.read_text(encoding="utf-8", errors="replace") for p in policy_files(folder)]
