"""ModelClient through litellm's real completion path and the frames-sim provider (no mocks).

Invariants:
1. A transient fault is retried; the reply carries the number of calls made.
2. After the last retry the reply is a failure with a clear message, never an exception.
3. A cached request makes no model call; errors are never cached.
4. The ledger's tokens equal the usage the provider reported, call by call (audit log).
5. A budget stop happens between calls and leaves ledger, audit log and cache consistent.
6. With 20 % faults of every kind, every one of 500 requests ends answered or failed.
Invariants 1, 2, 5 and 6 hold with the litellm calls in this process's threads and in worker
processes (`llm.processes`).
"""

from __future__ import annotations

import json

import pytest
from helpers.chat import executor_request

from frames_cli.errors import BudgetExceeded, ConfigError
from frames_cli.llm.store.audit import read_exchanges
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.schemas import RUBRIC_VERDICT

def cache_entries(ws) -> list[dict]:
    """Every line of every cache shard."""
    return [json.loads(line) for shard in sorted(ws.workspace.cache_dir.glob("*.jsonl"))
            for line in shard.read_text().splitlines()]


@pytest.mark.parametrize("processes", [0, 2], ids=["threads", "processes"])
def test_retries_then_success(sim_workspace, processes):
    config = sim_workspace.configured(faults={"rate_limit": 0.4}, llm={"max_retries": 8, "processes": processes})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        replies = client.chat_many([executor_request(sample=i) for i in range(20)])
    assert all(r.ok for r in replies)
    retried = [r for r in replies if r.attempts > 1]
    assert retried, "with a 60 % rate-limit fault some request must have been retried"
    log = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    assert len(log) == sum(r.attempts for r in replies)
    assert sum("RateLimitError" in (e.get("error") or "") for e in log) == sum(r.attempts - 1 for r in replies)


