"""What `frames evolve` will spend before it runs, following the loop's stages (evaluation/estimate.py for the idea).

A new run evaluates S0, then at most `max_rounds` rounds of: D diagnoser calls, rewrites of the
skills the vote keeps, one child evaluated on E (plus up to `attribution_steps` sub-children).
How many rounds run and how much of each child is evaluated depend on the answers, so the
estimate gives the expected spend of the two ends of the usual path, and a bound:

- **about (the full run)**: every round runs (`max_rounds`) and makes one child, evaluated in full;
  the sealed test set is scored for S0 and, assumed, half the children. The budget warning uses it.
- **from (the short run)**: the run stops at patience, after min(`patience`, `max_rounds`) rounds in
  which no child joins the front; with early rejection each child is rejected after its first
  stage (`llm.concurrency` cases, the least a staged evaluation runs; attribution may then settle
  a few more, not counted); the test set is scored for S0 alone. A round that makes no child, or
  a budget stop, spends less still.
- **at most**: every round, every sub-child attribution may make, each evaluated in full, every
  turn, repair turn, rewrite retry and lost-result retry (evaluation/estimate.py), the test set
  scored for every candidate. No run exceeds it.

Assumed in every figure, where the settings do not say:

- each candidate is evaluated on the diagnosis and selection sets;
- each diagnoser sees a full batch of min(B, cases) failures (records as diagnose.Failure shows
  them, with the expected answer as the output and a two-step trajectory) and answers with
  DIAGNOSIS_TOKENS_PER_FAILURE tokens per failure; retrieval adds `top_k` policy passages;
- about one skill per diagnoser is rewritten per round (min(D, skills)), once, and answers with
  the whole skill; at most every skill plus ⌊D·B / q⌋ new ones (one proposal per failure each),
  each tried 1 + `rewrite_retries` times;
- skills keep their current size (a rewrite that adds rules makes later prompts longer);
- the sequential noise-aware gate (evolution/compare/sequential.py) is counted in the upper bound only:
  S0 and every child drawing up to `gate_max_samples` samples of every selection case; the
  expected figures assume every category is decided at the first look.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from frames_cli.evaluation.estimate import Estimate, RoleEstimate, add_evaluation
from frames_cli.tokens import approx_tokens

if TYPE_CHECKING:
    from frames_cli.evolution.state.settings import Settings
    from frames_cli.evolution.state.splits import Split
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill import Skill
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.workspace.config import FramesConfig

DIAGNOSIS_TOKENS_PER_FAILURE = 90


def evolve_estimate(cases: Mapping[str, Case], split: Split, skills: SkillSet, config: FramesConfig, settings: Settings,
                    policy_files: Mapping[str, bytes] | None = None) -> Estimate:
    """The spend of a new run from `skills` (S0) on `split` of `cases` (module docstring): the full
    run's expected figures and the bounds, with the short run's expected figures as `short`.

    Args:
        cases: case id → case, every case of the split.
        split: the run's sets (splits.Split): candidates are evaluated on diagnosis ∪ selection,
            diagnosers see failures of the diagnosis set, the sealed test set is scored at the end.
        settings: the run's evolution settings (settings.Settings: rounds, patience, D, B, q,
            retries, samples, early rejection, attribution steps).
        policy_files: the base commit's `policies/` files, for the retrieved passages' size.
    """
    rounds = settings.max_rounds
    children = rounds * (1 + settings.attribution_steps)  # every child and sub-child the run may make
    evaluated = [cases[c] for c in split.evaluated()]
    diagnosis = [cases[c] for c in split.diagnosis]
    test = [cases[c] for c in split.test]
    out = Estimate.of(config)
    add_evaluation(out, evaluated, skills, config, settings.samples, times=1 + rounds, max_times=1 + children)
    # The test set is scored for S0 and each front member: assumed S0 and half the children.
    front = 1 + math.ceil(rounds / 2)
    add_evaluation(out, test, skills, config, settings.samples, times=front, max_times=1 + children)
    extra = _sequential_samples(settings)
    if extra:
        add_evaluation(out, [cases[c] for c in split.selection], skills, config, extra, times=0, max_times=1 + children)
    short_rounds = min(settings.patience, rounds)
    out.short = short = Estimate(batched=out.batched)
    add_evaluation(short, evaluated, skills, config, settings.samples)
    stage = evaluated[: settings.stage_cases] if settings.early_rejection else evaluated
    add_evaluation(short, stage, skills, config, settings.samples, times=short_rounds)
    add_evaluation(short, test, skills, config, settings.samples)
    batch = 0
    if diagnosis:
        batch = len(diagnosis) if settings.batch_size == "all" else min(int(settings.batch_size), len(diagnosis))
        diagnosers = _diagnosers(diagnosis, skills, config, settings, batch, policy_files or {})
        rewrites = _rewrites(diagnosis, skills, config, settings, batch)
        for est, n in ((out, rounds), (short, short_rounds)):
            est.role("diagnoser", config.models.diagnoser).add(diagnosers, n)
            est.role("rewriter", config.models.rewriter).add(rewrites, n)
    first = (
        f"the first {len(stage)} cases of each child (early rejection)"
        if settings.early_rejection
        else "each child in full"
    )
    out.notes = out.notes + [
        f"about: {1 + rounds} evaluations of {len(evaluated)} cases × {settings.samples} sample(s) (S0 and one child "
        f"per round, all {rounds} rounds)"
        + (f", the {len(test)} sealed test cases scored for {front} front member(s)" if test else ""),
        f"from: the run stops at patience after {short_rounds} round(s): S0 in full and {first}"
        + (", the test set for S0" if test else ""),
        f"at most: {1 + children} evaluations (up to {settings.attribution_steps} sub-children per round), each lost "
        f"result run again up to {config.eval.lost_retries} time(s)",
    ]
    if diagnosis:
        out.notes.append(
            f"{settings.diagnosers} diagnosers of {batch} failures per round; about "
            f"{min(settings.diagnosers, len(skills)) or 1} rewrite(s) per round; skills keep their current size"
        )
    if extra:
        out.notes.append(
            f"the sequential gate may draw up to {extra} more sample(s) of each of the {len(split.selection)} "
            f"selection cases for S0 and each child (up to {settings.gate_max_samples} per case): in the upper bound, "
            "not the expected figures"
        )
    return out


def _sequential_samples(settings: Settings) -> int:
    """Samples per case the sequential gate may add beyond eval.samples (0 when it is off)."""
    if settings.gate != "noise-aware":
        return 0
    return max(0, settings.gate_max_samples - settings.samples)


def _diagnosers(cases: Sequence[Case], skills: SkillSet, config: FramesConfig, settings: Settings, batch: int,
                policy_files: Mapping[str, bytes]) -> RoleEstimate:
    """One round's diagnoser calls."""
    from frames_cli.evolution.propose.prompting import DIAGNOSIS_FORMAT, json_block, skill_blocks
    from frames_cli.llm.messages.prompts import render

    llm = config.llm
    records = sorted((_record_tokens(c, len(skills)) for c in cases), reverse=True)
    mean_record = sum(records) / len(records)
    system = approx_tokens(render("diagnoser_system"))
    user = approx_tokens(
        render(
            "diagnoser_user", skills=skill_blocks(skills.values()), skill_names=", ".join(skills), retrieved="",
            amended="", failures=json_block([]), answer_format=DIAGNOSIS_FORMAT,
        )
    )
    retrieved = _retrieved_tokens(settings, policy_files)
    prompt = system + user + retrieved + round(batch * mean_record)
    largest = system + user + retrieved + sum(records[:batch])
    calls = settings.diagnosers
    est = RoleEstimate(calls=calls, calls_max=calls * (1 + llm.repair_turns), prompt_tokens=calls * prompt,
                       completion_tokens=calls * batch * DIAGNOSIS_TOKENS_PER_FAILURE)
    est.max_tokens = calls * sum(
        largest + turn * llm.max_output_tokens + llm.max_output_tokens for turn in range(1 + llm.repair_turns)
    )
    return est


