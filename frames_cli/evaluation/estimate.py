"""What an evaluation will spend before it runs: model calls and tokens per role, from the real prompts, and the price.

The figures come from the prompts frames would send (rendered from the current skills and cases,
tokens ⌈chars / 4⌉ as `frames_cli.tokens`), the settings, and a few stated assumptions about the
model's answers; no model is called. Two figures per role:

- `calls_max` / `max_tokens`: a bound the run cannot exceed (every turn the settings allow, every
  repair turn, every lost result run again `eval.lost_retries` times); calls are calls that
  answered, as the ledger counts them (an attempt that failed costs no token);
- `prompt_tokens` / `completion_tokens`: the expected spend of the usual path (below).

Executor, per case and sample (the built-in agent, executor/builtin.py): expected 2 calls, the
catalog turn and the answer turn with `min(executor.max_skill_loads, skills)` skill blocks of the
mean block size; at most (max_turns + 1) × (1 + llm.repair_turns) calls. Completion: a load reply
of ~10 tokens per id, an answer of the expected answer's size + 30 tokens. A command executor
makes no frames model call. Judge: one call per rubric case and sample (+ repair turns at most).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from frames_cli.tokens import approx_tokens

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.workspace.config import FramesConfig

#: Tokens of the JSON wrapper around an answer ({"answer": ..., "skills_used": [...]}).
ANSWER_OVERHEAD = 30
#: Characters of the agent's answer assumed in a judge prompt, and tokens of a verdict.
JUDGED_ANSWER_CHARS = 400
VERDICT_TOKENS = 40
#: Tokens per skill id in a load reply ({"load": ["s1a2b", ...]}).
LOAD_TOKENS_PER_ID = 10


@dataclass
class RoleEstimate:
    """One role's share of a run (tokens; calls).

    Attributes:
        calls: expected calls. calls_max: calls the run cannot exceed.
        prompt_tokens / completion_tokens: expected tokens.
        max_tokens: a bound on prompt + completion tokens (every allowed call at its largest
            prompt and `llm.max_output_tokens`).
    """

    calls: int = 0
    calls_max: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    max_tokens: int = 0

    def add(self, other: RoleEstimate, times: int = 1, max_times: int | None = None) -> None:
        """Add `other`: its expected figures `times` times, its bounds `max_times` times (default `times`)."""
        bound = times if max_times is None else max_times
        self.calls += other.calls * times
        self.calls_max += other.calls_max * bound
        self.prompt_tokens += other.prompt_tokens * times
        self.completion_tokens += other.completion_tokens * times
        self.max_tokens += other.max_tokens * bound

    @property
    def tokens(self) -> int:
        """Expected prompt + completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Estimate:
    """The spend of a whole command, per role, with the prices litellm knows.

    Attributes:
        roles: role → its estimate. models: role → model string.
        notes: the assumptions that matter for this run (one line each).
        short: for `frames evolve`, the expected spend of the shortest usual run (it stops at
            patience; evolution/run/estimate.py), whose bounds are not used; None for `frames eval`.
        batched: roles priced at their batch price (`llm.batch`).
    """

    roles: dict[str, RoleEstimate] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    short: Estimate | None = None
    batched: frozenset[str] = frozenset()

    @classmethod
    def of(cls, config: FramesConfig) -> Estimate:
        """An empty estimate priced as `config` says: the roles of `llm.batch` at their batch price
        (llm/client/check.price_of), with a note naming them."""
        from frames_cli.llm.transport.batch_models import batched_roles

        batched = frozenset(batched_roles(config))
        notes = (
            [f"llm.batch: {', '.join(sorted(batched))} priced at the provider's batch price where it has one"]
            if batched else []
        )
        return cls(notes=notes, batched=batched)

    def role(self, name: str, model: str | None) -> RoleEstimate:
        """The estimate of role `name` (created empty on first use)."""
        if model:
            self.models[name] = model
        return self.roles.setdefault(name, RoleEstimate())

    @property
    def calls(self) -> int:
        """Model calls expected, all roles."""
        return sum(r.calls for r in self.roles.values())

    @property
    def calls_max(self) -> int:
        """Model calls the run cannot exceed, all roles."""
        return sum(r.calls_max for r in self.roles.values())

    @property
    def tokens(self) -> int:
        """Tokens expected (prompt + completion), all roles."""
        return sum(r.tokens for r in self.roles.values())

    @property
    def max_tokens(self) -> int:
        """A bound on prompt + completion tokens, all roles."""
        return sum(r.max_tokens for r in self.roles.values())

    def usd(self) -> tuple[float | None, float | None]:
        """(expected USD, USD at most); None when litellm knows no price for a role that calls."""
        from frames_cli.llm.client.check import price_of

        expected = bound = 0.0
        for name, r in self.roles.items():
            if not r.calls_max:
                continue
            price = price_of(self.models.get(name, ""), batch=name in self.batched)
            if price is None:
                return None, None
            expected += (
                r.prompt_tokens * price.input_per_million + r.completion_tokens * price.output_per_million
            ) / 1e6
            bound += r.max_tokens * max(price.input_per_million, price.output_per_million) / 1e6
        return expected, bound

    def to_json(self) -> dict:
        """JSON-ready form: totals, per role, USD (None when unknown), notes; `short` (calls, tokens,
        usd and per-role calls and tokens of the short run) for `frames evolve`, else None."""
        usd, usd_max = self.usd()
        short = None if self.short is None else {
            "calls": self.short.calls, "tokens": self.short.tokens, "usd": self.short.usd()[0],
            "roles": {name: {"calls": r.calls, "tokens": r.tokens} for name, r in self.short.roles.items()},
        }
        return {
            "calls": self.calls, "calls_max": self.calls_max, "tokens": self.tokens, "max_tokens": self.max_tokens,
            "usd": usd, "usd_max": usd_max, "short": short, "notes": self.notes,
            "roles": {
                name: {
                    "model": self.models.get(name), "calls": r.calls, "calls_max": r.calls_max,
                    "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
                    "max_tokens": r.max_tokens,
                }
                for name, r in self.roles.items()
            },
        }

    def summary(self) -> str:
        """One line: calls at most, tokens expected (from the short
        run's, for evolve) and at most, price where known."""
        usd, usd_max = self.usd()
        price = (
            f"about ${usd:,.2f} (at most ${usd_max:,.2f})"
            if usd is not None
            else "price unknown (litellm has no price for a model)"
        )
        if self.short is None:
            return (
                f"estimate: at most {self.calls_max:,} model calls (about {self.calls:,}), about {self.tokens:,} "
                f"tokens (at most {self.max_tokens:,}), {price}"
            )
        short_usd = self.short.usd()[0]
        low = f"${short_usd:,.2f}–" if short_usd is not None and usd is not None else ""
        return (f"estimate: at most {self.calls_max:,} model calls (about {self.short.calls:,}–{self.calls:,}), "
                f"about {self.short.tokens:,}–{self.tokens:,} tokens (at most {self.max_tokens:,}), "
                + (f"about {low}${usd:,.2f} (at most ${usd_max:,.2f})" if usd is not None else price))


