"""The command agent under test: the user's own program, run once per case as a subprocess.

Protocol with the program:
    argv:   the configured command, then the skills folder path as the last argument.
    env:    FRAMES_SKILLS_DIR (the same folder), FRAMES_CASE_ID, FRAMES_SAMPLE.
    stdin:  one JSON object: {"id", "input": {"text", "fields"}, "answer_format", "sample"}.
    stdout: one JSON object (the whole output, or its last non-empty line):
            {"output": <answer>, "skills_used": [names], "usage": {"prompt_tokens",
            "completion_tokens", "cost_usd"}, "trajectory": [steps]}; only "output" is required.
The skills folder holds `<name>/SKILL.md` for the skill set under evaluation (written fresh for
each run, so a git ref's skills are what the program sees). A non-zero exit, a timeout or output
that is not such JSON fails that case with the reason; the other cases go on. Exit code 75
(EX_TEMPFAIL of sysexits.h) says the answer was lost (the program's own model call kept failing):
the case is run again with FRAMES_RETRY set to 1, 2, … and, if it stays lost, left out of the
scores rather than failed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.executor.base import AgentResult
from frames_cli.llm.messages.types import Usage

if TYPE_CHECKING:
    from frames_cli.formats.case import AgentCase
    from frames_cli.formats.skill_set import SkillSet

STDERR_SHOWN = 300
#: The exit code by which the program says its answer was lost, not wrong (EX_TEMPFAIL, sysexits.h).
EXIT_LOST = 75


class CommandExecutor:
    """Runs `argv` per case (see the module docstring for the protocol).

    Args:
        argv: the program and its arguments (`executor.command` in frames.yaml).
        timeout_s: seconds per case before the program (and its process group) is killed.
        concurrency: cases run at once.
        cwd: working folder of the program (the workspace root).
    """

    def __init__(self, argv: Sequence[str], timeout_s: float, concurrency: int = 4, cwd: Path | None = None):
        if not argv:
            raise ValueError("the command executor needs a command (executor.command in frames.yaml)")
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.concurrency = max(1, concurrency)
        self.cwd = cwd

    def run(self, cases: Sequence[AgentCase], skills: SkillSet, sample: int = 0, retry: int = 0) -> list[AgentResult]:
        """Run the program on every case; results in case order. See `Executor`."""
        return self.run_files(cases, skills.to_files(), sample, retry)

    def run_files(
        self, cases: Sequence[AgentCase], files: dict[str, bytes], sample: int = 0, retry: int = 0
    ) -> list[AgentResult]:
        """`run` with the skill set as its files (`SkillSet.to_files()`: `skills/<name>/SKILL.md` → bytes),
        written to a fresh temporary folder: what a Ray worker gets (executor/ray_backend.py)."""
        with tempfile.TemporaryDirectory(prefix="frames-skills-") as tmp:
            folder = Path(tmp) / "skills"
            for rel, data in files.items():
                path = Path(tmp) / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            folder.mkdir(exist_ok=True)
            with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="frames-agent") as pool:
                return list(pool.map(lambda case: self._one(case, folder, sample, retry), cases))

    def _one(self, case: AgentCase, folder: Path, sample: int, retry: int) -> AgentResult:
        payload = json.dumps({**case.to_dict(), "sample": sample}, ensure_ascii=False)
        env = {
            **os.environ, "FRAMES_SKILLS_DIR": str(folder), "FRAMES_CASE_ID": case.id, "FRAMES_SAMPLE": str(sample),
            "FRAMES_RETRY": str(retry),
        }
        try:
            proc = subprocess.Popen(
                [*self.argv, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.cwd, env=env, start_new_session=True,
            )
        except OSError as exc:
            return AgentResult(case.id, error=f"cannot start {self.argv[0]!r}: {exc.strerror or exc}")
        try:
            out, err = proc.communicate(payload.encode("utf-8"), timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            # The agent may have started children of its own: stop the whole session.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return AgentResult(case.id, error=f"agent timed out after {self.timeout_s:g} s")
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-STDERR_SHOWN:]
            return AgentResult(
                case.id, error=f"agent exited with code {proc.returncode}" + (f": {tail}" if tail else ""),
                lost=proc.returncode == EXIT_LOST,
            )
        return parse_agent_output(case.id, out.decode("utf-8", "replace"))


def parse_agent_output(case_id: str, text: str) -> AgentResult:
    """Read the program's stdout: the whole text as JSON, else its last non-empty line.

    Never raises: output that is not a JSON object with "output", or a field of the wrong type,
    is an AgentResult with `error` saying what was wrong.
    """
    data: Any = None
    for candidate in (text, next((ln for ln in reversed(text.splitlines()) if ln.strip()), "")):
        try:
            data = json.loads(candidate)
            break
        except json.JSONDecodeError:
            continue
    if not isinstance(data, dict) or "output" not in data:
        shown = " ".join(text.split())[:120] or "(nothing)"
        return AgentResult(case_id, error=f"agent printed no JSON object with an `output` key: {shown}")
    skills_used, usage, trajectory = data.get("skills_used", []), data.get("usage", {}), data.get("trajectory", [])
    if not (isinstance(skills_used, list) and all(isinstance(s, str) for s in skills_used)):
        return AgentResult(case_id, error="agent's `skills_used` is not a list of strings")
    if not isinstance(usage, dict) or not isinstance(trajectory, list):
        return AgentResult(case_id, error="agent's `usage` must be an object and `trajectory` a list")
    try:
        parsed_usage = Usage.from_dict(usage)
    except (TypeError, ValueError):
        return AgentResult(case_id, error="agent's `usage` holds non-numeric token counts")
    return AgentResult(case_id, data["output"], skills_used, parsed_usage, trajectory)
