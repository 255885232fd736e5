"""One litellm call and its outcome as plain data, the same whether it runs in a thread or a worker process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frames_cli.llm import providers


@dataclass(frozen=True)
class CallOutcome:
    """What ModelClient needs from one `litellm.completion`: small, picklable, no litellm types.

    Attributes:
        text / finish_reason: the first choice's content and finish reason (None on failure).
        prompt_tokens / completion_tokens: usage as the provider reported it (tokens).
        cost_usd: litellm's `response_cost` (USD), None when litellm does not know the price.
        fingerprint: the provider's `system_fingerprint`, if any.
        error: "<ExceptionType>: <message>" when the call failed, else None.
        retriable: the failure was a rate limit, timeout, connection or server error, which the
            client retries with backoff; other provider errors (bad request, auth) are final.
        lost: the call got no answer because the worker process making it ended (retriable, and
            re-sent at once as the same attempt: no provider reported a failure).
    """

    text: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    fingerprint: str | None = None
    error: str | None = None
    retriable: bool = False
    lost: bool = False


def invoke(kwargs: dict[str, Any]) -> CallOutcome:
    """`litellm.completion(**kwargs)` reduced to a CallOutcome; provider errors become outcomes.

    litellm's background logging step is skipped (see `providers.internal_call_flag`).

    Raises:
        Exception: anything that is not a provider error (`openai.APIError`, the base of litellm's
            provider exceptions): a defect, which must not pass for a failed call.
    """
    litellm = providers.litellm_module()
    import openai

    retriable = (litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError, litellm.InternalServerError, litellm.ServiceUnavailableError)
    # litellm hands every finished call to a background thread that builds its logging payload
    # even for "no-log" calls: ~0.3 ms of CPU per call under the GIL, a quarter of litellm's own
    # cost, for nothing we read (cost and usage are on the response already). Its flag for
    # nested internal calls skips that hand-off (docs/DECISIONS.md).
    quiet = providers.internal_call_flag()
    token = quiet.set(True)
    try:
        response = litellm.completion(**kwargs)
    except retriable as exc:
        return CallOutcome(error=f"{type(exc).__name__}: {exc}", retriable=True)
    except openai.APIError as exc:
        return CallOutcome(error=f"{type(exc).__name__}: {exc}")
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
        fingerprint=getattr(response, "system_fingerprint", None),
    )