@pytest.mark.parametrize("processes", [0, 2], ids=["threads", "processes"])
def test_retries_then_failure(sim_workspace, processes):
    config = sim_workspace.configured(faults={"rate_limit": 1.0}, llm={"processes": processes})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir) as client:
        reply = client.chat(executor_request())
    retries = config.llm.max_retries
    assert not reply.ok and reply.data is None and reply.attempts == retries + 1
    assert f"gave up after {retries + 1} attempt(s)" in reply.error and "RateLimitError" in reply.error
    assert client.ledger.roles["executor"].failed == 1
    assert len(read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")) == retries + 1


def test_timeout_is_retried_then_reported(sim_workspace):
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as warm:
        warm.chat(executor_request())  # litellm's one-time set-up on its first call (~0.5 s) is not the timeout's
    # A latency far above the timeout, so an attempt that ended at the timeout is told apart from
    # one that sat out the latency even on a loaded machine (the sleep is cut at the timeout).
    config = sim_workspace.configured(simulator={"latency_s": 5.0}, llm={"timeout_s": 0.02, "max_retries": 1})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        reply = client.chat(executor_request())
    assert not reply.ok and "Timeout" in reply.error and reply.attempts == 2
    # Each attempt ended at the timeout, not after the simulated latency (timed per call in the audit log).
    attempts = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    assert len(attempts) == 2 and all("Timeout" in e["error"] and e["seconds"] < 2.5 for e in attempts)


def test_cache_hit_makes_no_call(sim_workspace):
    with ModelClient(sim_workspace.workspace, sim_workspace.config, run_dir=sim_workspace.run_dir) as client:
        first = client.chat(executor_request())
        second = client.chat(executor_request())
    assert first.ok and not first.cached and second.cached and second.attempts == 0
    assert (second.text, second.data, second.usage) == (first.text, first.data, first.usage)
    assert len(read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")) == 1
    assert client.ledger.roles["executor"].calls == 1 and client.ledger.roles["executor"].cached == 1
    assert len(cache_entries(sim_workspace)) == 1


def test_sample_index_and_no_cache_flag(sim_workspace):
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as client:
        client.chat_many([executor_request(sample=0), executor_request(sample=1)])
    assert len(cache_entries(sim_workspace)) == 2
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as client:
        assert not client.chat(executor_request(sample=0)).cached


def test_errors_are_not_cached(sim_workspace):
    failing = sim_workspace.configured(faults={"rate_limit": 1.0})
    with ModelClient(sim_workspace.workspace, failing) as client:
        assert not client.chat(executor_request()).ok
    assert cache_entries(sim_workspace) == []
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as client:
        reply = client.chat(executor_request())
    assert reply.ok and not reply.cached


def test_concurrent_identical_requests_leave_one_whole_entry(sim_workspace):
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as client:
        replies = client.chat_many([executor_request()] * 12)
    assert all(r.ok for r in replies)
    entries = cache_entries(sim_workspace)  # parses every line: none is torn
    assert {e["key"] for e in entries} == {entries[0]["key"]} and all(e["data"] == replies[0].data for e in entries)


def test_ledger_matches_provider_usage_and_prices_sim_models(sim_workspace):
    with ModelClient(sim_workspace.workspace, sim_workspace.config, run_dir=sim_workspace.run_dir) as client:
        replies = client.chat_many([executor_request(sample=i) for i in range(5)])
    log = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    totals = client.ledger.roles["executor"]
    assert (
        totals.prompt_tokens
        == sum(e["usage"]["prompt_tokens"] for e in log)
        == sum(r.usage.prompt_tokens for r in replies)
    )
    assert totals.completion_tokens == sum(e["usage"]["completion_tokens"] for e in log)
    assert totals.cost_usd == pytest.approx(sum(r.usage.cost_usd for r in replies)) and totals.cost_usd > 0
    saved = json.loads((sim_workspace.run_dir / "ledger.json").read_text())
    assert saved["roles"]["executor"]["calls"] == 5
    assert all(e["system_fingerprint"].startswith("frames-sim: a model of LLM behaviour") for e in log)


def test_registered_price_agrees_with_litellm(sim_workspace):
    """The simulator prices its replies itself; litellm's own calculator must agree with it."""
    from frames_cli.llm.transport.providers import litellm_module, make_response

    litellm = litellm_module()
    response = make_response("frames-sim/judge", "{}", "stop", 1000, 100)
    assert litellm.completion_cost(completion_response=response) == pytest.approx(1000 * 0.15e-6 + 100 * 0.60e-6)


@pytest.mark.parametrize("processes", [0, 2], ids=["threads", "processes"])
def test_budget_stop_leaves_consistent_state(sim_workspace, processes):
    config = sim_workspace.configured(budget={"max_tokens": 400}, llm={"concurrency": 2, "processes": processes})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir) as client:
        with pytest.raises(BudgetExceeded, match="budget.max_tokens = 400"):
            client.chat_many([executor_request(sample=i) for i in range(10)])
    log = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    saved = json.loads((sim_workspace.run_dir / "ledger.json").read_text())
    calls = saved["roles"]["executor"]["calls"]
    assert 2 <= calls < 10 and calls == len(log) == len(cache_entries(sim_workspace))
    assert saved["total_tokens"] == sum(e["usage"]["prompt_tokens"] + e["usage"]["completion_tokens"] for e in log)
    # In-flight calls finish, so the overshoot is at most one batch of `concurrency` calls.
    assert saved["total_tokens"] < 400 + 2 * max(e["usage"]["prompt_tokens"] + e["usage"]["completion_tokens"]
                                                 for e in log)
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as resumed:
        replies = resumed.chat_many([executor_request(sample=i) for i in range(10)])
    assert sum(r.cached for r in replies) == calls and resumed.ledger.roles["executor"].calls == 10 - calls


def test_missing_model_is_a_config_error(sim_workspace):
    from frames_cli.workspace.config import FramesConfig

    with ModelClient(sim_workspace.workspace, FramesConfig()) as client:
        with pytest.raises(ConfigError, match="models.judge"):
            client.chat(ChatRequest("judge", [{"role": "user", "content": "x"}], schema=RUBRIC_VERDICT))


@pytest.mark.parametrize("processes", [0, 2], ids=["threads", "processes"])
def test_faults_at_twenty_percent_lose_no_call(sim_workspace, processes):
    config = sim_workspace.configured(
        faults={"rate_limit": 0.2, "timeout": 0.2, "malformed_json": 0.2, "truncated": 0.2},
        llm={"concurrency": 16, "max_retries": 2, "timeout_s": 5.0, "backoff_base_s": 0.0005, "backoff_max_s": 0.002,
             "processes": processes},
    )
    requests = [executor_request(case_id=("bags-1", "cancel-1", "refund-1")[i % 3], sample=i) for i in range(500)]
    # No wall-clock bound: litellm's import and the fork server's start alone took 15-30 s of this
    # on a loaded 2-core machine. That a timeout ends the attempt is test_timeout_is_retried_then_reported's.
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        replies = client.chat_many(requests)
    assert len(replies) == 500 and [r.request for r in replies] == requests
    ok = [r for r in replies if r.ok]
    failed = [r for r in replies if not r.ok]
    assert len(ok) + len(failed) == 500 and ok and failed
    assert all(r.data is not None and r.error is None for r in ok)
    assert all(r.data is None and r.error for r in failed)
    assert any(r.repaired for r in ok) and any(r.attempts > 1 for r in ok)
    assert client.ledger.roles["executor"].failed == len(failed)


def test_cache_skips_a_torn_line_and_keeps_the_last_write(tmp_path):
    from frames_cli.llm.store.cache import ResponseCache

    writer = ResponseCache(tmp_path, str)
    writer.put("ab" + "1" * 62, {"text": "old"})
    writer.put("ab" + "1" * 62, {"text": "new"})
    writer.flush()
    with open(tmp_path / "ab.jsonl", "a") as fh:
        fh.write('{"key": "ab2222", "text": "cut sho')  # a crash in the middle of a line
    reader = ResponseCache(tmp_path, str)
    assert reader.get("ab" + "1" * 62)["text"] == "new" and reader.get("ab2222") is None


def test_usd_budget_stops_before_the_next_call(sim_workspace):
    config = sim_workspace.configured(budget={"max_usd": 1e-9}, llm={"concurrency": 1})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir) as client:
        with pytest.raises(BudgetExceeded, match=r"budget.max_usd"):
            client.chat_many([executor_request(sample=i) for i in range(3)])
    assert client.ledger.roles["executor"].calls == 1 and client.ledger.total_usd > 1e-9


