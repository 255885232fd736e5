"""`frames.yaml`'s settings: the dataclasses and their defaults (read and rendered by workspace/config_file.py).

Every setting lives in exactly one dataclass field below (the `evolution:` section's in evolution_config.py);
its `doc` metadata is the comment that `frames init` writes (`config_file.render_config`), so the template
and the defaults cannot drift apart.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

# Every section's dataclass is imported from here, the evolution section's too (re-exported).
from frames_cli.workspace.evolution_config import CostConfig as CostConfig
from frames_cli.workspace.evolution_config import EvolutionConfig
from frames_cli.workspace.evolution_config import GuardsConfig as GuardsConfig
from frames_cli.workspace.evolution_config import PendingConfig as PendingConfig
from frames_cli.workspace.evolution_config import RetrievalConfig as RetrievalConfig
from frames_cli.workspace.evolution_config import SplitConfig as SplitConfig
from frames_cli.workspace.setting import MAX_SEED
from frames_cli.workspace.setting import setting as _f

CONFIG_FILE = "frames.yaml"
CONFIG_VERSION = 1
#: A model `frames-sim/<role>` runs on the simulator (llm.transport.providers registers it with litellm);
#: the roles it plays. Here, not beside the provider, so reading frames.yaml checks them without the model layer.
SIM_PREFIX = "frames-sim"
SIM_ROLES = ("executor", "diagnoser", "rewriter", "generator", "judge", "coldstart")


@dataclass(frozen=True)
class ModelsConfig:
    """Model per role: any litellm model string, `frames-sim/<role>` or `spool/<name>`; null = none."""

    executor: str | None = _f(None, "agent under test (built-in executor)", model=True)
    diagnoser: str | None = _f(None, "reads failing cases and proposes skill changes", model=True)
    rewriter: str | None = _f(None, "applies a blueprint to one skill", model=True)
    generator: str | None = _f(None, "writes new cases for uncovered policy sections", model=True)
    judge: str | None = _f(None, "grades `rubric` checks", model=True)
    keys: str | None = _f(
        None, "reads the answer key from reviewer comments (review-log, trace notes); null = the rule-based reader",
        model=True,
    )
    coldstart: str | None = _f(None, "rewrites policy sections into procedures; null keeps text verbatim", model=True)


#: Calls in flight per `llm.processes` worker at most: a worker's pipes reach it through the fork
#: server as file descriptors in one message, and Linux passes at most 253 per message (SCM_MAX_FD).
MAX_CALLS_PER_PROCESS = 240


@dataclass(frozen=True)
class LLMConfig:
    """How model calls are made (DESIGN §7)."""

    concurrency: int = _f(8, "model calls in flight at once", min=1, max=1024)
    processes: int = _f(
        0,
        "worker processes for the litellm calls (0 = this process; not in `frames eval --jobs` workers); more use "
        "more CPUs for many fast calls",
        min=0, max=64,
    )
    timeout_s: float = _f(60.0, "seconds before one call is abandoned and retried", min=0.001, max=86_400)
    max_retries: int = _f(4, "retries on rate limits, timeouts and connection errors", min=0, max=20)
    backoff_base_s: float = _f(0.5, "first backoff in seconds; doubles each retry, with jitter", min=0.0, max=3600)
    backoff_max_s: float = _f(20.0, "longest backoff in seconds", min=0.0, max=3600)
    temperature: float = _f(0.0, "sampling temperature for every role", min=0.0, max=2.0)
    max_output_tokens: int = _f(4096, "completion token limit per call", min=1, max=1_000_000)
    cache: bool = _f(True, "reuse answers from .frames/cache for identical requests")
    repair_turns: int = _f(1, "turns that show the model its JSON-Schema errors before giving up", min=0, max=5)
    api_base: str | None = _f(None, "base URL for an OpenAI-compatible server (vLLM, Ollama); null = provider default")
    batch: bool | list[str] = _f(
        False,
        "send each stage's calls of these roles (true = all) to the provider's batch API: about half the price, "
        "answers within 24 h; `frames evolve` exits 75 while a batch runs and goes on at a later tick (providers: "
        "openai, azure)",
        roles=True,
    )


#: Default token budget per run (see BudgetConfig.max_tokens).
DEFAULT_MAX_TOKENS = 20_000_000


@dataclass(frozen=True)
class BudgetConfig:
    """Hard spend limits per run; the run stops cleanly between calls when one is reached."""

    # 20 M: the bundled example's run spends about 4.1 M on the simulator (`frames evolve --estimate`
    # says about 3.8 M before it starts); a run far beyond that is a mistake until someone says otherwise.
    max_tokens: int | None = _f(
        DEFAULT_MAX_TOKENS, "prompt + completion tokens per run (each frames eval or evolve); null = no limit", min=1,
        max=10**12,
    )
    max_usd: float | None = _f(
        None, "USD per run where the model's price is known; null = no limit", min=0.0, max=1_000_000
    )


@dataclass(frozen=True)
class ColdstartConfig:
    """How `frames coldstart` cuts policy documents into skills."""

    max_tokens: int = _f(
        1500,
        "largest section (approx. tokens) kept as one skill; longer ones are split between paragraphs, list items or "
        "tables",
        min=50, max=1_000_000,
    )
    min_tokens: int = _f(
        12, "sections under this many (approx.) tokens join a neighbour under the same parent heading", min=0,
        max=1_000_000,
    )
    rewrite_retries: int = _f(
        2, "with models.coldstart: retries, shown the validator's errors, before the verbatim text is kept", min=0,
        max=10,
    )


@dataclass(frozen=True)
class ExecutorConfig:
    """The agent under test (DESIGN §5)."""

    kind: str = _f(
        "builtin", "`builtin` (one LLM call per step) or `command` (your own agent)", choices=("builtin", "command")
    )
    command: list[str] = _f([], "argv of your agent for kind `command`; gets the case on stdin")
    timeout_s: float = _f(
        120.0, "seconds per case before the agent is stopped and the case fails", min=0.001, max=86_400
    )
    max_skill_loads: int = _f(4, "skills the built-in agent may load per case", min=0, max=100)
    max_turns: int = _f(3, "turns the built-in agent may spend asking for skills", min=1, max=50)


@dataclass(frozen=True)
class EvalConfig:
    """`frames eval` defaults."""

    samples: int = _f(1, "k: samples per case (pass@k and pass^k need k > 1)", min=1, max=1000)
    cases: str = _f("cases/*", "glob of case files, relative to the workspace", inside=True)
    jobs: int = _f(
        1, "worker processes `frames eval` spreads the cases over (each gets 1/jobs of the budget)", min=1, max=256
    )
    lost_retries: int = _f(
        2,
        "times a case whose answer was lost (provider errors after every retry, a reply still malformed) is run again "
        "before it is left out of the scores",
        min=0, max=10,
    )
    backend: str = _f(
        "local",
        "where a command agent (`executor.kind: command`) runs: `local` (this machine) or `ray` (Ray tasks on the "
        "cluster of RAY_ADDRESS, else a local one; pip install 'frames-cli[ray]')",
        choices=("local", "ray"),
    )
    ray_cpus: float = _f(
        1.0, "with backend ray: CPUs each agent run reserves on the cluster (a fraction puts several on one CPU)",
        min=0.01, max=1024.0,
    )


@dataclass(frozen=True)
class IngestConfig:
    """`frames ingest`: how feedback becomes cases, priors and generated cases."""

    category: str = _f("uncategorized", "category of imported rows that name none")
    evidence_match: float = _f(
        0.6, "share of an evidence sentence's words a policy text must hold to count as its source", min=0.0, max=1.0
    )
    prior_min_score: float = _f(
        1.0, "lowest BM25 score for attaching advice to a skill; weaker matches stay unmatched", min=0.0, max=1000.0
    )
    prior_max_skills: int = _f(2, "skills one piece of advice is attached to at most", min=1, max=100)
    delayed_failure_steps: int = _f(
        2, "steps between a trace's first error and its end from which the whole trajectory is kept", min=1, max=10_000
    )
    generated_per_section: int = _f(2, "cases the generator is asked for per uncovered policy section", min=1, max=100)


@dataclass(frozen=True)
class FaultsConfig:
    """Faults the simulator injects, as probabilities per call (for reliability tests)."""

    rate_limit: float = _f(0.0, "raise a rate-limit error", min=0.0, max=1.0)
    timeout: float = _f(0.0, "raise a timeout", min=0.0, max=1.0)
    malformed_json: float = _f(0.0, "answer with broken JSON", min=0.0, max=1.0)
    truncated: float = _f(0.0, "cut the answer short", min=0.0, max=1.0)


@dataclass(frozen=True)
class SimulatorConfig:
    """`frames-sim`: a model of LLM behaviour, not an LLM (DESIGN §8)."""

    seed: int = _f(0, "seed; the same seed gives the same answers", min=0, max=MAX_SEED)
    floor: float = _f(
        0.1, "P(correct) of the executor when its skills tell it nothing about the case", min=0.0, max=1.0
    )
    ceiling: float = _f(0.95, "P(correct) when its skills state every rule the case turns on", min=0.0, max=1.0)
    policy_reading: float = _f(
        0.0,
        "how much of the policy section that decides a case the executor applies when its loaded skills hold it, "
        "without a sentence stating the case's rule (0 = a weak model; docs/simulator.md: a strong model)",
        min=0.0, max=1.0,
    )
    loads: int = _f(
        3,
        "skills the simulated executor loads per case: the best Okapi BM25 matches of its catalog lines (at most "
        "`executor.max_skill_loads`)",
        min=1, max=100,
    )
    p_insight: float = _f(
        0.6,
        "P(a diagnoser finds the real cause of a failure: the case's rules, without its values, and its policy "
        "section's statements that the retrieved policy shows and no skill states)",
        min=0.0, max=1.0,
    )
    p_literal: float = _f(
        0.5,
        "P(a diagnoser that misses the cause copies the case's evidence, values and all, instead of proposing noise)",
        min=0.0, max=1.0,
    )
    p_forget: float = _f(0.25, "P(the rewriter drops an existing rule sentence)", min=0.0, max=1.0)
    p_forget_anchored: float = _f(0.08, "the same when anchor cases are in the prompt", min=0.0, max=1.0)
    p_verbose: float = _f(0.3, "P(the rewriter states a rule it adds twice, in other words)", min=0.0, max=1.0)
    latency_s: float = _f(0.0, "seconds each simulated call takes", min=0.0, max=3600)
    mislabelled: list[str] = _f(
        [],
        "ids of cases whose expected result the simulated world holds to contradict the policy: a diagnoser that sees "
        "the cause (p_insight) disputes the case instead of proposing a rule",
    )
    faults: FaultsConfig = field(default_factory=FaultsConfig, metadata={"doc": "fault injection"})


@dataclass(frozen=True)
class SpoolConfig:
    """The spool provider: a person or program answers each request file (air-gapped teams)."""

    dir: str = _f(".frames/spool", "folder for request and answer files, relative to the workspace", inside=True)
    timeout_s: float = _f(3600.0, "seconds to wait for an answer file", min=0.001, max=2_592_000)
    poll_s: float = _f(1.0, "seconds between looks for the answer", min=0.001, max=3600)


@dataclass(frozen=True)
class FramesConfig:
    """The whole of `frames.yaml`. Load with `load_config`; defaults are `FramesConfig()`."""

    version: int = _f(CONFIG_VERSION, "format version of this file", min=1, max=CONFIG_VERSION)
    models: ModelsConfig = field(
        default_factory=ModelsConfig,
        metadata={
            "doc": "model per role: any litellm model (openai/gpt-4.1-mini; key from its usual variable), "
            "frames-sim/<role> (the simulator) or spool/<name>"
        },
    )
    llm: LLMConfig = field(default_factory=LLMConfig, metadata={"doc": "model calls"})
    budget: BudgetConfig = field(default_factory=BudgetConfig, metadata={"doc": "spend limits per run"})
    evolution: EvolutionConfig = field(default_factory=EvolutionConfig, metadata={"doc": "frames evolve"})
    coldstart: ColdstartConfig = field(default_factory=ColdstartConfig, metadata={"doc": "frames coldstart"})
    executor: ExecutorConfig = field(default_factory=ExecutorConfig, metadata={"doc": "agent under test"})
    eval: EvalConfig = field(default_factory=EvalConfig, metadata={"doc": "frames eval"})
    ingest: IngestConfig = field(default_factory=IngestConfig, metadata={"doc": "frames ingest"})
    simulator: SimulatorConfig = field(default_factory=SimulatorConfig, metadata={"doc": "frames-sim"})
    spool: SpoolConfig = field(default_factory=SpoolConfig, metadata={"doc": "spool provider"})


#: The settings `frames init` writes into a new frames.yaml: what a team sets first (models,
#: spend, the evolution basics). Every other setting keeps its default and is described in
#: docs/settings.md (generated from the `doc` metadata above by workspace/settings_doc.py).
TEAM_SETTINGS = (
    "version",
    "models.executor", "models.diagnoser", "models.rewriter", "models.generator", "models.judge", "models.coldstart",
    "budget.max_tokens", "budget.max_usd",
    "evolution.max_rounds", "evolution.patience", "evolution.tolerance", "evolution.gate",
    "eval.samples",
)

#: Keys a frames.yaml may still hold that no setting reads any more, each with why it went. Such a
#: key is ignored with a warning naming the file and line (config_file.RetiredSetting), so that a
#: file an older `frames init` wrote keeps working (docs/decisions/0088).
RETIRED_SETTINGS = {
    "evolution.regression_sample": "pool cases are workspace cases, placed in a set by `evolution.split`",
}

#: Where the reference of every setting lives, relative to the frames repository.
SETTINGS_REFERENCE = "docs/settings.md"


def setting_range(section: str, name: str) -> tuple[float, float]:
    """(min, max) of the numeric setting `section.name` (dotted sections: "evolution"), for command
    options that override it (`typer.Option(min=..., max=...)`), so a flag is bounded as frames.yaml is.

    Raises:
        KeyError: no such setting, or it has no range.
    """
    obj: Any = FramesConfig()
    for part in section.split("."):
        obj = getattr(obj, part)
    meta = {f.name: f.metadata for f in dataclasses.fields(obj)}[name]
    return meta["min"], meta["max"]


def with_overrides(config: FramesConfig, section: str, **changes: Any) -> FramesConfig:
    """Return a copy of `config` with fields of one section replaced (used by CLI flags and benches)."""
    return dataclasses.replace(config, **{section: dataclasses.replace(getattr(config, section), **changes)})
