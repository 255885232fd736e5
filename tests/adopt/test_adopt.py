"""`frames adopt`: an existing skill library becomes a valid Agent Skills library, nothing of a body lost.

The fixture `tests/fixtures/adopt-library/` rebuilds issue 17's case: 31 SKILL.md files, 24 of which
the reference validator rejects (extra keys in 9, invalid YAML in 7, no front matter in 3, a
description over 1,024 characters in 2, name ≠ folder in 2, a missing description in 1);
`defects.json` names each file's defect.

Invariants:
1. Before adoption the reference validator rejects exactly the 24; after it, all 31 pass.
2. Every body is unchanged byte for byte; a shortened description's full text is appended to it.
3. The report names, per file, the change its defect needs; valid files are reported unchanged.
4. The result is one commit of skills/ only, authored and committed by the user's git identity.
5. `--dry-run` writes and commits nothing; adopting again changes nothing.
6. A file that cannot be repaired is left byte for byte as it was and named with the reason.
7. From another folder, skills are copied with their other files; the source is not changed.
8. With `models.coldstart`, a missing description is the model's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from helpers import init_git_repo

LIBRARY = Path(__file__).parents[1] / "fixtures" / "adopt-library"
DEFECTS: dict[str, str] = json.loads((LIBRARY / "defects.json").read_text())
#: What the report must say for each defect (a phrase of the change line).
CHANGE_FOR = {
    "extra-keys": "moved under `metadata`",
    "invalid-yaml": "invalid YAML",
    "no-front-matter": "front matter added",
    "long-description": "description shortened",
    "name-mismatch": "(a skill's name must equal its folder's)",
    "missing-description": "description written from the body's text",
}


def _validate(folder: Path) -> list[str]:
    from skills_ref.validator import validate  # the function behind `agentskills validate`

    return validate(folder)


def _body(text: str) -> str:
    """The body as the original file holds it: after the closing fence without leading blank lines,
    or the whole file when it has no front matter."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return text
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---")
    return "".join(lines[close + 1 :]).lstrip("\r\n")


def _workspace(tmp_path: Path, with_library: bool = True, config: str = "version: 1\n"):
    repo = init_git_repo(tmp_path / "ws")
    (repo.root / "frames.yaml").write_text(config)
    if with_library:
        shutil.copytree(LIBRARY, repo.root / "skills", ignore=shutil.ignore_patterns("defects.json"))
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "the team's skills")
    return repo