def _rewrites(
    cases: Sequence[Case], skills: SkillSet, config: FramesConfig, settings: Settings, batch: int
) -> RoleEstimate:
    """One round's rewriter calls."""
    llm = config.llm
    sizes = sorted((_rewrite_prompt_tokens(s, skills, cases, settings) for s in skills.values()), reverse=True) or [0]
    mean = sum(sizes) / len(sizes)
    expected = min(settings.diagnosers, len(skills)) or 1
    most = len(skills) + (settings.diagnosers * batch) // max(settings.vote_threshold, 1)
    attempts = (1 + settings.rewrite_retries) * (1 + llm.repair_turns)
    body = sum(approx_tokens(s.body) for s in skills.values()) / max(len(skills), 1)
    est = RoleEstimate(calls=expected, calls_max=most * attempts, prompt_tokens=round(expected * mean),
                       completion_tokens=round(expected * (body + 20)))
    longest = max(sizes) + (attempts - 1) * (llm.max_output_tokens + 200)
    est.max_tokens = most * attempts * (longest + llm.max_output_tokens)
    return est


def _record_tokens(case: Case, n_skills: int) -> int:
    """Tokens of one failure record in a diagnoser's `Failures:` block (as json_block shows a list of them)."""
    from frames_cli.evolution.propose.diagnose import Failure
    from frames_cli.evolution.propose.prompting import json_block

    steps = [
        {
            "step": 1, "state": f"catalog of {n_skills} skills", "action": {"load": ["s0000", "s0001"]},
            "result": "loaded s0000, s0001",
        },
        {
            "step": 2, "state": f"catalog of {n_skills} skills; loaded: s0000, s0001",
            "action": {"answer": case.task.expected}, "result": "answered",
        },
    ]
    failure = Failure(case, case.task.expected, "expected another answer than the one given", ["s0000", "s0001"], steps)
    return approx_tokens(json_block([failure.to_prompt()])) - approx_tokens(json_block([]))


