"""Hostile user input (issue 15): every kind refused by validate and evolve alike, located, nothing written.

Invariants, per input:
1. `frames validate` exits 2 with a line naming the file (and the line, where the input has one).
2. `frames evolve` exits 2 with the same file named, or (a skill, issue 17's rule) leaves it out
   with a warning naming it.
3. Exit 2 writes nothing: no `.frames/` (lock, run folder), no ref, no file changed.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from helpers.airline import CONFIG, build_repo
from frames_cli.commands.app import app

runner = CliRunner()
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi")
)
GOOD = "---\nname: bad\ndescription: A test skill.\n---\n# Test\n\n- Check the reservation id first.\n"


def _state(root: Path) -> tuple[dict[str, bytes], str]:
    files = {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"")
        for p in sorted(root.rglob("*"))
        if p.relative_to(root).parts[0] != ".git"
    }
    refs = subprocess.run(["git", "for-each-ref"], cwd=root, capture_output=True, text=True).stdout
    return files, refs


def _config(extra: dict) -> Callable[[Path], None]:
    def write(root: Path) -> None:
        config = yaml.safe_load(yaml.safe_dump(CONFIG))
        for section, values in extra.items():
            config.setdefault(section, {}).update(values)
        (root / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))

    return write


def _raw_config(text: str) -> Callable[[Path], None]:
    return lambda root: (root / "frames.yaml").write_text(text)


def _skill(body: str) -> Callable[[Path], None]:
    def write(root: Path) -> None:
        path = root / "skills" / "bad" / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(GOOD + body)

    return write


def _link(rel: str, content: str | None) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        target = root.parent / "outside" / Path(rel).name
        target.parent.mkdir(parents=True, exist_ok=True)
        if content is not None:
            target.write_text(content)
        else:
            target.mkdir(exist_ok=True)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(target)

    return make


# (id, set-up, file the message names, its line or None, commit the set-up)
INPUTS: list[tuple[str, Callable[[Path], None], str, int | None, bool]] = [
    ("tolerance-nan",
     _raw_config(yaml.safe_dump(CONFIG, sort_keys=False).replace("tolerance: 0.05", "tolerance: .nan")), "frames.yaml",
     None, False),
    ("timeout-inf", _config({"llm": {"timeout_s": float("inf")}}), "frames.yaml", None, False),
    ("alias-bomb-command", _raw_config(BOMB + "executor:\n  kind: command\n  command: *i\n"), "frames.yaml", 6, False),
    ("deep-nesting", _raw_config("version: 1\nx: " + "[" * 3000 + "]" * 3000 + "\n"), "frames.yaml", 2, False),
    ("absolute-cases-glob", _config({"eval": {"cases": "/etc/*"}}), "frames.yaml", None, False),
    ("spool-dir-outside", _config({"spool": {"dir": "../spool"}}), "frames.yaml", None, False),
    ("vote-above-diagnosers", _config({"evolution": {"diagnosers": 2, "vote_threshold": 3}}), "frames.yaml", None,
     False),
    ("command-without-argv", _config({"executor": {"kind": "command"}}), "frames.yaml", None, False),
    ("nul-in-frames-yaml", _raw_config("version: 1\x00\n"), "frames.yaml", 1, False),
    ("alias-bomb-case-fields", lambda r: (r / "cases" / "bomb.yaml").write_text(
        "- &x\n" + "".join(f"  {line}\n" for line in BOMB.splitlines()) +
        "- {id: b1, category: cancel, source: {kind: t, ref: x}, created: '2026-12-01', "
        "task: {input: {text: x, fields: *x}, expected: 'no', check: {kind: exact}}}\n"), "cases/bomb.yaml", 7, False),
    ("case-symlink-outside", _link("cases/linked.yaml", "- {id: l1}\n"), "cases/linked.yaml", None, False),
    ("policy-symlink-outside", _link("policies/linked.md", "# Outside\n\nSecret rule.\n"), "policies/linked.md", None,
     True),
    ("policy-with-google-key", lambda r: (r / "policies").mkdir(exist_ok=True)
     or (r / "policies" / "keys.md").write_text(
        "# Keys\n\nUse AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q for maps.\n"), "policies/keys.md", 3, True),
    ("dot-frames-symlink", _link(".frames", None), ".frames", None, False),
]
SKILL_INPUTS: list[tuple[str, Callable[[Path], None], int | None]] = [
    ("marker-no-spaces", _skill("<!--frames:protected-->\nFee is $75.\n<!--/frames:protected-->\n"), 8),
    ("marker-upper-case", _skill("<!-- FRAMES:PROTECTED -->\nFee is $75.\n<!-- /FRAMES:PROTECTED -->\n"), 8),
    ("marker-inline", _skill("Fee is <!-- frames:protected -->$75<!-- /frames:protected --> per bag.\n"), 8),
    ("github-token", _skill("Token: ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n"), 8),
    ("openai-project-key", _skill("Key: sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0\n"), 8),
    ("huge-body", _skill("- A padding rule line that repeats for size.\n" * 20_000), None),
    ("symlinked-skill-md", lambda r: _link("skills/bad/SKILL.md", GOOD)(r), None),
]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch):
    built = build_repo(tmp_path / "ws",
                       yaml.safe_load(yaml.safe_dump({**CONFIG,
                                                      "evolution": {**CONFIG["evolution"], "max_rounds": 1}})))
    monkeypatch.chdir(built.root)
    return built


def _commit(repo) -> None:
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "input")


@pytest.mark.parametrize(("setup", "where", "line", "commit"), [i[1:] for i in INPUTS], ids=[i[0] for i in INPUTS])
def test_bad_input_is_refused_by_both_and_nothing_is_written(repo, setup, where, line, commit) -> None:
    setup(repo.root)
    if commit:
        _commit(repo)
    before = _state(repo.root)
    started = time.monotonic()
    for command in ("validate", "evolve"):
        done = runner.invoke(app, [command])
        assert done.exit_code == 2, (command, done.output)
        shown = [ln for ln in (done.stdout + done.stderr).splitlines() if where in ln and "error" in ln]
        assert shown, (command, done.output)
        if line is not None:
            assert f"{where}:{line}:" in shown[0], (command, shown[0])
        assert _state(repo.root) == before, command
    assert not (repo.root / ".frames").exists() or (repo.root / ".frames").is_symlink()
    assert time.monotonic() - started < 30  # a bomb is refused, not expanded


@pytest.mark.parametrize(("setup", "line"), [i[1:] for i in SKILL_INPUTS], ids=[i[0] for i in SKILL_INPUTS])
def test_bad_skill_is_an_error_for_validate_and_left_out_by_evolve(repo, setup, line) -> None:
    setup(repo.root)
    _commit(repo)
    done = runner.invoke(app, ["validate"])
    assert done.exit_code == 2
    where = "skills/bad/SKILL.md" + (f":{line}:" if line else "")
    assert any(where in ln and "error" in ln for ln in done.stdout.splitlines()), done.stdout
    done = runner.invoke(app, ["evolve"])
    assert done.exit_code == 0, done.output
    assert any("skills/bad" in ln and "warning" in ln for ln in (done.stdout + done.stderr).splitlines()), done.output


def test_coldstart_refuses_a_skill_holding_a_secret(policy_workspace) -> None:
    root = policy_workspace()
    (root / "policies" / "keys.md").write_text("# Map keys\n\nUse the maps key.\nIt is "
                                               "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0.\nNever share it.\n")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout
    done = runner.invoke(app, ["coldstart", "--repo", str(root)])
    assert done.exit_code == 2, done.output
    assert (
        "skills/map-keys/SKILL.md:" in done.stderr and "policies/keys.md" in done.stderr and "credential" in done.stderr
    )
    assert not (root / "skills" / "map-keys").exists()
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout == head


def test_resume_of_an_unknown_run_writes_nothing(repo) -> None:
    before = _state(repo.root)
    for run_id in ("20990101-000000-abcdef", "../x"):
        done = runner.invoke(app, ["evolve", "--resume", run_id])
        assert done.exit_code == 2, done.output
        assert _state(repo.root) == before and not (repo.root / ".frames").exists()