def _adopt(repo, *args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(app, ["adopt", *args, "--json", "--repo", str(repo.root)])
    return result.exit_code, (json.loads(result.stdout) if result.stdout.strip() else {}), result.stderr


def test_the_fixture_rebuilds_the_issue_case() -> None:
    assert len(DEFECTS) == 31
    counts: dict[str, int] = {}
    for kind in DEFECTS.values():
        counts[kind] = counts.get(kind, 0) + 1
    assert counts == {"valid": 7, "extra-keys": 9, "invalid-yaml": 7, "no-front-matter": 3, "long-description": 2,
                      "name-mismatch": 2, "missing-description": 1}
    rejected = {name for name in DEFECTS if _validate(LIBRARY / name)}
    assert rejected == {name for name, kind in DEFECTS.items() if kind != "valid"}


def test_adopting_the_library_in_place(tmp_path: Path) -> None:
    repo = _workspace(tmp_path)
    before = {name: (repo.root / "skills" / name / "SKILL.md").read_text() for name in DEFECTS}
    head = repo.git("rev-parse", "HEAD").strip()

    code, report, err = _adopt(repo)

    assert code == 0, err
    assert report["counts"] == {"valid": 7, "repaired": 24, "updated": 0, "unchanged": 0, "unrepairable": 0}
    by_skill = {f["skill"]: f for f in report["files"]}
    from frames_cli.formats.skill_file import parse_skill

    for name, kind in DEFECTS.items():
        entry = by_skill[name]
        folder = repo.root / "skills" / name
        assert _validate(folder) == [], f"{name}: {_validate(folder)}"
        adopted = parse_skill((folder / "SKILL.md").read_text(), folder / "SKILL.md")
        original = _body(before[name])
        if kind == "long-description":
            assert adopted.body.startswith(original) and "## Full description" in adopted.body[len(original):]
            full = adopted.body[len(original):].split("## Full description", 1)[1].strip()
            assert len(full) > 1024 and adopted.description.split()[0] in full
        else:
            assert adopted.body == original, name
        if kind == "valid":
            assert (
                entry["status"] == "valid"
                and entry["changes"] == []
                and (folder / "SKILL.md").read_text() == before[name]
            )
        else:
            assert entry["status"] == "repaired"
            assert any(CHANGE_FOR[kind] in change for change in entry["changes"]), (name, entry["changes"])
    # Unknown keys are strings under metadata, with their text as written.
    docker = parse_skill((repo.root / "skills/docker-compose/SKILL.md").read_text(), Path("x"))
    assert docker.metadata == {"version": "1.0.3"}
    assert parse_skill((repo.root / "skills/ci-pipelines/SKILL.md").read_text(), Path("x")).metadata == {
        "tags": "ci, github-actions, yaml"
    }

    # One commit, by the user, of skills/ only, on the current branch.
    assert repo.git("rev-parse", "HEAD~1").strip() == head
    assert (
        repo.git("log", "-1", "--format=%an <%ae>|%cn <%ce>").strip()
        == "Test User <test@example.com>|Test User <test@example.com>"
    )
    changed = repo.git("show", "--name-only", "--format=", "HEAD").split()
    assert len(changed) == 24 and all(p.startswith("skills/") for p in changed)
    assert "Frames-Command: adopt" in repo.git("log", "-1", "--format=%B")
    assert report["commit"] == repo.git("rev-parse", "HEAD").strip()
    assert repo.git("status", "--porcelain").strip() == ""

    # frames validate agrees, and a second adoption has nothing to do.
    validated = CliRunner().invoke(app, ["validate", "--repo", str(repo.root)])
    assert validated.exit_code == 0, validated.output
    code, again, _ = _adopt(repo)
    assert (
        code == 0
        and again["counts"] == {"valid": 31, "repaired": 0, "updated": 0, "unchanged": 0, "unrepairable": 0}
        and again["commit"] is None
    )


def test_dry_run_writes_and_commits_nothing(tmp_path: Path) -> None:
    repo = _workspace(tmp_path)
    head = repo.git("rev-parse", "HEAD").strip()

    code, report, err = _adopt(repo, "--dry-run")

    assert code == 0, err
    assert report["dry_run"] and report["counts"]["repaired"] == 24 and report["written"] == []
    assert repo.git("rev-parse", "HEAD").strip() == head and repo.git("status", "--porcelain").strip() == ""


def test_unrepairable_files_are_left_untouched_and_named(tmp_path: Path) -> None:
    repo = _workspace(tmp_path, with_library=False)
    files = {
        "open-fence": b"---\nname: open-fence\ndescription: never closed\n\n# Body\n",
        "latin1": "---\nname: latin1\ndescription: caf\xe9\n---\nBody\n".encode("latin-1"),
        "ok-skill": b"---\nname: ok-skill\ndescription: Fine.\nauthor: me\n---\nBody\n",
        "OK Skill": b"---\nname: x\ndescription: Clashes with ok-skill once its folder is renamed.\n---\nOther body\n",
    }
    for folder, data in files.items():
        (repo.root / "skills" / folder).mkdir(parents=True)
        (repo.root / "skills" / folder / "SKILL.md").write_bytes(data)

    code, report, err = _adopt(repo, "--no-commit")

    # Issue 31: a file not adopted is a refusal, and a refusal exits non-zero.
    assert code == 2 and "3 skill file(s) not adopted" in err, err
    status = {f["source"]: (f["status"], f["reason"]) for f in report["files"]}
    assert (
        status["skills/open-fence/SKILL.md"][0] == "unrepairable"
        and "never closed" in status["skills/open-fence/SKILL.md"][1]
    )
    assert status["skills/latin1/SKILL.md"][0] == "unrepairable" and "not UTF-8" in status["skills/latin1/SKILL.md"][1]
    assert (
        status["skills/OK Skill/SKILL.md"][0] == "unrepairable"
        and "'ok-skill' is taken by skills/ok-skill" in status["skills/OK Skill/SKILL.md"][1]
    )
    assert status["skills/ok-skill/SKILL.md"] == ("repaired", None)
    for folder in ("open-fence", "latin1", "OK Skill"):
        assert (repo.root / "skills" / folder / "SKILL.md").read_bytes() == files[folder]


def test_a_folder_outside_the_workspace_is_copied_in(tmp_path: Path) -> None:
    repo = _workspace(tmp_path, with_library=False)
    source = tmp_path / "claude-skills"
    (source / "My Helper" / "scripts").mkdir(parents=True)
    (source / "My Helper" / "SKILL.md").write_text("# Helper\n\nRun scripts/run.sh first.\n")
    (source / "My Helper" / "scripts" / "run.sh").write_text("echo hi\n")
    snapshot = {p: p.read_bytes() for p in source.rglob("*") if p.is_file()}

    code, report, err = _adopt(repo, str(source))

    assert code == 0, err
    (entry,) = report["files"]
    assert entry["skill"] == "my-helper" and any("renamed 'my-helper'" in c for c in entry["changes"])
    assert (repo.root / "skills/my-helper/scripts/run.sh").read_text() == "echo hi\n"
    assert _validate(repo.root / "skills/my-helper") == []
    assert {p: p.read_bytes() for p in source.rglob("*") if p.is_file()} == snapshot
    assert sorted(repo.git("show", "--name-only", "--format=", "HEAD").split()) == [
        "skills/my-helper/SKILL.md",
        "skills/my-helper/scripts/run.sh",
    ]
    # the host's path stays out of the repository's history: the source is named from its folder down
    assert entry["source"] == "claude-skills/My Helper/SKILL.md"
    message = repo.git("log", "-1", "--format=%B")
    assert "(from claude-skills/My Helper/SKILL.md)" in message and str(tmp_path) not in message


def test_a_folder_renamed_in_place_moves_its_files(tmp_path: Path) -> None:
    repo = _workspace(tmp_path, with_library=False)
    (repo.root / "skills" / "Data_Tools" / "references").mkdir(parents=True)
    (repo.root / "skills" / "Data_Tools" / "SKILL.md").write_text("---\nname: Data_Tools\ndescription: Tools.\n---\n"
                                                                  "Body\n")
    (repo.root / "skills" / "Data_Tools" / "references" / "a.md").write_text("ref\n")
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "one skill")

    code, report, err = _adopt(repo)

    assert code == 0, err
    assert not (repo.root / "skills" / "Data_Tools").exists()
    assert (repo.root / "skills/data-tools/references/a.md").read_text() == "ref\n"
    assert repo.git("status", "--porcelain").strip() == ""
    assert sorted(repo.git("ls-files", "skills").split()) == ["skills/data-tools/SKILL.md",
                                                              "skills/data-tools/references/a.md"]


