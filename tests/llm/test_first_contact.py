"""First contact with a provider: a refused key or an unknown model ends the command at once, and says why.

Invariants:
1. A provider model without its API key: `frames evolve` and `frames eval` exit 2 with no model
   call, the message names the role, the model, the provider and the variable; evolve leaves no
   run record (no run folder, no refs).
2. A provider that refuses the credentials (401) is called once, not retried; later requests for
   the same model raise without a call.
3. litellm's "Missing credentials" InternalServerError (how it reports a missing OpenAI key) is a
   setup error, not a temporary one; a server error with the key set stays retriable.
4. A run whose diagnoser is refused after S0 was evaluated and published leaves no run record:
   no folder, no refs, no entry in the base commit's note.
5. `frames check-models` reports each role: answers or not, price per million tokens, latency.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.errors import ModelSetupError

from helpers.airline import CONFIG, build_repo


def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(key, raising=False)


def _run_records(root: Path) -> list[Path]:
    runs = root / ".frames" / "runs"
    return sorted(runs.iterdir()) if runs.is_dir() else []


@pytest.fixture
def refusing():
    """A litellm custom provider `refusing/<x>` that answers every call with a 401, counting the calls."""
    from litellm.llms.custom_llm import CustomLLM
    from litellm.utils import custom_llm_setup

    from frames_cli.llm.transport.providers import litellm_module

    litellm = litellm_module()
    calls: list[str] = []

    class Handler(CustomLLM):
        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            calls.append(model)
            raise litellm.AuthenticationError(message="invalid x-api-key", llm_provider="refusing", model=model)

    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "refusing"] + [
        {"provider": "refusing", "custom_handler": Handler()}
    ]
    custom_llm_setup()
    yield calls
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "refusing"]


def test_evolve_without_the_key_exits_2_naming_the_variable_and_leaves_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_openai_key(monkeypatch)
    config = copy.deepcopy(CONFIG)
    config["models"]["diagnoser"] = "openai/gpt-4.1-mini"
    repo = build_repo(tmp_path / "ws", config=config)

    start = time.monotonic()
    result = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root)])
    seconds = time.monotonic() - start

    assert result.exit_code == 2, result.output
    message = result.stderr
    assert "models.diagnoser" in message and "openai/gpt-4.1-mini" in message and "provider openai" in message
    assert "OPENAI_API_KEY" in message
    assert "gave up" not in message  # no retries: refused before any call
    assert seconds < 30, f"took {seconds:.1f} s"
    assert _run_records(repo.root) == []
    assert repo.git("for-each-ref", "refs/frames/").strip() == ""
    listed = CliRunner().invoke(app, ["runs", "--repo", str(repo.root)])
    assert "No runs yet" in listed.stdout


def test_eval_without_the_key_exits_2_without_a_model_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_openai_key(monkeypatch)
    config = copy.deepcopy(CONFIG)
    config["models"]["executor"] = "openai/gpt-4.1-mini"
    repo = build_repo(tmp_path / "ws", config=config)

    result = CliRunner().invoke(app, ["eval", "--repo", str(repo.root)])

    assert result.exit_code == 2, result.output
    assert "models.executor: openai/gpt-4.1-mini (provider openai): no API key" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr
    assert not (repo.root / ".frames" / "evals").exists() or not any(
        (repo.root / ".frames" / "evals").rglob("exchanges.jsonl")
    )


def test_refused_credentials_are_not_retried_and_stop_later_requests(sim_workspace, refusing) -> None:
    from frames_cli.llm.client.client import ChatRequest, ModelClient
    from frames_cli.workspace.config import with_overrides

    config = sim_workspace.configured(llm={"max_retries": 4, "backoff_base_s": 0.0})
    config = with_overrides(config, "models", executor="refusing/model-x")
    request = ChatRequest("executor", [{"role": "user", "content": "hello"}])
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        with pytest.raises(ModelSetupError) as first:
            client.chat(request)
        with pytest.raises(ModelSetupError):
            client.chat_many([request, request])
    assert refusing == ["model-x"], "one call, no retries, no call after the refusal"
    text = str(first.value)
    assert (
        "models.executor: refusing/model-x" in text
        and "refused the credentials" in text
        and "AuthenticationError" in text
    )
    assert first.value.exit_code == 2


def test_missing_openai_key_reported_as_server_error_is_a_setup_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from frames_cli.llm.transport.calls import setup_error
    from frames_cli.llm.transport.providers import litellm_module

    litellm = litellm_module()
    exc = litellm.InternalServerError(
        message="OpenAIException - Missing credentials. Please pass an `api_key`, or set the `OPENAI_API_KEY` "
                "environment variable.",
        llm_provider="openai", model="gpt-4.1-mini",
    )
    _no_openai_key(monkeypatch)
    message = setup_error(exc, "openai/gpt-4.1-mini")
    assert message is not None and "(provider openai): no API key" in message and "OPENAI_API_KEY" in message
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert setup_error(exc, "openai/gpt-4.1-mini") is None, "with the key set it is a server error, retried"
    busy = litellm.InternalServerError(message="overloaded", llm_provider="openai", model="gpt-4.1-mini")
    assert setup_error(busy, "openai/gpt-4.1-mini") is None
    unknown = litellm.NotFoundError(message="The model `gpt-9` does not exist", llm_provider="openai", model="gpt-9")
    assert "does not know this model" in (setup_error(unknown, "openai/gpt-9") or "")


def test_a_diagnoser_refused_after_s0_leaves_no_run_record(tmp_path: Path, refusing) -> None:
    config = copy.deepcopy(CONFIG)
    config["models"]["diagnoser"] = "refusing/diag"
    repo = build_repo(tmp_path / "ws", config=config)
    base = repo.git("rev-parse", "HEAD").strip()

    result = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root)])

    assert result.exit_code == 2, result.output
    assert "models.diagnoser: refusing/diag" in result.stderr and "refused the credentials" in result.stderr
    # The D diagnosers start at once; none is retried (max_retries is 1 in CONFIG).
    assert 1 <= len(refusing) <= config["evolution"]["diagnosers"], refusing
    assert _run_records(repo.root) == []
    assert repo.git("for-each-ref", "refs/frames/").strip() == ""
    note = _note(repo, base)
    assert note is None or json.loads(note).get("runs") == {}


def _note(repo, sha: str) -> str | None:
    import subprocess

    done = subprocess.run(["git", "-C", str(repo.root), "notes", "--ref", "refs/notes/frames", "show", sha],
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def test_check_models_reports_each_role(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_openai_key(monkeypatch)
    config = copy.deepcopy(CONFIG)
    config["models"]["diagnoser"] = "openai/gpt-4.1-mini"
    repo = build_repo(tmp_path / "ws", config=config)

    result = CliRunner().invoke(app, ["check-models", "--json", "--repo", str(repo.root)])

    assert result.exit_code == 1, result.output
    rows = {r["role"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {"executor", "diagnoser", "rewriter", "judge"}
    assert rows["executor"]["ok"] and rows["executor"]["latency_s"] is not None
    assert rows["executor"]["price"] == {"input_per_million": 0.15, "output_per_million": 0.6}
    assert (
        not rows["diagnoser"]["ok"]
        and "OPENAI_API_KEY" in rows["diagnoser"]["detail"]
        and rows["diagnoser"]["latency_s"] is None
    )
    assert rows["diagnoser"]["price"]["input_per_million"] > 0, "litellm's table knows gpt-4.1-mini"
