"""Keys planted in a case's evidence leave no trace in anything an evolve run writes (issue 15, "Secrets leak").

Invariant: after a run whose failing case's evidence holds a GitHub, Slack, AWS secret-access and
Google key (the shapes the issue found in state.json and exchanges.jsonl), no file under `.frames/`
(state, checkpoints, evaluations, audit log, cache, ledger, reports) and no git object reachable
from any ref (candidate commits, notes, the review branch) holds any of them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.airline import build_repo, make_cases, one_round_config, run_cli

KEYS = (
    "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
)


def test_planted_keys_reach_no_file_and_no_commit(tmp_path: Path) -> None:
    cases = make_cases()
    planted = (f"Agents log in with {KEYS[0]}; the Slack bot posts with {KEYS[1]}; aws_secret_access_key = {KEYS[2]}; "
               f"maps use {KEYS[3]}.")
    for case in cases:
        case["diagnosis"]["evidence"].append(planted)
    repo = build_repo(tmp_path / "ws", one_round_config(), cases)

    result = run_cli(repo)

    assert result.exit_code == 0, result.output
    assert (repo.root / ".frames" / "runs").is_dir() and any((repo.root / ".frames" / "cache").iterdir())
    for path in (repo.root / ".frames").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [k for k in KEYS if k.encode() in data], path
    objects = subprocess.run(["git", "rev-list", "--objects", "--all"], cwd=repo.root, capture_output=True, text=True,
                             check=True).stdout.split()
    dump = subprocess.run(["git", "cat-file", "--batch"], cwd=repo.root,
                          input=("\n".join(o for o in objects if len(o) == 40) + "\n").encode(),
                          capture_output=True, check=True).stdout
    # The case file itself is the user's (committed by them); everything frames made is checked.
    case_blob = subprocess.run(["git", "rev-parse", "HEAD:cases/airline.yaml"], cwd=repo.root, capture_output=True,
                               text=True).stdout.strip()
    own = subprocess.run(["git", "cat-file", "-p", case_blob], cwd=repo.root, capture_output=True, check=True).stdout
    assert not [k for k in KEYS if dump.count(k.encode()) > own.count(k.encode())]