def test_chat_many_answers_as_the_event_loop_path_does(sim_workspace):
    requests = [executor_request(case_id=f"bags-{i % 3}", sample=i) for i in range(24)]
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as client:
        threaded = client.chat_many(requests)
        looped = client.gather(client.achat, requests)
        calls = client.ledger.roles["executor"].calls
    assert [r.request for r in threaded] == requests, "replies come back in request order"
    assert [(r.text, r.data) for r in threaded] == [(r.text, r.data) for r in looped]
    assert calls == 48


def test_a_changed_case_is_not_answered_from_the_old_cache(sim_workspace):
    """The simulator answers from the case's evidence; the cache key must change with it."""
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as client:
        assert client.chat(executor_request()).ok
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as client:
        assert client.chat(executor_request()).cached  # nothing changed: served from the cache
    fixture = sim_workspace.workspace.root / "cases" / "fixture.yaml"
    fixture.write_text(fixture.read_text().replace("Basic economy reservations can be cancelled only within 24 hours "
                                                   "of booking.",
                                                   "Any reservation can be cancelled."))
    with ModelClient(sim_workspace.workspace, sim_workspace.config) as client:
        assert not client.chat(executor_request()).cached
    changed = sim_workspace.configured(simulator={"seed": 7})
    with ModelClient(sim_workspace.workspace, changed) as client:
        assert not client.chat(executor_request()).cached
