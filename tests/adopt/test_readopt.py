"""Adopting an updated library again (issue 31).

Invariants:
1. Skills adopted before and unchanged since are brought up to the library's new version in one
   commit, with a per-file account (added, removed, +/− lines); skills the library did not change
   are reported unchanged; new skills are adopted as usual. Exit 0.
2. A skill of that name that was not adopted (made by hand) or was edited since its adoption is
   refused, left byte for byte as it was, named with the reason, and the command exits non-zero;
   the rest is still adopted in the same single commit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app

from helpers import init_git_repo


def skill(folder: Path, name: str, body: str, extra: str = "") -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Handle {name} requests.\n{extra}---\n"
                                            f"{body}")


def adopt(repo, library: Path):
    done = CliRunner().invoke(app, ["adopt", str(library), "--json", "--repo", str(repo.root)])
    return done.exit_code, json.loads(done.stdout), done.stderr


def commits(repo) -> int:
    return int(repo.git("rev-list", "--count", "HEAD").strip())


def test_an_updated_library_comes_in_as_one_commit_with_an_account(tmp_path: Path) -> None:
    repo = init_git_repo(tmp_path / "ws")
    (repo.root / "frames.yaml").write_text("version: 1\n")
    skill(repo.root / "skills", "mine", "Written here by hand.\n")
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "our own skill")
    library = tmp_path / "library"
    skill(library, "alpha", "Rule one.\n")
    skill(library, "beta", "Rule two.\n", extra="version: 1.0\n")
    skill(library, "gamma", "Rule three.\n")
    code, first, err = adopt(repo, library)
    assert code == 0, err
    before = commits(repo)

    skill(library, "alpha", "Rule one.\nRule one, part two.\n")
    (library / "beta" / "references").mkdir()
    (library / "beta" / "references" / "table.md").write_text("| a | b |\n")
    skill(library, "delta", "Rule four.\n")
    code, report, err = adopt(repo, library)

    assert code == 0, err
    status = {Path(f["source"]).parent.name: (f["status"], f["changes"]) for f in report["files"]}
    assert status["alpha"] == ("updated", ["SKILL.md: +1 −0 lines"])
    assert status["beta"] == ("updated", ["references/table.md: added"])
    assert status["gamma"] == ("unchanged", [])
    assert status["delta"][0] == "valid"
    assert commits(repo) == before + 1
    message = repo.git("log", "-1", "--format=%B")
    assert "skills/alpha updated from library/alpha/SKILL.md:\n- SKILL.md: +1 −0 lines" in message
    assert (repo.root / "skills" / "alpha" / "SKILL.md").read_text().endswith("Rule one, part two.\n")
    assert (repo.root / "skills" / "beta" / "references" / "table.md").read_text() == "| a | b |\n"
    assert repo.git("status", "--porcelain").strip() == ""

    (library / "beta" / "references" / "table.md").unlink()
    code, report, err = adopt(repo, library)
    assert code == 0, err
    assert {Path(f["source"]).parent.name: f["changes"] for f in report["files"]}["beta"] == [
        "references/table.md: removed"
    ]
    assert not (repo.root / "skills" / "beta" / "references" / "table.md").exists()


def test_a_skill_not_adopted_or_edited_since_is_refused_with_a_non_zero_exit(tmp_path: Path) -> None:
    repo = init_git_repo(tmp_path / "ws")
    (repo.root / "frames.yaml").write_text("version: 1\n")
    skill(repo.root / "skills", "mine", "Written here by hand.\n")
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "our own skill")
    library = tmp_path / "library"
    skill(library, "alpha", "Rule one.\n")
    assert adopt(repo, library)[0] == 0
    edited = repo.root / "skills" / "alpha" / "SKILL.md"
    edited.write_text(edited.read_text() + "Our own addition.\n")
    repo.git("commit", "-q", "-am", "our edit")
    ours = {p: (repo.root / "skills" / p / "SKILL.md").read_bytes() for p in ("alpha", "mine")}

    skill(library, "alpha", "Rule one, changed upstream.\n")
    skill(library, "mine", "The library's own skill of that name.\n")
    skill(library, "omega", "Rule nine.\n")
    before = commits(repo)
    code, report, err = adopt(repo, library)

    assert code == 2 and "2 skill file(s) not adopted" in err and "written and committed" in err
    reasons = {Path(f["source"]).parent.name: f["reason"] for f in report["files"] if f["status"] == "unrepairable"}
    assert "was not adopted from a library (last changed by" in reasons["alpha"] and "“our edit”" in reasons["alpha"]
    assert "was not adopted from a library" in reasons["mine"] and "“our own skill”" in reasons["mine"]
    assert {p: (repo.root / "skills" / p / "SKILL.md").read_bytes() for p in ours} == ours
    assert commits(repo) == before + 1 and (repo.root / "skills" / "omega" / "SKILL.md").exists()

    shutil.rmtree(library / "mine")
    shutil.rmtree(library / "alpha")
    omega = repo.root / "skills" / "omega" / "SKILL.md"
    omega.write_text(omega.read_text() + "An edit not committed yet.\n")
    skill(library, "omega", "Rule nine, changed upstream.\n")
    code, report, err = adopt(repo, library)
    assert code == 2
    (reason,) = [f["reason"] for f in report["files"] if f["status"] == "unrepairable"]
    assert reason.startswith("skills/omega/ has changes not committed since it was adopted")
    assert omega.read_text().endswith("An edit not committed yet.\n")
