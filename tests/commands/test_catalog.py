"""`frames catalog`: the built-in agent's first read, as it is sent, with its size.

Invariants:
1. The output is the given rules' blocks, then the listing, exactly as `first_turn` sends them.
2. `--json` counts what it prints: given and listed skills, tokens (characters / 4).
3. A skill that does not load is left out and named on stderr, as `frames eval` does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.executor.builtin import first_turn
from frames_cli.executor.catalog import Catalog
from frames_cli.formats.skill_set import SkillSet

ROOT = Path(__file__).resolve().parents[2]


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(root)]).exit_code == 0
    shutil.rmtree(root / "skills")
    shutil.copytree(ROOT / "skills", root / "skills")
    return root


def test_the_catalog_is_the_first_turn_before_the_request(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    done = CliRunner().invoke(app, ["catalog", "--repo", str(root)])
    assert done.exit_code == 0, done.output
    catalog = Catalog.of(SkillSet.from_dir(root / "skills"))
    sent = first_turn(catalog, "c1", "Cancel my trip.", "JSON", 3)
    shown, summary = done.stdout.rstrip("\n").rsplit("\n\n", 1)
    assert shown in sent and shown.startswith("Rules for every task of their policy")
    assert shown.index('name="airline-agent-policy-general-rules"') < shown.index("5 skills available:")
    data = json.loads(CliRunner().invoke(app, ["catalog", "--json", "--repo", str(root)]).stdout)
    assert [g["name"] for g in data["given"]] == ["airline-agent-policy-general-rules"]
    assert [s["name"] for s in data["listed"]] == list(catalog.listed.values())
    assert summary == (f"5 skills listed, {data['listing_tokens']:,} tokens ({data['tokens_per_listed_skill']} per "
                       f"skill); 1 given with every case, {data['given_tokens']:,} tokens (characters / 4)")


def test_a_skill_that_does_not_load_is_named_and_left_out(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    broken = root / "skills" / "book-flight" / "SKILL.md"
    broken.write_text("---\nname: book-flight\n---\nNo description.\n")
    done = CliRunner().invoke(app, ["catalog", "--json", "--repo", str(root)])
    assert done.exit_code == 0
    assert "book-flight" not in [s["name"] for s in json.loads(done.stdout)["listed"]]
    assert "skills/book-flight/SKILL.md" in done.stderr