def _retrieved_tokens(settings: Settings, policy_files: Mapping[str, bytes]) -> int:
    """Tokens of the retrieved section: `top_k` policy passages of the mean size (0 when retrieval is off)."""
    if not settings.retrieval["enabled"] or not policy_files:
        return 0
    from frames_cli.evolution.propose.retrieval import policy_passages

    passages = policy_passages(policy_files)[0]
    if not passages:
        return 0
    mean = sum(approx_tokens(p.title + "\n" + p.text) + 20 for p in passages) / len(passages)
    return round(min(int(settings.retrieval["top_k"]), len(passages)) * mean) + 30


def _rewrite_prompt_tokens(skill: Skill, skills: SkillSet, cases: Sequence[Case], settings: Settings) -> int:
    """Tokens of the rewriter's prompt for `skill`: the real prompt, with a blueprint of D votes and
    `anchor_cases` anchors of the mean case."""
    from frames_cli.evolution.propose.consensus import Blueprint, Change
    from frames_cli.evolution.propose.rewrite import rewriter_messages

    evidence = " ".join(e for c in cases[:1] for e in c.diagnosis.evidence) or "a rule"
    changes = tuple(
        Change(f'Add the rule: "{evidence}"', ("the failing cases need it",), (cases[0].id,), (i,), rules=(evidence,))
        for i in range(settings.diagnosers)
    )
    blueprint = Blueprint(skill.name, False, "", changes, settings.diagnosers)
    anchors = list(cases[: settings.anchor_cases])
    messages = rewriter_messages(skill, blueprint, anchors, [s for s in skills.values() if s.name != skill.name])
    return approx_tokens("\n\n".join(m["content"] for m in messages))
