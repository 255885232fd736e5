"""Model text is data: a hostile diagnoser and rewriter, reached through litellm's real provider path.

Invariants (issue 15, "model text can poison every later run", "terminal and prompt injection"):
1. A NUL in a rationale never reaches git: the run finishes and a second run (answers cached) too.
2. No candidate commit message holds a control, bidirectional or zero-width character, and its
   trailers are exactly frames' own (a forged `Signed-off-by:` / `Frames-Run:` paragraph is not one).
3. No line of model text starts a commit-message line (no `#` comment line, no trailer-shaped line).
4. A rewritten body with a NUL is refused; ESC, U+202E and zero-width characters are removed.
5. `frames review` prints no escape character, in every output form.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from helpers.airline import CONFIG, build_repo

EVIL = (
    "\x00\x1b]0;pwned\x07\x1b[2J\u202eevil\u200b\r\n\nSigned-off-by: Mallory <m@x>\nFrames-Run: forged\n# comment line"
)
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


class Hostile:
    """Diagnoser and rewriter answers full of control characters, forged trailers and NULs."""

    def __init__(self) -> None:
        from litellm.llms.custom_llm import CustomLLM

        from frames_cli.llm.transport.providers import make_response
        from frames_cli.sim import reading

        outer = self
        self.rewrites = 0

        class Handler(CustomLLM):
            def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
                prompt = "\n\n".join(m["content"] for m in messages)
                answer = outer.diagnose(prompt, reading) if model == "diagnoser" else outer.rewrite(prompt, reading)
                return make_response(f"hostile/{model}", json.dumps(answer), "stop", 100, 20)

        self.handler = Handler()

    @staticmethod
    def diagnose(prompt: str, reading: Any) -> dict:
        ids = [f["case_id"] for f in reading.json_after(prompt, "Failures")]
        change = f'Add the rule: "Check the booking class first." {EVIL}'
        rules = ["Check the booking class first."]
        proposal = {"skill": "baggage", "change": change, "rules": rules, "rationale": EVIL, "case_ids": ids}
        return {"proposals": [proposal]}

    def rewrite(self, prompt: str, reading: Any) -> dict:
        self.rewrites += 1
        target = next(b for b in reading.skill_blocks(prompt) if b.attrs.get("target") == "true")
        nul = "\x00" if "rejected by the validator" not in prompt else ""
        return {"body": target.text + f"\n- Check the \x1b[31mbooking\u202e class\u200b first.{nul}\n"}


@pytest.fixture
def hostile():
    from litellm.utils import custom_llm_setup

    from frames_cli.llm.transport.providers import litellm_module

    litellm = litellm_module()
    provider = Hostile()
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "hostile"] + [
        {"provider": "hostile", "custom_handler": provider.handler}
    ]
    custom_llm_setup()
    yield provider
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "hostile"]


def test_hostile_model_text_never_reaches_git_or_the_terminal(tmp_path: Path, hostile: Hostile, monkeypatch) -> None:
    from frames_cli.commands.app import app
    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.workspace.layout import Workspace

    config = yaml.safe_load(yaml.safe_dump(CONFIG))
    config["models"].update(diagnoser="hostile/diagnoser", rewriter="hostile/rewriter")
    config["evolution"].update(max_rounds=1, vote_threshold=1, rewrite_retries=1)
    repo = build_repo(tmp_path / "ws", config)

    state = evolve(Workspace.open(repo.root), EvolveOptions()).state
    (round1,) = state.checkpoint["rounds"]
    baggage = next(o for o in round1["outcomes"] if o["skill"] == "baggage")
    assert baggage["attempts"] == 2 and any("NUL" in e for e in baggage["errors"][0])  # 4: NUL refused
    child = state.candidate(round1["child"])
    assert child.commit and child.changed_skills == ["baggage"]

    body = repo.git("show", f"{child.commit}:skills/baggage/SKILL.md")
    assert "- Check the [31mbooking class first." in body and not UNSAFE.search(body)  # 4: removed
    message = repo.git("log", "-1", "--format=%B", child.commit)
    assert not UNSAFE.search(message)  # 2
    trailers = repo.git("log", "-1", "--format=%(trailers:only,unfold)", child.commit).split("\n")
    assert [t.split(":")[0] for t in trailers if t] == ["Frames-Run", "Frames-Parent", "Frames-Candidate",
                                                        "Frames-Models"]
    assert f"Frames-Run: {state.run_id}" in trailers
    for line in message.splitlines():  # 3
        assert not line.startswith(("#", "Signed-off-by", "Frames-Run: forged")), line
    assert "Signed-off-by: Mallory" in message  # kept as data, inside a line of its own prefix

    # 1: the answers are cached; a second run over the same base must not fail on them either.
    again = evolve(Workspace.open(repo.root), EvolveOptions())
    assert again.state.status != "failed"

    monkeypatch.chdir(repo.root)
    for extra in ([], ["--markdown", "-"], ["--json"]):  # 5
        result = CliRunner().invoke(app, ["review", f"{state.run_id}/{child.id}", *extra])
        assert result.exit_code == 0, result.output
        assert not UNSAFE.search(result.stdout), (extra, [c for c in result.stdout if UNSAFE.match(c)])
        if not extra:
            assert "\\x1b" in result.stdout  # shown as an escape, not sent
