"""`frames coldstart` when git refuses or the run is killed: nothing stranded (issue 29).

Before, a failing pre-commit hook, signing without a key, a stale `index.lock`, a sparse checkout or
kill -9 during the commit left the skills written (and staged, with the hook); every later
coldstart said "nothing changed; no commit", and the user's next `git commit` swept them in.

Invariants:
1. a refused commit leaves the working tree and index as they were; the error says what git refused
   and what to do, and the next run after the fix commits every skill;
2. a run killed during its commit is finished by the next run, which says so;
3. a repository git would not commit in is refused before any model call or file write.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app

runner = CliRunner()


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def _workspace(policy_workspace) -> Path:
    root = policy_workspace("expenses.md")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "policies")
    return root


def test_a_hook_refusal_strands_nothing_and_the_next_run_commits(policy_workspace) -> None:
    root = _workspace(policy_workspace)
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint failed: trailing whitespace' >&2\nexit 1\n")
    hook.chmod(0o755)

    done = runner.invoke(app, ["coldstart", "--repo", str(root)])

    assert done.exit_code == 1
    assert (
        "git refused the commit" in done.stderr
        and "trailing whitespace" in done.stderr
        and "pre-commit hook" in done.stderr
    )
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == "" and not (root / "skills").exists()
    hook.unlink()
    again = runner.invoke(app, ["coldstart", "--repo", str(root), "--json"])
    assert again.exit_code == 0
    out = json.loads(again.stdout)
    assert out["commit"] and out["created"] and out["finished_earlier"] is None
    assert _git(root, "status", "--porcelain") == ""


def test_a_stale_index_lock_is_refused_before_anything_is_written(policy_workspace) -> None:
    root = _workspace(policy_workspace)
    (root / ".git" / "index.lock").write_text("")
    done = runner.invoke(app, ["coldstart", "--repo", str(root)])
    assert done.exit_code == 1 and "index is locked" in done.stderr and "nothing was written" in done.stderr
    assert not (root / "skills").exists()


HOOK_THAT_WAITS = """#!/bin/sh
touch "{marker}"
while [ ! -e "{go}" ]; do sleep 0.05; done
exit 0
"""


def test_a_coldstart_killed_during_its_commit_is_finished_by_the_next(policy_workspace, tmp_path: Path) -> None:
    root = _workspace(policy_workspace)
    marker, go = tmp_path / "in-hook", tmp_path / "go"
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(HOOK_THAT_WAITS.format(marker=marker, go=go))
    hook.chmod(0o755)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen([sys.executable, "-m", "frames_cli", "coldstart", "--repo", str(root)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), "the commit's hook never ran"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    go.touch()  # git, in a session of its own, outlives frames and makes the commit
    for _ in range(200):
        if not (root / ".git" / "index.lock").exists() and _git(root, "rev-list", "--count", "HEAD") == "2":
            break
        time.sleep(0.05)
    hook.unlink()

    done = runner.invoke(app, ["coldstart", "--repo", str(root), "--json"])

    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["finished_earlier"]["action"] == "found-committed" and out["commit"] is None and out["created"] == []
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
