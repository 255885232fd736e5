"""Simulated diagnoser: per failure, the case's missing rules and
policy statements (p_insight), else its evidence copied, else noise."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from frames_cli.words import token_set as _token_set
from frames_cli.llm.messages.conventions import RETRIEVED_CLOSE, RETRIEVED_OPEN, TRIED_CLOSE, TRIED_OPEN
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall
from frames_cli.sim.matching import ranked, sentence_found, sentence_sets, skill_text

#: Plausible rules that fix nothing in a policy domain: what an unlucky diagnoser proposes.
SPURIOUS_RULES = (
    "Greet the customer by name at the start of every reply.",
    "Keep every reply under five sentences.",
    "Thank the customer before closing the conversation.",
    "Use a friendly and professional tone throughout.",
    "Summarise the request back to the customer before answering.",
    "Offer further help at the end of each reply.",
    "Avoid technical jargon when explaining a decision.",
    "Mention the policy section a decision is based on.",
)


def quote_rule(sentence: str) -> str:
    """How this diagnoser words a change that adds `sentence`: `Add the rule: "<sentence>"`. Only
    people and the tried-changes check read these words; the sentence itself goes in the
    proposal's `rules`, which the rewriter simulator applies."""
    return f'Add the rule: "{sentence.replace(chr(34), chr(39))}"'


def stated_for_the_agent(rule: str) -> str:
    """A case's rule as an insightful diagnoser writes it: about "the agent", not in the
    evaluator's shorthand "Agent should ..." of τ²'s `nl_assertions` (which the proposal guard
    drops as an evaluator's note, `ruleform.evaluator_assertion`). No real diagnoser of the
    real-model trials wrote the bare "Agent"; the words, and so what the rule tells the simulated
    executor, are the same."""
    return re.sub(r"^(\s*)Agent\b", r"\1The agent", rule)


