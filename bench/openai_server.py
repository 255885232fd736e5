"""A local OpenAI-compatible server answered by frames' simulator: a test double for batch mode (bench/batch.py, tests).

It implements what litellm's OpenAI client calls in frames' synchronous and batch modes, on the
standard library's HTTP server:

  POST /v1/chat/completions     one chat completion
  POST /v1/files                upload a batch input file (multipart/form-data, purpose=batch)
  GET  /v1/files/{id}           the file object;  GET /v1/files/{id}/content: its bytes
  POST /v1/batches              create a batch of /v1/chat/completions lines
  GET  /v1/batches/{id}         the batch object (status validating → in_progress → completed)
  POST /v1/batches/{id}/cancel  cancel it (its unanswered lines end in no output)

Each model name is mapped to a simulator role (`roles`), and the simulator (`frames-sim/<role>`,
through litellm, as frames calls it) answers from the workspace's cases, always as sample 0,
attempt 0: the same request gets the same answer, in a batch or not. A batch is answered by a
background thread `delay_s` seconds after it was created; `fail_lines` first batch lines get an
HTTP 500 line in the error file instead (to exercise frames' retries). Counts of what it served
are in `stats`. Not product code: no authentication (it checks only that a bearer key is sent),
no persistence, loopback only.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from frames_cli.llm.transport import providers


class SimBackend:
    """The simulator of workspace `root`, answering chat completion bodies for the models in `roles`."""

    def __init__(self, root: Path, roles: dict[str, str]):
        from frames_cli.evolution.state.splits import load_split_cases
        from frames_cli.sim.world import SimWorld, policy_texts
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(root)
        config = ws.config()
        cases, _ = load_split_cases(ws.root, config)
        world = SimWorld.from_cases(list(cases.values()), policy_texts(ws))
        self.roles = dict(roles)
        self.key = providers.register(providers.ProviderContext(ws.root, config.simulator, config.spool, lambda: world))
        self.litellm = providers.litellm_module()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion object for request `body` (KeyError: a model not in `roles`)."""
        role = self.roles[body["model"]]
        meta = {providers.CTX_KEY: self.key, providers.ATTEMPT_KEY: 0, providers.SAMPLE_KEY: 0}
        response = self.litellm.completion(model=f"{providers.SIM_PREFIX}/{role}", messages=body["messages"],
                                           temperature=body.get("temperature"),
                                           max_tokens=body.get("max_tokens"), metadata=meta, timeout=60,
                                           **{"no-log": True})
        choice = response.choices[0]
        return {
            "id": f"chatcmpl-{response.id}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": choice.message.content},
                         "finish_reason": choice.finish_reason}],
            "usage": {"prompt_tokens": response.usage.prompt_tokens,
                      "completion_tokens": response.usage.completion_tokens,
                      "total_tokens": response.usage.prompt_tokens + response.usage.completion_tokens},
        }


