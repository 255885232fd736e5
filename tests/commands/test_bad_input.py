"""Bad input never crashes and never writes: each malformed input gets its exact message and exit code.

Invariants, one assertion each per case:
1. the exit code is the documented one (2 for bad input, 1 for git, 75 for the lock);
2. the message is exactly `path:line: severity: message` (validate) or `error: path:line: message`;
3. no file under the workspace changed and no commit was made.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app

runner = CliRunner()
POLICY = ("# Card Policy\n\n## Lost cards\n\nBlock the card at once.\nOrder a new card.\nTell the customer it arrives "
          "in 5 days.\n")
SHA = "a" * 64


def _skill(root: Path, folder: str, data: bytes | str) -> None:
    path = root / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".frames")
    }


@pytest.fixture
def ws(policy_workspace, monkeypatch) -> Path:
    """A workspace whose policy was cold-started (skill `lost-cards`, committed); cwd is its root."""
    root = policy_workspace()
    (root / "policies" / "cards.md").write_text(POLICY)
    assert runner.invoke(app, ["coldstart", "--repo", str(root)]).exit_code == 0
    monkeypatch.chdir(root)
    return root


# (id, set-up, command, exit code, expected line: one of the lines validate prints, or the first line on stderr)
CASES: list[tuple[str, Callable[[Path], None], list[str], int, str]] = [
    (
        "broken-yaml-front-matter",
        lambda r: _skill(r, "x", "---\nname: x\ndescription: [broken\n---\nbody\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:3: error: invalid YAML in front matter: expected ',' or ']', but got '<stream end>'",
    ),
    (
        "missing-name",
        lambda r: _skill(r, "x", "---\ndescription: d\n---\nbody\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:1: error: missing required front-matter key `name`",
    ),
    (
        "name-folder-mismatch",
        lambda r: _skill(r, "x", "---\nname: y\ndescription: d\n---\nbody\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:2: error: name 'y' differs from its folder name 'x'",
    ),
    (
        "duplicate-names",
        lambda r: _skill(r, "copy", (r / "skills" / "lost-cards" / "SKILL.md").read_text()),
        ["validate"], 2,
        "skills/copy/SKILL.md:2: error: duplicate skill name 'lost-cards' (used by skills/copy/SKILL.md, "
        "skills/lost-cards/SKILL.md)",
    ),
    (
        "name-with-dotdot",
        lambda r: _skill(r, "evil", "---\nname: ../evil\ndescription: d\n---\nbody\n"),
        ["validate"], 2,
        "skills/evil/SKILL.md:2: error: name '../evil' must be lowercase letters, digits and single hyphens (no "
        "leading or trailing hyphen)",
    ),
    (
        "non-utf8-skill",
        lambda r: _skill(r, "x", b"---\nname: x\ndescription: caf\xe9\n---\nbody\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:3: error: not UTF-8 text (byte 28)",
    ),
    (
        "nul-in-skill",
        lambda r: _skill(r, "x", "---\nname: x\ndescription: d\n---\nbody\nhidden\x00text\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:6: error: control character U+0000 (NUL) at column 7; remove it (the file must be plain "
        "text)",
    ),
    (
        "bidi-override-in-skill",
        lambda r: _skill(r, "x", "---\nname: x\ndescription: d\n---\nRefund \u202eon 05 days\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:5: error: invisible (bidirectional or zero-width) character U+202E (RIGHT-TO-LEFT OVERRIDE) "
        "at column 8; remove it (the file must be plain text)",
    ),
    (
        "escape-in-frames-yaml",
        lambda r: (r / "frames.yaml").write_text("version: 1\nexecutor:\n  kind: \x1b]0;pwned\x07builtin\n"),
        ["validate"], 2,
        "frames.yaml:3: error: control character U+001B (ESC) at column 9; remove it (the file must be plain text)",
    ),
    (
        "nul-in-case-file",
        lambda r: ((r / "cases").mkdir(exist_ok=True),
                   (r / "cases" / "bad.yaml").write_text("- id: c1\n  category: cards\n  task: {input: {text: "
                                                         "\"hi\x00\"}}\n")),
        ["validate"], 2,
        "cases/bad.yaml:3: error: control character U+0000 (NUL) at column 27; remove it (the file must be plain text)",
    ),
    (
        "zero-width-in-policy",
        lambda r: (r / "policies" / "zw.md").write_text("# Fees\n\nThe fee is $7\u200b5.\n"),
        ["coldstart"], 2,
        "error: policies/zw.md:3: invisible (bidirectional or zero-width) character U+200B (ZERO WIDTH SPACE) at "
        "column 14; remove it (the file must be plain text)",
    ),
    (
        "angle-brackets-in-description",
        lambda r: _skill(r, "x", "---\nname: x\ndescription: use <b>bold</b>\n---\nbody\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:3: error: description must not contain `<` or `>`",
    ),
    (
        "unclosed-protected-region",
        lambda r: _skill(r, "x", "---\nname: x\ndescription: d\n---\n\nintro\n<!-- frames:protected -->\nkeep\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:7: error: protected region is never closed",
    ),
    (
        "backlink-to-missing-policy",
        lambda r: _skill(r, "x",
                         f"---\nname: x\ndescription: d\nmetadata:\n  frames-backlinks: policies/gone.md#L1-L2 "
                         f"sha256:{SHA} Gone\n---\nbody\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:1: error: back-link to policies/gone.md:1-2 does not resolve: no such policy file",
    ),
    (
        "backlink-escaping-the-workspace",
        lambda r: (
            (r.parent / "outside.md").write_text("secret\n"),
            _skill(r, "x",
                   f"---\nname: x\ndescription: d\nmetadata:\n  frames-backlinks: ../outside.md#L1-L1 sha256:{SHA}\n"
                   f"---\nbody\n"),
        ),
        ["validate"], 2,
        "skills/x/SKILL.md:1: error: back-link to ../outside.md:1-1 does not resolve: no such policy file",
    ),
    (
        "reference-to-unknown-skill",
        lambda r: _skill(r, "x",
                         "---\nname: x\ndescription: d\nmetadata:\n  frames-references: lost-cards, nope\n---\nbody\n"),
        ["validate"], 2,
        "skills/x/SKILL.md:1: error: references unknown skill 'nope'",
    ),
    (
        "skill-folder-without-skill-md",
        lambda r: (r / "skills" / "draft" / "notes").mkdir(parents=True),
        ["validate"], 2,
        "skills/draft: error: skill folder has no SKILL.md",
    ),
    (
        "frames-yaml-unknown-key",
        lambda r: (r / "frames.yaml").write_text("version: 1\nllm:\n  concurrenc: 3\n"),
        ["validate"], 2,
        "frames.yaml:3: error: unknown key `llm.concurrenc` (known here: api_base, backoff_base_s, backoff_max_s, "
        "batch, cache, concurrency, max_output_tokens, max_retries, processes, repair_turns, temperature, timeout_s)",
    ),
    (
        "frames-yaml-wrong-type",
        lambda r: (r / "frames.yaml").write_text("coldstart:\n  max_tokens: many\n"),
        ["coldstart"], 2,
        "error: {root}/frames.yaml:2: `coldstart.max_tokens` must be integer, got 'many'",
    ),
    (
        "empty-policy-file",
        lambda r: (r / "policies" / "empty.md").write_text(""),
        ["coldstart"], 2,
        "error: policies/empty.md: empty policy document",
    ),
    (
        "binary-file-in-policies",
        lambda r: (r / "policies" / "scan.pdf").write_bytes(b"%PDF-1.7\n\x00\x01\x02binary"),
        ["coldstart"], 2,
        "error: policies/scan.pdf:2: binary file, not a policy document (policies/ holds Markdown or plain text)",
    ),
    (
        "non-utf8-policy",
        lambda r: (r / "policies" / "latin1.md").write_bytes("# Politique\n\nDélai de 5 jours.\n".encode("latin-1")),
        ["coldstart"], 2,
        "error: policies/latin1.md:3: not UTF-8 text (byte 14)",
    ),
    (
        "huge-policy-file",
        lambda r: (r / "policies" / "huge.md").write_text("# Huge\n\n" + "A rule line that repeats.\n" * 40_000),
        ["coldstart"], 2,
        "error: policies/huge.md: policy file is 1040008 bytes; the limit is 1000000 (split it into several documents)",
    ),
    (
        "no-policy-documents",
        lambda r: (r / "policies" / "cards.md").rename(r / "policies" / "LICENSE"),
        ["coldstart"], 2,
        "error: {root}/policies: no policy documents (add Markdown or text files to policies/); skipped: "
        "policies/LICENSE (companion file)",
    ),
    (
        "broken-skill-stops-coldstart",
        lambda r: (
            (r / "policies" / "cards.md").write_text(POLICY + "Report the loss to the police.\n"),
            _skill(r, "lost-cards",
                   (r / "skills" / "lost-cards" / "SKILL.md").read_text().replace("name: lost-cards", "name: [broken")),
        ),
        ["coldstart"], 2,
        "error: skills/lost-cards/SKILL.md:2: invalid YAML in front matter: expected ',' or ']', but got ':' "
        "(fix it, or delete it and coldstart makes it again)",
    ),
    (
        "not-a-workspace",
        lambda r: (r / "frames.yaml").unlink(),
        ["status"], 2,
        "error: {root}: not a frames workspace: no frames.yaml here (run `frames init` first)",
    ),
    (
        "not-a-git-repository",
        lambda r: subprocess.run(["rm", "-rf", str(r / ".git")], check=True),
        ["coldstart"], 1,
        "error: {root}: not a git repository (run `frames init` or `git init`)",
    ),
]


@pytest.mark.parametrize(("setup", "args", "code", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(ws: Path, setup: Callable[[Path], None], args: list[str], code: int, line: str) -> None:
    setup(ws)
    before = _tree(ws)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout
    done = runner.invoke(app, args)
    assert done.exit_code == code, done.output
    if args[0] == "validate":
        assert line in done.stdout.splitlines(), done.stdout
    else:
        assert done.stderr.splitlines()[0] == line.format(root=ws)
    assert _tree(ws) == before
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout == head


def test_headingless_policy_is_one_skill_named_after_the_file(ws: Path) -> None:
    (ws / "policies" / "returns.txt").write_text("Returns are accepted within 30 days.\nA receipt is required.\n"
                                                 "Refunds go to the card used.\n")
    done = runner.invoke(app, ["coldstart"])
    assert done.exit_code == 0
    assert done.stdout.splitlines()[0] == "created: returns"
    assert (
        (ws / "skills" / "returns" / "SKILL.md")
        .read_text()
        .endswith("\n\nReturns are accepted within 30 days.\nA receipt is required.\nRefunds go to the card used.\n")
    )


def test_held_lock_exits_75_naming_the_run(ws: Path) -> None:
    from frames_cli.workspace.layout import Workspace
    from frames_cli.workspace.lock import workspace_lock

    (ws / "policies" / "cards.md").write_text(POLICY + "Report the loss to the police.\n")
    before = _tree(ws)
    with workspace_lock(Workspace.open(ws), "20261129-210000-abc123", "evolve"):
        done = runner.invoke(app, ["coldstart"])
        info = (ws / ".frames" / "lock.json").read_text()
    assert done.exit_code == 75
    pid = __import__("json").loads(info)["pid"]
    started = __import__("json").loads(info)["started"]
    assert (
        done.stderr.strip()
        == f"error: {ws}: locked by run 20261129-210000-abc123 (`frames evolve`, pid {pid}, since {started}); try "
           f"again when it has finished"
    )
    assert _tree(ws) == before
    # Released on exit: the next run goes through.
    assert runner.invoke(app, ["coldstart"]).exit_code == 0


def test_force_regenerates_a_broken_skill(ws: Path) -> None:
    path = ws / "skills" / "lost-cards" / "SKILL.md"
    good = path.read_text()
    path.write_text(good.replace("name: lost-cards", "name: [broken"))
    done = runner.invoke(app, ["coldstart", "--force"])
    assert done.exit_code == 0, done.output
    assert "updated: lost-cards" in done.stdout.splitlines()
    assert path.read_text() == good
