"""`frames --help` must not import the heavy libraries (litellm costs ~3 s, GitPython spawns git)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_help_imports_neither_litellm_nor_git() -> None:
    code = (
        "import sys, json\nfrom frames_cli.commands.app import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    "
        "pass\nheavy = [m for m in ('litellm', 'git', 'jsonschema', 'rank_bm25', 'frames_cli.llm.client.client') if m "
        "in sys.modules]\nprint(json.dumps(heavy), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "coldstart" in done.stdout and "validate" in done.stdout
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