def test_no_user_identity_refuses_before_writing(tmp_path: Path) -> None:
    repo = _workspace(tmp_path)
    repo.git("config", "--unset", "user.name")
    repo.git("config", "--unset", "user.email")
    env = {"GIT_CONFIG_GLOBAL": str(tmp_path / "none"), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}

    result = CliRunner().invoke(app, ["adopt", "--repo", str(repo.root)], env=env)

    assert result.exit_code == 1, result.output
    assert "user.name" in result.stderr and "--no-commit" in result.stderr
    assert repo.git("status", "--porcelain").strip() == ""


@pytest.fixture
def describing():
    """A litellm custom provider `describing/<x>` answering every call with a fixed description."""
    from litellm.llms.custom_llm import CustomLLM
    from litellm.utils import custom_llm_setup

    from frames_cli.llm.transport.providers import litellm_module, make_response

    litellm = litellm_module()
    prompts: list[str] = []

    class Handler(CustomLLM):
        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            prompts.append(messages[-1]["content"])
            return make_response(f"describing/{model}",
                                 json.dumps({"description": "Clean <tabular> data before joins."}), "stop", 40, 8)

    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "describing"] + [
        {"provider": "describing", "custom_handler": Handler()}
    ]
    custom_llm_setup()
    yield prompts
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "describing"]


def test_a_missing_description_is_written_by_the_coldstart_model(tmp_path: Path, describing) -> None:
    repo = _workspace(tmp_path, with_library=False, config="version: 1\nmodels:\n  coldstart: describing/m\n")
    (repo.root / "skills" / "data-cleaning").mkdir(parents=True)
    shutil.copy(LIBRARY / "data-cleaning" / "SKILL.md", repo.root / "skills" / "data-cleaning" / "SKILL.md")

    code, report, err = _adopt(repo, "--no-commit")

    assert code == 0, err
    assert len(describing) == 1 and "Drop exact duplicate rows" in describing[0]
    (entry,) = report["files"]
    assert "description written by describing/m: 'Clean ‹tabular› data before joins.'" in entry["changes"]
    assert _validate(repo.root / "skills" / "data-cleaning") == []


def test_front_matter_repairs() -> None:
    from frames_cli.adopt.frontmatter import read_front

    assert read_front("name: x\nversion: 1.10\n")[0] == {"name": "x", "version": "1.10"}
    values, fixes = read_front("name: x\ndescription: Use when: asked\n")
    assert (
        values == {"name": "x", "description": "Use when: asked"}
        and "line 3: `description` read as plain text" in fixes
    )
    assert read_front('name: x\ndescription: "unclosed\n')[0]["description"] == "unclosed"
    assert read_front("name: x\ntags: [a, b\n")[0]["tags"] == "a, b"
    assert read_front("name: x\nmetadata:\n\towner: ops\n")[0]["metadata"] == {"owner": "ops"}


