"""One litellm call and its outcome as plain data, the same whether it runs in a thread or a worker process."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from frames_cli.llm.transport import providers


@dataclass(frozen=True)
class CallOutcome:
    """What ModelClient needs from one `litellm.completion`: small, picklable, no litellm types.

    Attributes:
        text / finish_reason: the first choice's content and finish reason (None on failure).
        prompt_tokens / completion_tokens: usage as the provider reported it (tokens).
        cost_usd: litellm's `response_cost` (USD), None when litellm does not know the price; litellm
            prices cached prompt tokens at the model's `cache_read_input_token_cost` where it has one.
        cached_prompt_tokens: prompt tokens the provider read from its prompt cache (OpenAI-style
            `usage.prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`).
        fingerprint: the provider's `system_fingerprint`, if any.
        error: "<ExceptionType>: <message>" when the call failed, else None.
        retriable: the failure was a rate limit, timeout, connection or server error, which the
            client retries with backoff; other provider errors (bad request, auth) are final.
        lost: the call got no answer because the worker process making it ended (retriable, and
            re-sent at once as the same attempt: no provider reported a failure).
        setup: the provider refused the credentials, does not know the model, or the model string
            names no provider (`setup_error`): final, and every later call of this model would
            fail alike; `error` then names the model, the provider and the key's variable.
    """

    text: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cached_prompt_tokens: int = 0
    fingerprint: str | None = None
    error: str | None = None
    retriable: bool = False
    lost: bool = False
    setup: bool = False


def invoke(kwargs: dict[str, Any]) -> CallOutcome:
    """`litellm.completion(**kwargs)` reduced to a CallOutcome; provider errors become outcomes.

    litellm's background logging step is skipped (see `providers.internal_call_flag`).

    Raises:
        Exception: anything that is not a provider error (`openai.APIError`, the base of litellm's
            provider exceptions): a defect, which must not pass for a failed call.
    """
    litellm = providers.litellm_module()
    import openai

    retriable = (
        litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError, litellm.InternalServerError,
        litellm.ServiceUnavailableError,
    )
    # litellm hands every finished call to a background thread that builds its logging payload
    # even for "no-log" calls: ~0.3 ms of CPU per call under the GIL, a quarter of litellm's own
    # cost, for nothing we read (cost and usage are on the response already). Its flag for
    # nested internal calls skips that hand-off (docs/decisions/0010-litellm-success-logging-skipped.md).
    quiet = providers.internal_call_flag()
    token = quiet.set(True)
    try:
        response = litellm.completion(**kwargs)
    except openai.APIError as exc:
        setup = setup_error(exc, kwargs["model"])
        if setup is not None:
            return CallOutcome(error=setup, setup=True)
        return CallOutcome(error=f"{type(exc).__name__}: {exc}", retriable=isinstance(exc, retriable))
    finally:
        quiet.reset(token)
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    return CallOutcome(
        text=choice.message.content,
        finish_reason=choice.finish_reason,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cost_usd=response._hidden_params.get("response_cost"),
        cached_prompt_tokens=cached_tokens(usage),
        fingerprint=getattr(response, "system_fingerprint", None),
    )


# litellm reports a missing OpenAI key as an InternalServerError (the openai client refuses to start
# without one), which looks temporary; its text is the only sign.
_MISSING_KEY_RE = re.compile(r"missing credentials|api[_ ]?key", re.IGNORECASE)


def setup_error(exc: Exception, model: str) -> str | None:
    """The message for a provider error that no retry can cure, else None.

    Such errors: authentication or permission refused (401, 403), the model unknown to the
    provider (404), a model string litellm maps to no provider, and a missing API key that litellm
    reports as a server error. The message names the model, the provider, the environment
    variable(s) litellm reads the key from (`litellm.validate_environment`) and whether they are
    set, then the provider's own error.
    """
    litellm = providers.litellm_module()
    original = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, litellm.BadRequestError) and "LLM Provider NOT provided" in str(exc):
        return (f"{model}: litellm knows no provider for this model string; write it as <provider>/<model>, "
                f"for example openai/gpt-4.1-mini ({original.splitlines()[0]})")
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)):
        what = "the provider refused the credentials"
    elif isinstance(exc, litellm.NotFoundError):
        what = "the provider does not know this model (check the model name)"
    elif isinstance(exc, (litellm.InternalServerError, litellm.APIConnectionError)) and _MISSING_KEY_RE.search(
        str(exc)
    ):
        what = "no API key"
    else:
        return None
    missing = list(litellm.validate_environment(model=model).get("missing_keys") or [])
    if what == "no API key" and not missing:
        return None  # the key is there: a server error that merely mentions keys
    try:
        provider = litellm.get_llm_provider(model)[1]
    except litellm.BadRequestError:
        provider = "unknown"
    if missing:
        key = f"set the environment variable {' or '.join(missing)} (not set here)"
    else:
        key = (
            f"the key is read from the provider's environment variable ({_key_names(provider)}), which is set: check "
            "its value and the account's access to the model"
        )
    return f"{model} (provider {provider}): {what}; {key} ({original})"


def _key_names(provider: str) -> str:
    """The usual key variable of `provider` (litellm's convention: <PROVIDER>_API_KEY)."""
    return f"{provider.upper().replace('-', '_')}_API_KEY"


def cached_tokens(usage: Any) -> int:
    """Prompt tokens a provider served from its prompt cache, from a litellm `Usage` (0 when it says none)."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if not cached:
        cached = getattr(usage, "cache_read_input_tokens", None)
    return int(cached or 0)
