"""The spool provider `spool/<name>`: a person or program answers request files in a folder."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from litellm.llms.custom_llm import CustomLLM

from frames_cli.llm.store.audit import Redactor
from frames_cli.llm.transport.providers import SAMPLE_KEY, SPOOL_PREFIX, context_of, make_response
from frames_cli.tokens import approx_tokens
from frames_cli.files.atomic import atomic_write_text
from frames_cli.files.links import refuse_symlink

#: Largest answer file read: four times the longest text an answer schema allows (llm/messages/schemas.MAX_TEXT).
MAX_ANSWER_BYTES = 3_200_000


def spool_id(name: str, messages: list[dict[str, Any]], sample: int) -> str:
    """Stable id of a request: the same question gets the same files (an answer survives a restart)."""
    blob = json.dumps([name, messages, sample], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


class SpoolProvider(CustomLLM):
    """Writes `<spool.dir>/<id>.request.json` and waits for `<id>.answer.txt` (the raw reply text).

    The request file holds the model name, the messages (secrets redacted) and the name of the
    answer file. The
    answer is taken once it is non-empty and unchanged for one poll (`spool.poll_s`), so an editor
    saving in place is not read half-way; programs should write a temporary file and rename it.
    No answer within `spool.timeout_s` raises litellm's Timeout (the client does not retry it: a
    person who did not answer will not answer faster when asked again). Usage is estimated at
    ⌈characters / 4⌉ tokens; the cost is unknown.
    """

    def completion(
        self, model: str, messages: list, *args: Any, litellm_params: dict | None = None, **kwargs: Any
    ) -> Any:
        """Write the request file (unless its answer is already there) and wait for the answer.

        Args:
            model: the spool name (litellm passes it without `spool/`).
            messages: chat messages, written (redacted) into the request file.
            litellm_params: carries the ModelClient's metadata (context key, sample).

        Returns:
            a litellm ModelResponse with the answer file's text, usage estimated in tokens, no cost.

        Raises:
            litellm.Timeout: no answer within `spool.timeout_s` seconds, or the client closed.
            litellm.BadRequestError: the call was not made through a ModelClient; the answer file
                is over MAX_ANSWER_BYTES or not UTF-8 (a failed call, not retried).
        """
        import litellm

        context, metadata = context_of(litellm_params)
        folder = context.root / context.spool.dir
        # `spool.dir` is checked relative and inside (config); a link on its way could still lead out.
        refuse_symlink(context.root, folder, context.spool.dir)
        rid = spool_id(model, messages, int(metadata.get(SAMPLE_KEY, 0)))
        answer = folder / f"{rid}.answer.txt"
        request = folder / f"{rid}.request.json"
        if not answer.exists():
            created = datetime.now(UTC).isoformat(timespec="seconds")
            record = {
                "id": rid, "model": f"{SPOOL_PREFIX}/{model}", "created": created, "answer_file": answer.name,
                "messages": messages,
            }
            # Whoever answers sees the prompt, never a credential that slipped into it.
            atomic_write_text(request, Redactor()(json.dumps(record, indent=2, ensure_ascii=False)) + "\n")
        context.spool_waits.start(rid)
        try:
            data = _wait(answer, context.spool.timeout_s, context.spool.poll_s, context.closed,
                         lambda: context.spool_waits.poll(str(folder)))
        finally:
            context.spool_waits.done(rid)
        if data is None:
            raise litellm.Timeout(
                f"spool: no answer in {answer} after {context.spool.timeout_s} s", model=model,
                llm_provider=SPOOL_PREFIX,
            )
        # Whoever answers is trusted no more than a model: an answer that is no text is a failed call.
        if len(data) > MAX_ANSWER_BYTES:
            raise litellm.BadRequestError(
                f"spool: the answer {answer.name} is over {MAX_ANSWER_BYTES:,} bytes", model=model,
                llm_provider=SPOOL_PREFIX,
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise litellm.BadRequestError(
                f"spool: the answer {answer.name} is not UTF-8 text (byte {exc.start})", model=model,
                llm_provider=SPOOL_PREFIX,
            ) from None
        prompt = "\n\n".join(str(m.get("content") or "") for m in messages)
        return make_response(f"{SPOOL_PREFIX}/{model}", text, "stop", approx_tokens(prompt), approx_tokens(text))

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
        """`completion` in a worker thread (it blocks polling the answer file); same returns and errors."""
        return await asyncio.to_thread(self.completion, model, messages, *args, **kwargs)


def _wait(
    path: Path, timeout_s: float, poll_s: float, stop: threading.Event, waiting: Callable[[], None]
) -> bytes | None:
    """The bytes of `path` (at most MAX_ANSWER_BYTES + 1) once it exists, is non-empty and stopped growing;
    None at the deadline or as soon as `stop` is set (the client closed, e.g. after Ctrl-C). `waiting` is
    called at each look (at most every second) and prints the line about pending requests when due."""
    deadline = time.monotonic() + timeout_s
    last = -1
    while time.monotonic() < deadline:
        size = path.stat().st_size if path.exists() else 0
        if size and size == last:
            with open(path, "rb") as fh:
                return fh.read(MAX_ANSWER_BYTES + 1)
        last = size
        waiting()
        if stop.wait(min(poll_s, 1.0) if not size else poll_s):
            return None
    return None


def litellm_provider() -> Any:
    """The spool as a litellm custom provider (found through `registry.PROVIDERS`)."""
    from frames_cli.llm.transport.providers import SPOOL_PREFIX, LiteLLMProvider

    return LiteLLMProvider(SPOOL_PREFIX, SpoolProvider())
