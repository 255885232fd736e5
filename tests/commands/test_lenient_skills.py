"""Commands that read skills use the valid ones and name the ones they leave out.

Invariants:
1. `frames eval` with one skill that does not load evaluates the others and names the bad file
   and its reason (stderr, and `left_out` in --json); with no loadable skill it exits 2 naming each.
2. `frames ingest generate --dry-run` with only bad skills says so instead of printing nothing.
3. `frames evolve` on a base with a bad skill runs on the others and says which it left out; the
   bad file is in the candidate commits unchanged.
4. `frames evolve` warns when skills/ in the working tree differs from the base commit it reads.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from helpers.airline import build_repo
from frames_cli.commands.app import app

BAD = "---\nname: legacy-notes\ndescription: Old notes.\nversion: 1.2\n---\n# Legacy\n\nKeep this line.\n"


def _add_bad_skill(root: Path) -> Path:
    path = root / "skills" / "legacy-notes" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(BAD)
    return path


def test_eval_leaves_out_a_bad_skill_and_names_it(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws")
    _add_bad_skill(repo.root)

    result = CliRunner().invoke(app, ["eval", "--json", "--repo", str(repo.root)])

    assert result.exit_code == 0, result.output
    assert (
        "left out 1 skill(s)" in result.stderr
        and "legacy-notes/SKILL.md:4" in result.stderr
        and "`version`" in result.stderr
    )
    data = json.loads(result.stdout)
    assert [p["location"].endswith("skills/legacy-notes/SKILL.md:4") for p in data["left_out"]] == [True]


def test_eval_with_no_loadable_skill_exits_2_naming_each(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws")
    for folder in (repo.root / "skills").iterdir():
        text = (folder / "SKILL.md").read_text()
        (folder / "SKILL.md").write_text(text.replace("---\nname:", "---\nauthor: someone\nname:", 1))

    result = CliRunner().invoke(app, ["eval", "--repo", str(repo.root)])

    assert result.exit_code == 2, result.output
    for name in ("baggage", "cancel-flight", "compensation"):
        assert f"{name}/SKILL.md:2" in result.stderr
    assert "frames adopt" in result.stderr


def test_ingest_generate_dry_run_names_the_skills_it_cannot_read(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws")
    for folder in (repo.root / "skills").iterdir():
        (folder / "SKILL.md").write_text("# no front matter\n\nA rule.\n")

    result = CliRunner().invoke(app, ["ingest", "generate", "--dry-run", "--repo", str(repo.root)])

    assert result.exit_code == 0, result.output
    assert result.stderr.count("warning: skill left out: SKILL.md must start with") == 3


def test_evolve_runs_without_the_bad_skill_and_warns_about_uncommitted_edits(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws")
    _add_bad_skill(repo.root)
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "a legacy skill")
    edited = repo.root / "skills" / "baggage" / "SKILL.md"
    edited.write_text(edited.read_text() + "- Pets fly in the cabin.\n")

    result = CliRunner().invoke(app, ["evolve", "--max-rounds", "1", "--repo", str(repo.root)])

    assert result.exit_code == 0, result.output
    assert "left out 1 skill(s)" in result.stderr and "legacy-notes/SKILL.md:4" in result.stderr
    assert (
        "skills/ in the working tree differs from the base commit" in result.stderr
        and "edited: baggage" in result.stderr
    )
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/frames/").split()
    child = [r for r in refs if r.endswith("r1c1")]
    if child:  # a round may make no child; when it does, the bad file rides along unchanged
        assert repo.git("show", f"{child[0]}:skills/legacy-notes/SKILL.md") == BAD.rstrip("\n")


def test_skills_drift_names_each_kind() -> None:
    from frames_cli.evolution.run.drift import skills_drift

    base = {"skills/a/SKILL.md": b"a", "skills/b/SKILL.md": b"b", "skills/c/SKILL.md": b"c", "skills/c/notes.md": b"x"}
    tree = {"skills/a/SKILL.md": b"a", "skills/b/SKILL.md": b"B", "skills/d/SKILL.md": b"d"}
    assert skills_drift(base, tree) == ["edited: b", "not committed: d", "deleted: c"]
    assert skills_drift(base, base) == []
