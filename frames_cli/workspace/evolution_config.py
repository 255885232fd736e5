"""The `evolution:` section of frames.yaml (`frames evolve`): the method's settings and its parts'
(retrieval, held-out sets, rewrite guards, cost, pending branches), with their defaults.

`FramesConfig` (workspace/config.py) holds them as `evolution`; every field's `doc` is what `frames
init` and docs/settings.md show.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from frames_cli.workspace.setting import MAX_SEED
from frames_cli.workspace.setting import setting as _f


@dataclass(frozen=True)
class RetrievalConfig:
    """Context for diagnosers (DESIGN §9): policy passages and past accepted skill changes that match a
    batch's failures by BM25 (evolution/propose/retrieval.py); weak matches are left out."""

    enabled: bool = _f(True, "add matching policy passages and past skill changes to each diagnoser's prompt")
    top_k: int = _f(5, "passages added per diagnoser batch at most", min=1, max=100)
    min_score: float = _f(
        0.5, "keep a passage only when its BM25 score is at least this share of the best score for the same failure",
        min=0.0, max=1.0,
    )
    min_shared_terms: int = _f(
        3, "distinct content words a passage must share with a failure; fewer is a weak match, left out", min=1, max=100
    )
    max_changes: int = _f(200, "past skill commits indexed, newest first (0 = policies only)", min=0, max=100_000)


@dataclass(frozen=True)
class SplitConfig:
    """Held-out discipline (docs/decisions/0027-held-out-selection-sealed-test.md): the counted cases
    divided per category, stably by case id, into a diagnosis set (what diagnosers and rewriters
    see), a selection set (gate and Pareto front, blind) and an optional sealed test set (scored once
    at the end, never for a decision). `selection: 0` and `test: 0` (with no `test_cases`) is the
    FRAMES paper's single evaluation set E."""

    selection: float = _f(
        0.3,
        "share of each category's cases held out for the gate and the front (0 = gate on the diagnosis set, the "
        "paper's single set E)",
        min=0.0, max=0.9,
    )
    test: float = _f(
        0.2, "share of each category's cases sealed as the test set, scored once at the end (0 = none)", min=0.0,
        max=0.9,
    )
    test_cases: str | None = _f(
        None,
        "glob of case files that are the sealed test set as a whole (besides `test`), relative to the workspace; null "
        "= none",
        inside=True,
    )
    min_cases: int = _f(
        4, "a category with fewer cases is kept whole: all of them diagnosed and gated (in-sample), none sealed", min=2,
        max=100_000,
    )
    seed: int = _f(
        0,
        "salt of the case-id hash that assigns the sets; keep it fixed, or a later run may diagnose cases an earlier "
        "one held out",
        min=0, max=MAX_SEED,
    )


@dataclass(frozen=True)
class GuardsConfig:
    """Guards on what evolution writes (evolution/propose/guards.py). All are on by default; switch one off
    only to measure what it prevents (bench/)."""

    case_values: bool = _f(
        True,
        "drop a proposed rule, and refuse a rewritten line, that carries a value of a case (an id, a name, an amount, "
        "a date) the policy does not state",
    )
    policy_sentences: bool = _f(
        True,
        "refuse a rewrite that removes or changes a sentence its skill held from the policy at S0, unless the "
        "blueprint asks for it citing cases",
    )
    rule_form: bool = _f(
        True,
        "drop a proposed rule, and refuse a rewritten line, that is not a rule for the agent: a note to a grader "
        "(\"Check that agent ...\"), a description of a case's user, or a case's evaluator note with its values cut "
        "out",
    )


@dataclass(frozen=True)
class CostConfig:
    """Cost-directed children (evolution/propose/cost.py): the front's "same pass rate, fewer tokens" side."""

    enabled: bool = _f(True, "when the parent has few failures, condense its costliest skills instead of diagnosing")
    max_failures: int = _f(
        1, "a parent failing at most this many diagnosis-set cases gets a cost-directed child", min=0, max=100_000
    )
    skills: int = _f(
        2, "skills condensed per cost-directed child (the most tokens per case: loads × body tokens)", min=1, max=100
    )


@dataclass(frozen=True)
class PendingConfig:
    """A review branch whose gain is significant only on the cases its
    run diagnosed waits (pending) for cases added after the run."""

    min_new_cases: int = _f(
        10, "a pending branch is looked at again once this many cases were added since its run or its last look", min=1,
        max=100_000,
    )
    max_looks: int = _f(
        3, "looks at a pending branch before it is left unconfirmed; α is split over them (Bonferroni)", min=1, max=20
    )


