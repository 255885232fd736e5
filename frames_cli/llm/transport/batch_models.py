"""Which calls batch mode can send (`llm.batch`): the roles it names, whether a model's provider has a
batch API frames can use (BATCH_PROVIDERS), and a model's batch price; `batch_notices` says before a run
which batched calls will be made one by one or priced at the regular rate. The batches themselves are
`llm/transport/batch.py`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frames_cli.llm.transport import providers

if TYPE_CHECKING:
    from frames_cli.workspace.config import FramesConfig

#: Providers (litellm's names) whose batch API takes OpenAI-format request lines through litellm.
BATCH_PROVIDERS = ("openai", "azure")


def batch_provider(model: str) -> str | None:
    """litellm's provider name of `model` when its batch API can take our batches, else None."""
    if model.startswith((providers.SIM_PREFIX + "/", providers.SPOOL_PREFIX + "/")):
        return None
    litellm = providers.litellm_module()
    try:
        provider = litellm.get_llm_provider(model)[1]
    except litellm.BadRequestError:
        return None
    return provider if provider in BATCH_PROVIDERS else None


def batched_roles(config: FramesConfig) -> list[str]:
    """The roles `llm.batch` names (true: every role with a model), in the order of `models`."""
    batch = config.llm.batch
    roles = [role for role, model in vars(config.models).items() if model]
    return roles if batch is True else [r for r in roles if batch and r in batch]


def batch_notices(config: FramesConfig) -> list[str]:
    """One line per batched role whose model has no batch API frames can use (its calls are then
    made one by one), and one per batched model whose batch price litellm does not know (priced at
    its regular price); [] when batch mode is off. Said before a run starts."""
    lines = []
    for role in batched_roles(config):
        model = getattr(config.models, role)
        if batch_provider(model) is None:
            lines.append(
                f"llm.batch: {role}'s model {model} has no batch API frames can use (providers: "
                f"{', '.join(BATCH_PROVIDERS)}); its calls are made one by one at the regular price"
            )
        elif batch_price(model)[2] is False:
            lines.append(
                f"llm.batch: litellm knows no batch price for {model}; its batch calls are counted at the regular price"
            )
    return lines


def batch_price(model: str) -> tuple[float | None, float | None, bool]:
    """(USD per input token, USD per output token, whether these are batch prices) of `model`
    from litellm's price table: its `*_cost_per_token_batches` where known, else the regular
    price (None, None when it has none)."""
    litellm = providers.litellm_module()
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # noqa: BLE001 - litellm raises a bare Exception for a model it does not know
        return None, None, False
    batch_in, batch_out = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    if batch_in is not None and batch_out is not None:
        return batch_in, batch_out, True
    return info.get("input_cost_per_token"), info.get("output_cost_per_token"), False