def behave(call: SimCall) -> dict[str, Any]:
    """DIAGNOSIS JSON: per failure of the `Failures:` block, one proposal, or (with insight) one for
    the case's rules and one per skill that policy statements go back to.

    Per failure, drawn in turn:
    - with probability p_insight, the diagnoser finds the cause: it proposes the case's rules
      (world.CaseFacts.rules: its evidence with the case's own values taken out; about "the
      agent", `stated_for_the_agent`) that no skill block states yet, for the skill that best matches the
      case (the relevance function the executor loads skills with); and the statements of the case's
      deciding policy section (world.CaseFacts.statements) that a retrieved `<policy>` block shows and no
      skill block states, for the skill that block's heading names (`_restorable`; the case's best skill
      when no one skill leads). A case with neither gets no proposal: the diagnoser cannot explain it.
    - otherwise, with probability p_literal, it copies the case's evidence as rule text, values
      and all: a line that helps that one case (what the case-value guard is for);
    - otherwise it adds a spurious rule to a skill drawn at random.

    The draws are made as if the retrieved "Relevant policy and past changes" block were not in
    the prompt, so retrieval changes what an insightful diagnoser can quote, never what it draws;
    with skills that hold the policy verbatim there is nothing to put back. The block of changes
    the run already tried and saw fail is read, outside the draws: a proposal it lists (same skill
    and change) is not made again. A case of `simulator.mislabelled` whose cause the diagnoser
    finds (p_insight) is disputed, citing its evidence as the passage, and gets no proposal.
    """
    tried = reading.block_text(call.prompt, TRIED_OPEN, TRIED_CLOSE)
    shown = reading.policy_blocks(reading.block_text(call.prompt, RETRIEVED_OPEN, RETRIEVED_CLOSE))
    prompt = reading.without_block(call.prompt, TRIED_OPEN, TRIED_CLOSE)
    call = dataclasses.replace(call, prompt=reading.without_block(prompt, RETRIEVED_OPEN, RETRIEVED_CLOSE), _digest="")
    failures = reading.json_after(call.prompt, "Failures")
    blocks = reading.skill_blocks(call.prompt)
    if not isinstance(failures, list) or not blocks:
        return {"proposals": []}
    skills = [(b.name, skill_text(b.name, b.attrs.get("description") or b.text)) for b in blocks]
    stated = [s for b in blocks for s in sentence_sets(b.text)]
    proposals, disputes = [], []
    for failure in failures:
        if not isinstance(failure, dict) or "case_id" not in failure:
            continue
        case_id = str(failure["case_id"])
        evidence = _evidence(failure, call)
        case = call.world.get(case_id)
        rules = [r for r in call.world.facts(case).rules if not sentence_found(r, stated)] if case is not None else []
        restore = _restorable(call.world.facts(case).statements, shown, stated, skills) if case is not None else {}
        rng = call.rng(case_id, "insight")
        best = ranked(" ".join([_text(failure.get("input")), *evidence]), skills) if evidence else []
        insight = rng.random() < call.config.p_insight
        if insight and case_id in call.config.mislabelled:
            passage = " ".join(evidence) or "the policy"
            disputes.append(
                {
                    "case_id": case_id, "passage": passage,
                    "reason": f"The expected result of {case_id} contradicts this passage.",
                }
            )
            continue
        if insight:
            if not best:
                continue
            # The case's rules and the policy's statements are separate proposals, so that a guard
            # that drops one (a copied evaluator line) does not take the other with it.
            made = (
                [
                    (
                        best[0][0], [stated_for_the_agent(r) for r in rules],
                        f"The skill does not state the rule that decides {case_id}.",
                    )
                ]
                if rules else []
            )
            made += [
                (skill or best[0][0], texts, f"The skill leaves out the policy passage that decides {case_id}.")
                for skill, texts in restore.items()
            ]
        elif best and rng.random() < call.config.p_literal:
            made = [(best[0][0], list(evidence), f"The skill does not say what {case_id} expects.")]
        else:
            made = [
                (
                    rng.choice(blocks).name, [rng.choice(SPURIOUS_RULES)],
                    f"The reply in {case_id} may have confused the customer.",
                )
            ]
        for skill, added, rationale in made:
            change = " ".join(map(quote_rule, added))
            if f"{skill}: {change}" not in tried:
                proposals.append(
                    {"skill": skill, "change": change, "rules": added, "rationale": rationale, "case_ids": [case_id]}
                )
    return {"proposals": proposals, "disputes": disputes}


def _restorable(
    statements: tuple[str, ...], shown: list[tuple[dict[str, str], str]], stated: list[frozenset[str]],
    skills: list[tuple[str, str]],
) -> dict[str | None, list[str]]:
    """The policy `statements` the case turns on that a retrieved `<policy>` block of
    the prompt shows word for word and no skill block states (what a diagnoser that reads the
    policy can put back), by the skill they go to: the one whose catalog line shares the most
    words with that block's heading below the document title ("Airline Agent Policy > Domain
    Basic > User" → "Domain Basic User"), None when no skill or more than one leads.

    Word for word (the same content words), because a retrieved block holds the policy's own
    lines: a sentence of another section that merely resembles one (70 % of its words) is that
    other section's, and would put its rule in the wrong skill.
    """
    out: dict[str | None, list[str]] = {}
    taken: set[str] = set()
    for attrs, text in shown:
        lines = set(sentence_sets(text))
        path = attrs.get("heading", "").split(">")
        home = ranked(" ".join(path[1:] or path), skills)
        target = home[0][0] if home and (len(home) == 1 or home[0][1] > home[1][1]) else None
        for statement in statements:
            if statement not in taken and _token_set(statement) in lines and not sentence_found(statement, stated):
                out.setdefault(target, []).append(statement)
                taken.add(statement)
    return out


def _evidence(failure: dict[str, Any], call: SimCall) -> list[str]:
    diagnosis = failure.get("diagnosis")
    if isinstance(diagnosis, dict) and isinstance(diagnosis.get("evidence"), list):
        return [str(e) for e in diagnosis["evidence"] if str(e).strip()]
    case = call.world.get(str(failure["case_id"]))
    return list(case.diagnosis.evidence) if case else []


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("text", ""))
    return "" if value is None else str(value)