def test_the_cli_prints_each_change(tmp_path: Path) -> None:
    repo = _workspace(tmp_path)
    result = CliRunner().invoke(app, ["adopt", "--dry-run", "--repo", str(repo.root)])
    assert result.exit_code == 0, result.output
    assert "repaired: skills/docker-compose/SKILL.md" in result.stdout
    assert "  - key `version` moved under `metadata` as `version: 1.0.3`" in result.stdout
    assert "dry run: 7 valid, 24 repaired, 0 unrepairable; nothing written" in result.stdout


def test_agentskills_command_accepts_the_adopted_library(tmp_path: Path) -> None:
    from helpers import agentskills_command

    repo = _workspace(tmp_path)
    assert _adopt(repo)[0] == 0
    tool = agentskills_command()
    assert tool, "skills-ref (test extra) provides the `agentskills` command"
    for name in DEFECTS:
        done = subprocess.run([tool, "validate", str(repo.root / "skills" / name)], capture_output=True, text=True)
        assert done.returncode == 0, f"{name}: {done.stdout}{done.stderr}"


KILL_ON_THIRD_WRITE = """
import os, signal, sys
from pathlib import Path
import frames_cli.adopt.run as run
real, calls = run.atomic_write_text, []
def dying(path, text, *a, **k):
    calls.append(path)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(path, text, *a, **k)
run.atomic_write_text = dying
from frames_cli.commands.app import app
app(["adopt", "--repo", sys.argv[1]])
"""


def test_a_kill_during_adopt_is_finished_by_the_next_adopt(tmp_path: Path) -> None:
    # Issue 29: kill -9 half-way left half a library written, which the rerun called "unrepairable:
    # its name is taken" and never committed.
    import signal
    import sys

    repo = _workspace(tmp_path)
    head = repo.git("rev-parse", "HEAD")
    killed = subprocess.run([sys.executable, "-c", KILL_ON_THIRD_WRITE, str(repo.root)], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL
    assert repo.git("rev-parse", "HEAD") == head and repo.git("status", "--porcelain")  # half written

    code, report, err = _adopt(repo)

    assert code == 0, err
    assert report["finished_earlier"]["action"] == "undone" and report["finished_earlier"]["files"] >= 2
    assert report["counts"] == {"valid": 7, "repaired": 24, "updated": 0, "unchanged": 0, "unrepairable": 0}
    assert repo.git("status", "--porcelain") == "" and repo.git("rev-list", "--count", f"{head}..HEAD") == "1"
    assert _validate_all(repo.root / "skills") == []


def _validate_all(folder: Path) -> list[str]:
    return [problem for skill in sorted(folder.iterdir()) if skill.is_dir() for problem in _validate(skill)]


def test_a_commit_refused_by_a_hook_leaves_the_library_as_it_was(tmp_path: Path) -> None:
    repo = _workspace(tmp_path)
    hook = repo.root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)

    code, _report, err = _adopt(repo)

    assert code == 1 and "no commits today" in err and "put back" in err and "run `frames adopt` again" in err
    assert repo.git("status", "--porcelain") == ""
    hook.unlink()
    code, report, err = _adopt(repo)
    assert code == 0 and report["commit"] and report["counts"]["repaired"] == 24


def test_an_opening_fence_with_trailing_blanks_is_front_matter(tmp_path: Path) -> None:
    # Issue 29: `--- ` (a trailing space) was read as body: new front matter went on top, the old
    # block stayed in the body, and the description was made of its keys.
    from frames_cli.formats.skill_file import parse_skill

    repo = _workspace(tmp_path, with_library=False)
    text = ("--- \nname: pdf-tools\ndescription: Fill and merge PDF forms with the bundled scripts.\n---  \n# PDF "
            "tools\n\nUse scripts/fill.py.\n")
    (repo.root / "skills" / "pdf-tools").mkdir(parents=True)
    (repo.root / "skills" / "pdf-tools" / "SKILL.md").write_text(text)

    code, report, err = _adopt(repo)

    assert code == 0, err
    (entry,) = report["files"]
    assert entry["status"] == "repaired" and any("blanks after the opening" in c for c in entry["changes"])
    skill = parse_skill((repo.root / "skills/pdf-tools/SKILL.md").read_text(), Path("skills/pdf-tools/SKILL.md"))
    assert skill.description == "Fill and merge PDF forms with the bundled scripts."
    assert skill.body == "# PDF tools\n\nUse scripts/fill.py.\n" and "name:" not in skill.body
    assert _validate(repo.root / "skills/pdf-tools") == []
