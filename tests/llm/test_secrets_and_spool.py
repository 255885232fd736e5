"""Secrets never reach the audit log, the cache or a spool request; the spool round trip; world errors."""

from __future__ import annotations

import json
import threading
import time

import pytest

from frames_cli.errors import InputError
from frames_cli.llm.store.audit import REDACTED, Redactor
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.schemas import REWRITE

ENV_KEY = "sk-proj-PLANTEDenvKEY0123456789abcdef"
MESSAGE_KEY = "sk-ant-PLANTEDmsgKEY9876543210zyxwv"


def test_planted_keys_are_redacted_in_log_and_cache(sim_workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    # The rewriter echoes the target body, so the key reaches the reply (and the cache) too.
    body = f"Use the key {MESSAGE_KEY} and {ENV_KEY} for the booking system."
    prompt = f'Blueprint:\n```json\n[]\n```\n\n<skill name="keys" target="true">\n{body}\n</skill>'
    with ModelClient(sim_workspace.workspace, sim_workspace.config, run_dir=sim_workspace.run_dir) as client:
        reply = client.chat(ChatRequest("rewriter", [{"role": "user", "content": prompt}], schema=REWRITE))
    assert reply.ok and MESSAGE_KEY in reply.data["body"]  # the live answer is untouched
    log = (sim_workspace.run_dir / "exchanges.jsonl").read_text()
    assert ENV_KEY not in log and MESSAGE_KEY not in log and "PLANTED" not in log and REDACTED in log
    # A redacted entry is not the answer: it is not cached at all (issue 29), so nothing of it is stored.
    for path in sim_workspace.workspace.cache_dir.glob("*.jsonl"):
        assert "PLANTED" not in path.read_text()


def test_redactor_patterns():
    redact = Redactor({"MY_SERVICE_TOKEN": "tok_abcdefgh12345", "HOME": "/root", "SHORT_KEY": "1"})
    text = redact("tok_abcdefgh12345 AKIAABCDEFGHIJKLMNOP Bearer abc.def-123456 api_key=zzzzzzzzzz /root 1")
    assert text == f"{REDACTED} {REDACTED} Bearer {REDACTED} api_key={REDACTED} /root 1"


def answer_requests(folder, stop: threading.Event) -> None:
    """A program acting as the model: answers each request file with a rewrite of its message count."""
    while not stop.is_set():
        for request in folder.glob("*.request.json") if folder.exists() else []:
            data = json.loads(request.read_text())
            answer = folder / data["answer_file"]
            if not answer.exists():
                tmp = answer.with_suffix(".tmp")
                tmp.write_text(json.dumps({"body": f"answered {len(data['messages'])} message(s)"}))
                tmp.rename(answer)
        time.sleep(0.005)


def test_spool_round_trip(sim_workspace):
    config = sim_workspace.configured(models={"rewriter": "spool/person"}, spool={"timeout_s": 10.0, "poll_s": 0.01})
    folder = sim_workspace.workspace.root / config.spool.dir
    stop = threading.Event()
    person = threading.Thread(target=answer_requests, args=(folder, stop))
    person.start()
    try:
        with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
            reply = client.chat(ChatRequest("rewriter", [{"role": "user", "content": f"Rewrite it. {MESSAGE_KEY}"}],
                                            schema=REWRITE))
    finally:
        stop.set()
        person.join()
    assert reply.ok and reply.data == {"body": "answered 1 message(s)"}
    (request,) = folder.glob("*.request.json")
    assert json.loads(request.read_text())["model"] == "spool/person" and MESSAGE_KEY not in request.read_text()
    assert reply.usage.prompt_tokens > 0 and reply.usage.cost_usd is None
    assert client.ledger.roles["rewriter"].unpriced_calls == 1


def test_spool_timeout_is_reported_without_retry(sim_workspace):
    config = sim_workspace.configured(models={"judge": "spool/person"}, spool={"timeout_s": 0.05, "poll_s": 0.01})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        reply = client.chat(ChatRequest("judge", [{"role": "user", "content": "Grade it."}]))
    assert not reply.ok and reply.attempts == 1 and "no answer" in reply.error


def test_bad_case_file_is_an_input_error_not_a_model_failure(sim_workspace):
    (sim_workspace.workspace.cases_dir / "broken.yaml").write_text("- id: x\n  category: [unclosed\n")
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as client:
        with pytest.raises(InputError, match=r"broken.yaml:\d+: invalid YAML"):
            client.chat(ChatRequest("judge", [{"role": "user", "content": "Case id: x"}]))


def test_closing_the_client_ends_a_spool_wait(sim_workspace):
    config = sim_workspace.configured(models={"judge": "spool/person"}, spool={"timeout_s": 60.0, "poll_s": 0.01})
    client = ModelClient(sim_workspace.workspace, config, use_cache=False)
    result = {}
    waiting = threading.Thread(
        target=lambda: result.update(reply=client.chat(ChatRequest("judge", [{"role": "user", "content": "?"}])))
    )
    waiting.start()
    # Close once the call waits for its answer: the spool writes the request file just before. A
    # fixed pause is not enough where this call is the worker's first and imports litellm (seconds).
    folder = sim_workspace.workspace.root / config.spool.dir
    deadline = time.monotonic() + 60
    while not any(folder.glob("*.request.json")) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert any(folder.glob("*.request.json")), "the call never reached the spool"
    client.close()
    waiting.join(timeout=30)  # half of spool.timeout_s: only the close can end the wait by then
    assert not waiting.is_alive()
    assert not result["reply"].ok and "no answer" in result["reply"].error


def test_redactor_finds_secrets_as_json_escapes_them():
    secret = 'pa"ss\\word-0123456789'
    redact = Redactor({"DB_PASSWORD": secret})
    logged = json.dumps({"messages": [{"content": f"connect with {secret}"}]})
    assert secret not in json.loads(redact(logged))["messages"][0]["content"]
    assert json.loads(redact(logged))["messages"][0]["content"] == f"connect with {REDACTED}"


def test_simulator_notice_only_when_a_role_is_simulated():
    from frames_cli.llm.transport.providers import simulator_notice

    assert simulator_notice({"executor": "openai/gpt-4.1-mini", "judge": None}) is None
    notice = simulator_notice({"executor": "frames-sim/executor", "rewriter": "openai/gpt-4.1-mini"})
    assert notice.startswith("Simulated: executor ran on frames-sim") and "$0.15 / $0.60 per million tokens" in notice
