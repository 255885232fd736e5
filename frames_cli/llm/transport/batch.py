"""Batch mode (`llm.batch`): a stage's model calls go to the provider's batch API as one batch per model,
and a later `frames evolve` (or `frames eval`) takes the answers once the provider has them.

The journal in `.frames/batches/` holds what was sent (`batches.jsonl`: one line per batch and per
change of its state) and what came back (`results.jsonl`: one line per request, keyed by
`call_key`). A call of a batched role whose answer is there is answered from it; one that is in a
batch still running waits; any other is queued, and when the stage's requests have all been tried
(`ModelClient.chat_many` / `gather`) the queue is sent as one batch per model and the command stops
with `BatchPending` (exit 75, like a held lock, so cron skips quietly and tries again on its next
tick). Everything answered so far is in the model cache and the run's checkpoint, so the next tick
replays to the same calls and finds their answers. Through litellm's `create_file`,
`create_batch`, `retrieve_batch` and `file_content` (litellm==1.108.14), for the providers whose
batches take OpenAI's request lines: `batch_models.BATCH_PROVIDERS`.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.errors import EXIT_LOCKED, FramesError, ModelError
from frames_cli.llm.transport import providers
from frames_cli.llm.transport.batch_models import batch_price, batch_provider
from frames_cli.llm.transport.calls import CallOutcome, setup_error

if TYPE_CHECKING:
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: Folder under `.frames/` that holds the journal.
BATCH_DIR = "batches"
#: Batch states after which the provider does nothing more (OpenAI's names).
ENDED = ("completed", "failed", "expired", "cancelled")
#: Answered lines with these HTTP statuses are retried (in a later batch); others are final.
RETRIED_STATUS = (408, 409, 429)


class BatchWait(Exception):
    """Raised in the thread that makes a call whose answer is in a batch not finished yet (or just
    queued): the request stops there; `ModelClient` turns it into `BatchPending` once the stage ends."""


class BatchPending(FramesError):
    """The command waits for provider batches; exit code 75 (EX_TEMPFAIL): run it again later."""

    exit_code = EXIT_LOCKED


@dataclass
class BatchRecord:
    """One batch sent to a provider.

    Attributes:
        id: the provider's batch id. model: the litellm model string; provider: litellm's provider name.
        input_file_id / output_file_id / error_file_id: the provider's file ids (the last two once ended).
        created: when it was sent (seconds since the epoch). keys: the `call_key` of every request in it.
        status: the provider's last reported state; done: its results are in `results.jsonl`.
    """

    id: str
    model: str
    provider: str
    input_file_id: str
    created: float
    keys: list[str]
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    done: bool = False


def call_key(kwargs: dict[str, Any]) -> str:
    """Hex sha256 of what decides one call's answer: model, messages, temperature, output limit,
    response format, the attempt number (a retry is a new request) and the sample number (sample k
    of a request is an independent draw, as in the model cache's key: llm/store/cache.request_key)."""
    metadata = kwargs.get("metadata") or {}
    attempt, sample = metadata.get(providers.ATTEMPT_KEY, 0), metadata.get(providers.SAMPLE_KEY, 0)
    parts = [
        kwargs["model"], kwargs["messages"], kwargs.get("temperature"), kwargs.get("max_tokens"),
        kwargs.get("response_format"), attempt, sample,
    ]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class BatchJournal:
    """The workspace's batches: queue, send, poll, and the answers that came back (module docstring).

    Thread-safe: worker threads ask `outcome` and `queue`; `submit` and `refresh` run between stages.

    Args:
        folder: `.frames/batches`. api_base: `llm.api_base` (an OpenAI-compatible server), or None.
        timeout_s: `llm.timeout_s`, for each file and batch request.
    """

    def __init__(self, folder: Path, api_base: str | None, timeout_s: float):
        self.dir = Path(folder)
        self.api_base = api_base
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._batches: dict[str, BatchRecord] = {}
        self._results: dict[str, dict[str, Any]] = {}
        self._queued: dict[str, tuple[str, dict[str, Any]]] = {}
        self._sent: dict[str, str] = {}  # call key → the batch it was sent in
        self._load()

    @classmethod
    def of(cls, ws: Workspace, config: FramesConfig) -> BatchJournal:
        """The journal of workspace `ws` (`.frames/batches/`)."""
        return cls(ws.state_dir / BATCH_DIR, config.llm.api_base, config.llm.timeout_s)

    def _load(self) -> None:
        for line in _lines(self.dir / "batches.jsonl"):
            self._batches[line["id"]] = BatchRecord(**line)
            self._sent.update(dict.fromkeys(line["keys"], line["id"]))
        for line in _lines(self.dir / "results.jsonl"):
            self._results[line["key"]] = line

    def _append(self, name: str, records: list[dict[str, Any]]) -> None:
        """Append whole lines to `<dir>/<name>` in one write, flushed to disk (lock held)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode("utf-8")
        fd = os.open(self.dir / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)

    # --- in the threads that make calls ------------------------------------------------------------

    def outcome(self, kwargs: dict[str, Any]) -> CallOutcome:
        """The answer of the call `kwargs` (litellm.completion's) from a finished batch, priced at the
        model's batch price.

        Raises:
            BatchWait: the call is in a batch not finished yet, or was queued now for the next one.
        """
        key = call_key(kwargs)
        with self._lock:
            found = self._results.get(key)
            if found is None:
                sent = self._sent.get(key)
                if sent is None:
                    self._queued[key] = (kwargs["model"], _body(kwargs))
                raise BatchWait(key)  # queued now, or in a batch still running
        if found.get("error"):
            return CallOutcome(error=f"BatchError: {found['error']}", retriable=bool(found.get("retriable")))
        price_in, price_out, _ = batch_price(kwargs["model"])
        cost = (
            None if price_in is None or price_out is None
            else found["prompt_tokens"] * price_in + found["completion_tokens"] * price_out
        )
        return CallOutcome(
            text=found["text"], finish_reason=found.get("finish_reason"), prompt_tokens=found["prompt_tokens"],
            completion_tokens=found["completion_tokens"], cost_usd=cost,
            cached_prompt_tokens=found.get("cached_prompt_tokens", 0),
        )

    # --- between stages ---------------------------------------------------------------------------

    def submit(self) -> list[BatchRecord]:
        """Send the queued calls as one batch per model; returns the batches sent (none when nothing is queued).

        Raises:
            ModelError: the provider refused the file or the batch (exit code 1; the calls stay
                queued in this process only, so the next run asks for them again).
        """
        with self._lock:
            queued, self._queued = self._queued, {}
        by_model: dict[str, dict[str, dict[str, Any]]] = {}
        for key, (model, body) in queued.items():
            by_model.setdefault(model, {})[key] = body
        sent = []
        litellm = providers.litellm_module()
        for model, bodies in sorted(by_model.items()):
            provider = batch_provider(model) or "openai"
            lines = "".join(
                json.dumps(
                    {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body},
                    ensure_ascii=False,
                )
                + "\n"
                for key, body in bodies.items()
            )
            try:
                upload = litellm.create_file(
                    file=("frames-batch.jsonl", lines.encode("utf-8")), purpose="batch", custom_llm_provider=provider,
                    **self._where(),
                )
                batch = litellm.create_batch(
                    completion_window="24h", endpoint="/v1/chat/completions", input_file_id=upload.id,
                    custom_llm_provider=provider, metadata={"sent_by": "frames"}, **self._where(),
                )
            except Exception as exc:  # noqa: BLE001 - any provider failure; named in the error
                raise ModelError(f"{model}: the provider refused a batch of {len(bodies)} request(s): "
                                 f"{setup_error(exc, model) or f'{type(exc).__name__}: {exc}'}") from None
            record = BatchRecord(
                batch.id, model, provider, upload.id, time.time(), sorted(bodies), str(batch.status or "validating")
            )
            with self._lock:
                self._batches[record.id] = record
                self._sent.update(dict.fromkeys(record.keys, record.id))
                self._append("batches.jsonl", [asdict(record)])
            sent.append(record)
        return sent

    def pending(self) -> list[BatchRecord]:
        """The batches sent whose results are not in yet, oldest first."""
        with self._lock:
            return sorted((b for b in self._batches.values() if not b.done), key=lambda b: b.created)

    def refresh(self) -> None:
        """Ask the provider about every pending batch; take in the results of those that ended.

        Raises:
            ModelError: the provider could not be asked (exit code 1).
        """
        litellm = providers.litellm_module()
        for record in self.pending():
            try:
                batch = litellm.retrieve_batch(record.id, custom_llm_provider=record.provider, **self._where())
                status = str(batch.status)
                results = self._read_results(record, batch) if status in ENDED else []
            except Exception as exc:  # noqa: BLE001 - any provider failure; named in the error
                raise ModelError(
                    f"{record.model}: cannot ask the provider about batch {record.id}: {type(exc).__name__}: {exc}"
                ) from None
            with self._lock:
                record.status = status
                if status in ENDED:
                    record.output_file_id, record.error_file_id = batch.output_file_id, batch.error_file_id
                    # Results first: a batch marked done always has its lines (a kill between the two
                    # writes only makes the next refresh read them again).
                    self._append("results.jsonl", results)
                    for r in results:
                        self._results[r["key"]] = r
                    record.done = True
                self._append("batches.jsonl", [asdict(record)])

    def waiting_message(self) -> str:
        """One line: which batches are awaited, how many requests, their state and since when."""
        pending = self.pending()
        if not pending:
            return "no batch pending"
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(pending[0].created))
        listed = ", ".join(f"{b.id} ({len(b.keys)} request(s) to {b.model}, {b.status})" for b in pending)
        return (f"waiting for {len(pending)} provider batch(es) since {since}: {listed}; "
                "run the same command again later (cron does): it goes on from the answers")

    def _read_results(self, record: BatchRecord, batch: Any) -> list[dict[str, Any]]:
        """The result lines of an ended batch: answers, failed lines, and a retriable failure for
        every request of it that has neither (an expired or cancelled batch's unanswered ones)."""
        out: dict[str, dict[str, Any]] = {}
        keys = set(record.keys)
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = providers.litellm_module().file_content(
                file_id=file_id, custom_llm_provider=record.provider, **self._where()
            )
            for line in content.text.splitlines():
                if line.strip():
                    entry = _result(json.loads(line), record.id)
                    if entry["key"] in keys:
                        out[entry["key"]] = entry
        for key in record.keys:
            out.setdefault(
                key,
                {
                    "key": key, "batch": record.id,
                    "error": f"batch {record.id} ended ({batch.status}) without an answer for it", "retriable": True,
                },
            )
        return list(out.values())

    def _where(self) -> dict[str, Any]:
        return {"timeout": self.timeout_s, **({"api_base": self.api_base} if self.api_base else {})}


def _body(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request line's body: what `litellm.completion` would send (model without its provider prefix)."""
    model = providers.litellm_module().get_llm_provider(kwargs["model"])[0]
    body = {
        "model": model, "messages": kwargs["messages"], "temperature": kwargs.get("temperature"),
        "max_tokens": kwargs.get("max_tokens"),
    }
    if kwargs.get("response_format") is not None:
        body["response_format"] = kwargs["response_format"]
    return body


def _result(line: dict[str, Any], batch_id: str) -> dict[str, Any]:
    """One output or error line as a `results.jsonl` entry."""
    key = str(line.get("custom_id"))
    response = line.get("response") or {}
    status = int(response.get("status_code") or 0)
    body = response.get("body") or {}
    if line.get("error") or status != 200:
        error = line.get("error") or body.get("error") or {}
        message = error.get("message") if isinstance(error, dict) else str(error)
        return {"key": key, "batch": batch_id, "error": f"HTTP {status or '?'}: {message or 'no message'}",
                "retriable": status == 0 or status >= 500 or status in RETRIED_STATUS}
    choice = (body.get("choices") or [{}])[0]
    usage = body.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return {
        "key": key, "batch": batch_id, "text": (choice.get("message") or {}).get("content"),
        "finish_reason": choice.get("finish_reason"), "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "cached_prompt_tokens": int(details.get("cached_tokens") or 0),
    }


def _lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a journal file (a line cut short by a crash is skipped)."""
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    out.append(entry)
    except OSError:
        pass
    return out


def wait_for_batches(ws: Workspace, config: FramesConfig) -> None:
    """Before a command replays its calls: take in the results of batches that ended, and stop at
    once while any is still running. Nothing to do when batch mode is off or nothing is pending.

    Raises:
        BatchPending: a batch is still running (exit code 75; the message says which and since when).
        ModelError: the provider could not be asked.
    """
    if not config.llm.batch:
        return
    journal = BatchJournal.of(ws, config)
    if not journal.pending():
        return
    journal.refresh()
    if journal.pending():
        raise BatchPending(journal.waiting_message())