def evaluation_estimate(cases: Sequence[Case], skills: SkillSet, config: FramesConfig, samples: int) -> Estimate:
    """What evaluating `skills` on `cases` × `samples` will spend (see the module docstring)."""
    out = Estimate.of(config)
    add_evaluation(out, cases, skills, config, samples)
    return out


def add_evaluation(
    out: Estimate, cases: Sequence[Case], skills: SkillSet, config: FramesConfig, samples: int, times: int = 1,
    max_times: int | None = None,
) -> None:
    """Add `times` evaluations (`max_times` at most, default `times`) of `skills` on `cases` × `samples` to `out`."""
    if not cases:
        return
    # A lost result is evaluated again, whole conversation, up to `eval.lost_retries` times.
    bound = (times if max_times is None else max_times) * samples * (1 + config.eval.lost_retries)
    if config.executor.kind == "builtin":
        out.role("executor", config.models.executor).add(_executor(cases, skills, config), times * samples, bound)
    rubric = [c for c in cases if c.task.check.kind == "rubric"]
    if rubric:
        out.role("judge", config.models.judge).add(_judge(rubric, config), times * samples, bound)


def _executor(cases: Sequence[Case], skills: SkillSet, config: FramesConfig) -> RoleEstimate:
    """One evaluation of every case, one sample, by the built-in agent."""
    from frames_cli.executor.base import request_text
    from frames_cli.executor.builtin import first_turn
    from frames_cli.executor.catalog import Catalog
    from frames_cli.llm.messages.prompts import render

    ex, llm = config.executor, config.llm
    catalog = Catalog.of(skills)
    blocks = sorted((approx_tokens(catalog.block(i)) for i in catalog.listed), reverse=True)
    loads = min(ex.max_skill_loads, len(blocks))
    mean_block = sum(blocks) / len(blocks) if blocks else 0
    answer_turn = approx_tokens(render("executor_answer", case_id="x", skills=""))
    follow_up_max = max(
        answer_turn + sum(blocks[:loads]),
        approx_tokens(render("executor_retry", case_id="x", unknown="", valid=", ".join(catalog.ids))),
    )
    repair_turn = approx_tokens(render("repair", errors="")) + 50
    calls_per_case = (ex.max_turns + 1) * (1 + llm.repair_turns)
    est = RoleEstimate()
    for case in cases:
        first = approx_tokens(
            first_turn(catalog, case.id, request_text(case.agent_view().input), case.task.answer_format or "JSON",
                       ex.max_skill_loads)
        )
        answer = approx_tokens(json.dumps(case.task.expected, ensure_ascii=False)) + ANSWER_OVERHEAD
        load_reply = LOAD_TOKENS_PER_ID * loads + 5
        if loads:
            est.calls += 2
            est.prompt_tokens += first + first + load_reply + answer_turn + round(loads * mean_block)
            est.completion_tokens += load_reply + answer
        else:
            est.calls += 1
            est.prompt_tokens += first
            est.completion_tokens += answer
        # The longest conversation: every turn a load (or a retry) and every call a repair turn.
        largest = first + (calls_per_case - 1) * (llm.max_output_tokens + max(follow_up_max, repair_turn))
        est.calls_max += calls_per_case
        est.max_tokens += calls_per_case * (largest + llm.max_output_tokens)
    return est