class OpenAIServer:
    """The server on 127.0.0.1 (a free port unless given); `url` is the `llm.api_base` to use.

    Args:
        backend: answers chat completion bodies (SimBackend).
        delay_s: seconds after a batch's creation before it is answered.
        fail_lines: how many of the first batch lines (over all batches) fail with HTTP 500.
    """

    def __init__(self, backend: SimBackend, *, delay_s: float = 0.0, fail_lines: int = 0, port: int = 0):
        self.backend = backend
        self.delay_s = delay_s
        self.fail_lines = fail_lines
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.stats = {"chat": 0, "batches": 0, "batch_lines": 0, "failed_lines": 0, "retrieves": 0}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}-{next(self._ids)}"

    def add_file(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        fid = self.new_id("file")
        self.files[fid] = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                           "filename": filename,
                           "purpose": purpose, "status": "processed", "data": data}
        return _public(self.files[fid])

    def create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        bid = self.new_id("batch")
        lines = [json.loads(x) for x in self.files[body["input_file_id"]]["data"].decode("utf-8").splitlines()
                 if x.strip()]
        batch = {"id": bid, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                 "input_file_id": body["input_file_id"],
                 "completion_window": body.get("completion_window", "24h"), "status": "validating",
                 "output_file_id": None,
                 "error_file_id": None, "created_at": int(time.time()), "metadata": body.get("metadata"),
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        with self._lock:
            self.batches[bid] = batch
            self.stats["batches"] += 1
        threading.Thread(target=self._run_batch, args=(bid, lines), daemon=True).start()
        return batch

    def _run_batch(self, bid: str, lines: list[dict[str, Any]]) -> None:
        batch = self.batches[bid]
        batch["status"] = "in_progress"
        time.sleep(self.delay_s)
        out, errors = [], []
        for line in lines:
            if batch["status"] == "cancelling":
                break
            with self._lock:
                self.stats["batch_lines"] += 1
                fail = self.stats["failed_lines"] < self.fail_lines
                self.stats["failed_lines"] += fail
            if fail:
                errors.append({"id": self.new_id("req"), "custom_id": line["custom_id"], "error": None,
                               "response": {"status_code": 500,
                                            "body": {"error": {"message": "simulated server error",
                                                               "type": "server_error"}}}})
                continue
            out.append({"id": self.new_id("req"), "custom_id": line["custom_id"], "error": None,
                        "response": {"status_code": 200, "request_id": self.new_id("req"),
                                     "body": self.backend.answer(line["body"])}})
        for kind, rows in (("output_file_id", out), ("error_file_id", errors)):
            if rows:
                data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
                batch[kind] = self.add_file(data, "batch_output", f"{bid}-{kind}.jsonl")["id"]
        batch["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(errors)}
        batch["status"] = "cancelled" if batch["status"] == "cancelling" else "completed"
        batch["completed_at"] = int(time.time())

    def route_post(self, path: str, content_type: str, body: bytes) -> tuple[int, Any]:
        """(status, JSON payload) answering a POST of `body` to `path`."""
        if path == "/v1/chat/completions":
            with self._lock:
                self.stats["chat"] += 1
            return 200, self.backend.answer(json.loads(body))
        if path == "/v1/files":
            fields = _multipart(content_type, body)
            name = fields["file"][0] or "upload.jsonl"
            return 200, self.add_file(fields["file"][1], fields["purpose"][1].decode(), name)
        if path == "/v1/batches":
            return 200, self.create_batch(json.loads(body))
        if path.startswith("/v1/batches/") and path.endswith("/cancel"):
            batch = self.batches[path.split("/")[3]]
            if batch["status"] in ("validating", "in_progress"):
                batch["status"] = "cancelling"
            return 200, batch
        return 404, {"error": {"message": f"no route {path}"}}

    def route_get(self, path: str) -> tuple[int, Any, bytes | None]:
        """(status, JSON payload, raw bytes to send instead or None) answering a GET of `path`."""
        parts = path.rstrip("/").split("/")
        if len(parts) == 4 and parts[2] == "batches" and parts[3] in self.batches:
            with self._lock:
                self.stats["retrieves"] += 1
            return 200, self.batches[parts[3]], None
        if len(parts) >= 4 and parts[2] == "files" and parts[3] in self.files:
            record = self.files[parts[3]]
            if len(parts) == 5 and parts[4] == "content":
                return 200, None, record["data"]
            return 200, _public(record), None
        return 404, {"error": {"message": f"no route {path}"}}, None


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "data"}


class _Handler(BaseHTTPRequestHandler):
    """The OpenAI routes of `api`, which `_handler` sets per server."""

    protocol_version = "HTTP/1.1"
    api: OpenAIServer

    def log_message(self, *args: Any) -> None:  # quiet: a bench prints its own figures
        pass

    def _send(self, status: int, payload: Any, raw: bytes | None = None) -> None:
        data, kind = ((raw, "application/octet-stream") if raw is not None
                      else (json.dumps(payload).encode("utf-8"), "application/json"))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _authorised(self) -> bool:
        if (self.headers.get("Authorization") or "").startswith("Bearer "):
            return True
        self._send(401, {"error": {"message": "no API key", "type": "invalid_request_error"}})
        return False

    def do_POST(self) -> None:
        if not self._authorised():
            return
        path, body = self.path.rstrip("/"), self._body()
        try:
            status, payload = self.api.route_post(path, self.headers.get("Content-Type", ""), body)
        except (KeyError, ValueError) as exc:
            status, payload = 400, {"error": {"message": f"bad request: {exc!r}", "type": "invalid_request_error"}}
        self._send(status, payload)

    def do_GET(self) -> None:
        if not self._authorised():
            return
        self._send(*self.api.route_get(self.path))


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"api": server})


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """name → (filename, bytes) of a multipart/form-data body (the standard library's email parser)."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    out = {}
    for part in message.iter_parts():
        out[part.get_param("name", header="content-disposition")] = (part.get_filename(), part.get_payload(decode=True)
                                                                     or b"")
    return out