@dataclass(frozen=True)
class EvolutionConfig:
    """The evolution round (DESIGN §4). Numbers the FRAMES paper leaves open are our defaults."""

    max_rounds: int = _f(6, "rounds at most", min=1, max=1000)
    patience: int = _f(3, "stop after this many rounds with no new Pareto-front member", min=1, max=1000)
    diagnosers: int = _f(3, "D: independent diagnosers per round", min=1, max=64)
    batch_size: int | str = _f(8, "B: failing cases per diagnoser batch, or `all`", min=1, max=1000)
    vote_threshold: int | str = _f(2, "q: distinct diagnosers that must propose a skill, or `all`", min=1, max=64)
    tolerance: float = _f(0.05, "ε: relative per-category tolerance of the gate against S0", min=0.0, max=1.0)
    gate: str = _f(
        "paper",
        "gate rule: `paper` (below (1 − ε)·S0 rejects; in a small category one flip of a noisy case can decide) or "
        "`noise-aware` (rejects only a drop an exact paired test finds significant, sampling further where unsure: a "
        "verdict a re-run keeps, for several times the tokens; docs/method.md)",
        choices=("paper", "noise-aware"),
    )
    gate_alpha: float = _f(
        0.05, "noise-aware gate: chance of rejecting a child as good as S0, over all categories", min=1e-6, max=1.0
    )
    early_rejection: bool = _f(
        True, "stop evaluating a child once the gate must reject it (the decision is the full evaluation's)"
    )
    gate_max_samples: int = _f(
        40,
        "noise-aware gate: a category whose samples neither show a significant drop nor rule out a third of its cases "
        "broken gets more samples at 2k, 4k, … up to this many per case (the child's of the cases it has not passed, "
        "S0's in steps of 8, 16, 32, … where they can settle the test), α spent over the child's looks and β over "
        "S0's steps (≤ eval.samples = off)",
        min=1, max=1000,
    )
    recommend_alpha: float = _f(
        0.05,
        "level α of the recommendation: a member gets a review branch only when, tested against S0 on cases no "
        "diagnoser saw and on fresh samples of the diagnosed ones, its gain is significant at α (at most α of runs "
        "with no better child make a branch); 1 = the highest pass rate (the paper)",
        min=1e-6, max=1.0,
    )
    confirm_limit: int = _f(
        3,
        "children the recommendation tests at most, best diagnosis-set pass rate first (each costs fresh samples of "
        "the diagnosed selection cases)",
        min=1, max=50,
    )
    pending: PendingConfig = field(
        default_factory=PendingConfig, metadata={"doc": "review branches waiting for cases added after their run"}
    )
    anchor_cases: int = _f(3, "anchor cases shown to the rewriter per skill", min=0, max=100)
    rewrite_retries: int = _f(
        2, "rewrites retried with the validator's errors before a change is dropped", min=0, max=10
    )
    max_body_lines: int = _f(500, "longest skill body a rewrite may produce (Agent Skills advice)", min=1, max=10_000)
    merge_threshold: float = _f(
        0.25,
        "proposals of different diagnosers whose rules share at least this share of content words (Jaccard) are one "
        "change; 1 = only the same words",
        min=0.01, max=1.0,
    )
    duplicate_threshold: float = _f(
        0.4,
        "a rewrite is refused when it has more pairs of rule lines at least this similar (Jaccard, same numbers) than "
        "its parent; 1 = only the same words",
        min=0.01, max=1.0,
    )
    attribution_steps: int = _f(
        2,
        "per round, sub-children made from a child that failed the gate (or is off the front) and changed several "
        "skills: each leaves out the rewrites its broken cases loaded (0 = off)",
        min=0, max=100,
    )
    seed: int = _f(0, "seed for batching, sampling and tie-breaking", min=0, max=MAX_SEED)
    retrieval: RetrievalConfig = field(
        default_factory=RetrievalConfig, metadata={"doc": "diagnosis context (BM25 retrieval)"}
    )
    split: SplitConfig = field(
        default_factory=SplitConfig, metadata={"doc": "diagnosis, selection and sealed test sets"}
    )
    guards: GuardsConfig = field(
        default_factory=GuardsConfig, metadata={"doc": "what a proposal or rewrite may not write"}
    )
    cost: CostConfig = field(
        default_factory=CostConfig, metadata={"doc": "cost-directed children when there is little to learn"}
    )