def _judge(cases: Sequence[Case], config: FramesConfig) -> RoleEstimate:
    """One rubric verdict per case: the real judge prompt, with an answer of JUDGED_ANSWER_CHARS."""
    from frames_cli.evaluation.checks import RubricCheck

    llm = config.llm
    est = RoleEstimate()
    for case in cases:
        request = RubricCheck(None).request(case, "x" * JUDGED_ANSWER_CHARS)  # type: ignore[arg-type]
        prompt = approx_tokens("\n\n".join(m["content"] for m in request.messages))
        est.calls += 1
        est.calls_max += 1 + llm.repair_turns
        est.prompt_tokens += prompt
        est.completion_tokens += VERDICT_TOKENS
        est.max_tokens += (1 + llm.repair_turns) * (prompt + (1 + llm.repair_turns) * llm.max_output_tokens)
    return est


def budget_warning(estimate: Estimate, max_tokens: int | None, max_usd: float | None) -> str | None:
    """A warning when the expected spend exceeds the budget (`budget.max_tokens`, `budget.max_usd`), else None.

    The run still starts (the estimate assumes the longest run); it stops when the budget is spent.
    """
    over = []
    if max_tokens is not None and estimate.tokens > max_tokens:
        over.append(f"about {estimate.tokens:,} tokens > budget.max_tokens {max_tokens:,}")
    usd = estimate.usd()[0]
    if max_usd is not None and usd is not None and usd > max_usd:
        over.append(f"about ${usd:,.2f} > budget.max_usd ${max_usd:,.2f}")
    if not over:
        return None
    return (
        f"warning: the estimate exceeds the budget ({'; '.join(over)}): the run will stop when the budget is spent; "
        "raise it in frames.yaml to run to the end"
    )


def budget_sentence(estimate: Estimate, max_tokens: int | None, max_usd: float | None) -> str:
    """One sentence putting the estimate's bound beside the budget, so "at most" is never read alone.

    The bound (`Estimate.max_tokens`) assumes every round, retry and repair turn; the budget stops
    a run before it goes further. Returns `budget_warning`'s line when the expected spend already
    exceeds the budget, else what stops the run first and what that costs at most (the budget's
    share of the bound's price, at the prices litellm knows).
    """
    warning = budget_warning(estimate, max_tokens, max_usd)
    if warning:
        return warning
    usd, usd_max = estimate.usd()
    if max_tokens is None and max_usd is None:
        return ("budget: none set (budget.max_tokens: null), so only the run's own stopping rules end it; "
                f"the bound of {estimate.max_tokens:,} tokens is what it could spend at worst")
    caps = []
    if max_tokens is not None and max_tokens < estimate.max_tokens:
        price = f", about ${usd_max * max_tokens / estimate.max_tokens:,.2f} at most" if usd_max else ""
        caps.append(f"{max_tokens:,} tokens (budget.max_tokens{price})")
    if max_usd is not None and usd_max is not None and max_usd < usd_max:
        caps.append(f"${max_usd:,.2f} (budget.max_usd)")
    if caps:
        return (f"budget: the run stops at {' or '.join(caps)}, before the bound of {estimate.max_tokens:,} tokens, "
                f"which assumes every round, retry and repair turn; the expected spend fits the budget")
    return (
        f"budget: the bound of {estimate.max_tokens:,} tokens fits the budget, so the run's own stopping rules end it"
    )
