"""The pinned litellm's internals that ModelClient relies on for speed, checked against litellm itself.

Invariants:
1. A call through ModelClient never hands litellm's background success-logging step a task, while a
   plain `litellm.completion` does (so this test would notice if the flag stopped working).
2. With the flag set, litellm still prices the reply (`response_cost`), so the ledger's USD holds.
3. litellm's import runs with the cycle collector paused (one full collection, ours, instead of
   several), which is running again afterwards, and the heap it leaves is frozen.
4. Once litellm is imported, no response model of `litellm.types.utils` is left for pydantic to
   build on first use, where threads racing to build it failed calls ("type object 'Usage' has
   no attribute '__pydantic_core_schema__'").
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from frames_cli.llm.transport import providers
from frames_cli.llm.client.client import ChatRequest, ModelClient


@pytest.fixture
def logging_submissions(monkeypatch):
    """Counts the tasks litellm hands to its logging thread pool (litellm's object, not ours)."""
    litellm = providers.litellm_module()
    from litellm.litellm_core_utils.thread_pool_executor import executor

    submitted: list[object] = []
    original = executor.submit

    def counted(fn, *args, **kwargs):
        submitted.append(args[0] if args else fn)
        return original(fn, *args, **kwargs)

    monkeypatch.setattr(executor, "submit", counted)
    return litellm, submitted


def test_client_calls_skip_litellm_success_logging(sim_workspace, logging_submissions):
    litellm, submitted = logging_submissions
    with ModelClient(sim_workspace.workspace, sim_workspace.config, run_dir=sim_workspace.run_dir,
                     use_cache=False) as client:
        replies = client.chat_many([ChatRequest("judge", [{"role": "user", "content": f"Grade {i}"}])
                                    for i in range(5)])
        assert all(r.ok for r in replies)
        assert submitted == []
        metadata = {providers.CTX_KEY: client._ctx}
        litellm.completion(model="frames-sim/judge", messages=[{"role": "user", "content": "Grade"}], metadata=metadata,
                           **{"no-log": True})
    assert submitted, "a plain litellm.completion must reach the logging pool, else this test proves nothing"


def test_flagged_call_is_still_priced():
    litellm = providers.litellm_module()
    flag = providers.internal_call_flag()
    token = flag.set(True)
    try:
        response = litellm.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}],
                                      mock_response="hi", **{"no-log": True})
    finally:
        flag.reset(token)
    assert response._hidden_params["response_cost"] > 0


IMPORT_PROBE = """
import gc, sys
full = []
gc.callbacks.append(lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None)
if sys.argv[1] == "off":
    gc.disable()
from frames_cli.llm.transport import providers
providers.litellm_module()
print(len(full), gc.isenabled(), gc.get_freeze_count() > 100_000)
"""


@pytest.mark.parametrize(("collector", "expected"), [("on", "1 True True"), ("off", "1 False True")])
def test_litellm_is_imported_with_the_collector_paused_then_restored(collector, expected):
    # A fresh interpreter: litellm is imported once per process.
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE, collector], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected.split()


def test_litellm_response_models_are_built_before_any_thread_calls():
    code = (
        "import inspect, pydantic\nfrom frames_cli.llm.transport import providers\nproviders.litellm_module()\nfrom "
        "litellm.types import utils\nmodels = [c for c in vars(utils).values() if inspect.isclass(c) and issubclass(c, "
        "pydantic.BaseModel) and c.__module__ == utils.__name__]\nprint(len(models), [c.__name__ for c in models if "
        "not c.__pydantic_complete__])\n"
    )
    # A fresh interpreter: in this one another test may already have built them by using them.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) > 10 and out[1].strip() == "[]"
