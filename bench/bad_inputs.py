"""A table of hostile and malformed inputs through `frames validate` and `frames evolve` (issue 15).

Usage: python bench/bad_inputs.py [--only SUBSTRING] [--jobs N]

Each input is applied to a fresh copy of a small workspace (the bundled airline policy, three of
its skills, eight of its cases, the simulator for every role, one round), committed when the input
is a skill or policy (evolve reads those at the base commit), and then both commands run as real
processes. Printed per input: the exit code of each, whether the first error line names the file
(and a line, when the input has one), whether anything was written (files under the workspace
including `.frames/`, git refs, HEAD, the index), and a traceback when there was one. Inputs that
only `frames evolve` takes (`--resume` ids, `--base`) are not given to validate and not compared. A
skill that does not load is left out of an evolve run with a warning (docs/DECISIONS.md, issue 17):
validate's exit 2 and evolve's warning naming the same file count as agreeing ("left out").

Totals: `tracebacks` (a Python traceback in either command), `wrote-on-error` (a non-zero exit that
left anything behind), `validate-evolve-disagree` (one refused the input with exit 2 and the other
did not), `accepted` (an input both let through with exit 0) and `unlocated` (an exit-2 message of
evolve or validate that does not name the file).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
FRAMES = [sys.executable, "-m", "frames_cli"]
SKILLS = ("book-flight", "cancel-flight", "domain-basic")
CONFIG = """version: 1
models:
  executor: frames-sim/executor
  diagnoser: frames-sim/diagnoser
  rewriter: frames-sim/rewriter
  judge: frames-sim/judge
evolution:
  max_rounds: 1
  patience: 1
{extra}"""
SKILL = "---\nname: {name}\ndescription: {description}\n---\n{body}"


@dataclass(frozen=True)
class Input:
    """One bad input: `name`, `where` (file the message must name, '' = none), `line` (True when the
    message must name a line too), `setup(root)` makes it; `commit` commits skills/ and policies/
    after; `evolve_args` are extra arguments; `evolve_only` skips validate."""

    name: str
    where: str
    setup: Callable[[Path], None]
    line: bool = True
    commit: bool = False
    evolve_args: tuple[str, ...] = ()
    evolve_only: bool = False


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def config(extra: str) -> Callable[[Path], None]:
    return lambda r: write(r, "frames.yaml", CONFIG.format(extra=extra))


def raw_config(text: str | bytes) -> Callable[[Path], None]:
    return lambda r: write(r, "frames.yaml", text)


def skill(name: str, body: str, description: str = "A test skill.", folder: str | None = None) -> Callable[[Path], None]:
    return lambda r: write(r, f"skills/{folder or name}/SKILL.md", SKILL.format(name=name, description=description, body=body))


def raw_skill(folder: str, data: str | bytes) -> Callable[[Path], None]:
    return lambda r: write(r, f"skills/{folder}/SKILL.md", data)


def case_file(text: str | bytes, name: str = "bad.yaml") -> Callable[[Path], None]:
    return lambda r: write(r, f"cases/{name}", text)


def case(**override: str) -> str:
    fields = {
        "id": "bad-1", "category": "cancel", "source": "{kind: test, ref: x}", "created": "2026-12-01",
        "task": '{input: {text: "Cancel my trip."}, expected: "no", check: {kind: exact}}',
    }
    fields.update(override)
    return "- " + "\n  ".join(f"{k}: {v}" for k, v in fields.items()) + "\n"


def policy(text: str | bytes, name: str = "extra.md") -> Callable[[Path], None]:
    return lambda r: write(r, f"policies/{name}", text)


def symlink(rel: str, target: str, content: str | None = None) -> Callable[[Path], None]:
    """`rel` becomes a symlink to `target` (relative to the workspace's parent: outside it)."""

    def make(r: Path) -> None:
        outside = r.parent / target
        if content is not None:
            outside.parent.mkdir(parents=True, exist_ok=True)
            outside.write_text(content)
        link = r / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        elif link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(outside)

    return make


def both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    return lambda r: [s(r) for s in steps] and None


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
DEEP = "[" * 5000 + "]" * 5000
GOOD_BODY = "# Test\n\n- Check the reservation id first.\n"
SECRETS = {
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws-secret": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "google": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "openai-project": "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4",
}


def inputs() -> list[Input]:
    out = [
        # --- frames.yaml -----------------------------------------------------------------------
        Input("yaml-syntax", "frames.yaml", raw_config("version: 1\nmodels: [broken\n")),
        Input("yaml-unknown-key", "frames.yaml", config("llm:\n  concurrenc: 3\n")),
        Input("yaml-duplicate-key", "frames.yaml", config("evolution:\n  seed: 1\n")),
        Input("yaml-wrong-type", "frames.yaml", config("llm:\n  concurrency: many\n")),
        Input("yaml-top-level-list", "frames.yaml", raw_config("- a\n- b\n")),
        Input("yaml-version-2", "frames.yaml", raw_config("version: 2\n")),
        Input("yaml-nul", "frames.yaml", raw_config("version: 1\nllm:\n  concurrency: 3\x00\n")),
        Input("yaml-escape", "frames.yaml", raw_config("version: 1\nexecutor:\n  kind: \x1b]0;pwned\x07builtin\n")),
        Input("yaml-bidi", "frames.yaml", raw_config("version: 1\neval:\n  cases: \u202ecases/*\n")),
        Input("yaml-not-utf8", "frames.yaml", raw_config(b"version: 1\n# caf\xe9\n")),
        Input("yaml-tolerance-nan", "frames.yaml", config("  tolerance: .nan\n")),
        Input("yaml-tolerance-inf", "frames.yaml", config("  tolerance: .inf\n")),
        Input("yaml-tolerance-neg-inf", "frames.yaml", config("  tolerance: -.inf\n")),
        Input("yaml-timeout-nan", "frames.yaml", config("llm:\n  timeout_s: .nan\n")),
        Input("yaml-max-usd-inf", "frames.yaml", config("budget:\n  max_usd: .inf\n")),
        Input("yaml-backoff-nan", "frames.yaml", config("llm:\n  backoff_max_s: .NaN\n")),
        Input("yaml-alias-bomb-command", "frames.yaml", raw_config(BOMB + "executor:\n  kind: command\n  command: *i\n")),
        Input("yaml-alias-bomb-anywhere", "frames.yaml", raw_config(BOMB + "version: 1\n")),
        Input("yaml-deep-nesting", "frames.yaml", raw_config("version: 1\nx: " + DEEP + "\n")),
        Input("yaml-huge", "frames.yaml", raw_config("version: 1\n" + "# padding line for a large file\n" * 40_000), line=False),
        Input("yaml-vote-above-diagnosers", "frames.yaml", config("  diagnosers: 2\n  vote_threshold: 3\n")),
        Input("yaml-executor-empty-string", "frames.yaml", config("executor: ''\n")),
        Input("yaml-command-without-argv", "frames.yaml", config("executor:\n  kind: command\n")),
        Input("yaml-batch-zero", "frames.yaml", config("  batch_size: 0\n")),
        Input("yaml-cases-absolute-glob", "frames.yaml", config("eval:\n  cases: /etc/*\n")),
        Input("yaml-cases-parent-glob", "frames.yaml", config("eval:\n  cases: ../*/cases/*\n")),
        Input("yaml-spool-dir-parent", "frames.yaml", config("spool:\n  dir: ../spool\n")),
        Input("yaml-spool-dir-absolute", "frames.yaml", config("spool:\n  dir: /tmp/frames-spool\n")),
        Input("yaml-sim-role-unknown", "frames.yaml", raw_config(CONFIG.format(extra="").replace("frames-sim/judge", "frames-sim/oracle"))),
        Input("yaml-tab-indent", "frames.yaml", raw_config("version: 1\nllm:\n\tconcurrency: 3\n")),
        Input("yaml-python-tag", "frames.yaml", raw_config("version: !!python/object/apply:os.system ['true']\n")),
        Input("yaml-bool-for-int", "frames.yaml", config("llm:\n  concurrency: yes\n")),
        Input("yaml-symlink", "frames.yaml", symlink("frames.yaml", "outside/frames.yaml", CONFIG.format(extra="")), line=False),
        # --- cases ----------------------------------------------------------------------------
        Input("case-yaml-syntax", "cases/bad.yaml", case_file("- id: [broken\n")),
        Input("case-nul", "cases/bad.yaml", case_file(case(id='"bad\x00id"'))),
        Input("case-escape", "cases/bad.yaml", case_file(case(category="\x1b[2Jcancel"))),
        Input("case-not-utf8", "cases/bad.yaml", case_file(case().encode() + b"# caf\xe9\n")),
        Input("case-missing-id", "cases/bad.yaml", case_file(case().replace("id: bad-1\n  ", ""))),
        Input("case-missing-category", "cases/bad.yaml", case_file(case().replace("category: cancel\n  ", ""))),
        Input("case-duplicate-key", "cases/bad.yaml", case_file(case() + "  category: baggage\n")),
        Input("case-duplicate-id", "cases/bad.yaml", case_file(case() + case())),
        Input("case-unknown-check", "cases/bad.yaml", case_file(case(task='{input: {text: "x"}, expected: "no", check: {kind: telepathy}}'))),
        Input("case-unknown-key", "cases/bad.yaml", case_file(case(colour="blue"))),
        Input("case-alias-bomb-fields", "cases/bad.yaml", case_file("- &x\n" + "".join(f"  {l}\n" for l in BOMB.splitlines()) + case(task='{input: {text: "x", fields: *x}, expected: "no", check: {kind: exact}}'))),
        Input("case-deep-nesting", "cases/bad.yaml", case_file(case(task='{input: {text: "x", fields: {a: ' + DEEP + '}}, expected: "no", check: {kind: exact}}'))),
        Input("case-jsonl-broken", "cases/bad.jsonl", case_file('{"id": "a", "category": "x"\n', "bad.jsonl")),
        Input("case-jsonl-nul-escape", "cases/bad.jsonl", case_file('{"id": "a\\u0000b", "category": "cancel", "source": {"kind": "t", "ref": "x"}, "created": "2026-12-01", "task": {"input": {"text": "x"}, "expected": "no", "check": {"kind": "exact"}}}\n', "bad.jsonl")),
        Input("case-jsonl-nan", "cases/bad.jsonl", case_file('{"id": "a", "category": "cancel", "source": {"kind": "t", "ref": "x"}, "created": "2026-12-01", "task": {"input": {"text": "x"}, "expected": NaN, "check": {"kind": "exact"}}}\n', "bad.jsonl")),
        Input("case-expected-nan", "cases/bad.yaml", case_file(case(task='{input: {text: "x"}, expected: .nan, check: {kind: exact}}'))),
        Input("case-python-tag", "cases/bad.yaml", case_file(case(id="!!python/name:os.system"))),
        Input("case-symlink-outside", "cases/bad.yaml", symlink("cases/bad.yaml", "outside/cases.yaml", case()), line=False),
        Input("case-not-a-list", "cases/bad.yaml", case_file("just a string\n")),
        Input("case-empty-category", "cases/bad.yaml", case_file(case(category='""'))),
        Input("case-id-path", "cases/bad.yaml", case_file(case(id="../../etc/passwd"))),
        # --- skills (committed: evolve reads them at the base) ----------------------------------
        Input("skill-nul", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "hidden\x00text\n"), commit=True),
        Input("skill-escape", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "\x1b]0;pwned\x07\n"), commit=True),
        Input("skill-bidi", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "Refund \u202eon 05 days\n"), commit=True),
        Input("skill-zero-width", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "The fee is $7\u200b5.\n"), commit=True),
        Input("skill-not-utf8", "skills/bad/SKILL.md", raw_skill("bad", b"---\nname: bad\ndescription: caf\xe9\n---\nbody\n"), commit=True),
        Input("skill-broken-front-matter", "skills/bad/SKILL.md", raw_skill("bad", "---\nname: bad\ndescription: [broken\n---\nbody\n"), commit=True),
        Input("skill-no-front-matter", "skills/bad/SKILL.md", raw_skill("bad", "just a body\n"), commit=True),
        Input("skill-missing-name", "skills/bad/SKILL.md", raw_skill("bad", "---\ndescription: d\n---\nbody\n"), commit=True),
        Input("skill-name-mismatch", "skills/bad/SKILL.md", skill("other", GOOD_BODY, folder="bad"), commit=True),
        Input("skill-bad-name", "skills/Bad_Name/SKILL.md", skill("Bad_Name", GOOD_BODY), commit=True),
        Input("skill-duplicate-name", "skills/", skill("book-flight", GOOD_BODY, folder="copy"), commit=True),
        Input("skill-angle-description", "skills/bad/SKILL.md", skill("bad", GOOD_BODY, description="use <b>bold</b>"), commit=True),
        Input("skill-unknown-key", "skills/bad/SKILL.md", raw_skill("bad", "---\nname: bad\ndescription: d\ncolour: blue\n---\nbody\n"), commit=True),
        Input("skill-metadata-not-string", "skills/bad/SKILL.md", raw_skill("bad", "---\nname: bad\ndescription: d\nmetadata:\n  k: [1, 2]\n---\nbody\n"), commit=True),
        Input("skill-alias-bomb", "skills/bad/SKILL.md", raw_skill("bad", "---\nname: bad\ndescription: d\nmetadata:\n  " + BOMB.replace("\n", "\n  ").rstrip() + "\n---\nbody\n"), commit=True),
        Input("skill-unclosed-protected", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "<!-- frames:protected -->\nkeep\n"), commit=True),
        Input("skill-stray-close-marker", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "<!-- /frames:protected -->\n"), commit=True),
        Input("skill-marker-no-spaces", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "<!--frames:protected-->\nFee is $75.\n<!--/frames:protected-->\n"), commit=True),
        Input("skill-marker-upper-case", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "<!-- FRAMES:PROTECTED -->\nFee is $75.\n<!-- /FRAMES:PROTECTED -->\n"), commit=True),
        Input("skill-marker-inline", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "Fee is <!-- frames:protected -->$75<!-- /frames:protected --> per bag.\n"), commit=True),
        Input("skill-marker-extra-word", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "<!-- frames:protected keep -->\nFee is $75.\n<!-- /frames:protected -->\n"), commit=True),
        Input("skill-folder-without-skill-md", "skills/draft", lambda r: write(r, "skills/draft/notes.md", "notes\n"), line=False, commit=True),
        Input("skill-symlinked-skill-md", "skills/bad/SKILL.md", symlink("skills/bad/SKILL.md", "outside/SKILL.md", SKILL.format(name="bad", description="d", body=GOOD_BODY)), line=False, commit=True),
        Input("skill-symlinked-folder", "skills/bad", symlink("skills/bad", "outside/bad-skill", None), line=False, commit=True),
        Input("skill-huge-body", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "- A padding rule line that repeats for size.\n" * 250_000), line=False, commit=True),
        Input("skill-secret-github", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + f"Token: {SECRETS['github']}\n"), commit=True),
        Input("skill-secret-openai", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + f"Key: {SECRETS['openai-project']}\n"), commit=True),
        Input("skill-long-description", "skills/bad/SKILL.md", skill("bad", GOOD_BODY, description="x" * 1100), commit=True),
        Input("skill-empty-description", "skills/bad/SKILL.md", skill("bad", GOOD_BODY, description='""'), commit=True),
        Input("skill-nested-folder", "skills/outer", skill("inner", GOOD_BODY, folder="outer/inner"), line=False, commit=True),
        # --- policies (committed) -----------------------------------------------------------
        Input("policy-nul", "policies/extra.md", policy("# Extra\n\nRule one.\nHidden\x00rule.\n"), commit=True),
        Input("policy-escape", "policies/extra.md", policy("# Extra\n\nRule \x1b[2Jone.\n"), commit=True),
        Input("policy-bidi", "policies/extra.md", policy("# Extra\n\nRefund \u202eon 05 days.\n"), commit=True),
        Input("policy-not-utf8", "policies/extra.md", policy("# Politique\n\nDélai de 5 jours.\n".encode("latin-1")), commit=True),
        Input("policy-binary", "policies/scan.pdf", policy(b"%PDF-1.7\n\x00\x01binary", "scan.pdf"), commit=True),
        Input("policy-empty", "policies/extra.md", policy(""), line=False, commit=True),
        Input("policy-huge", "policies/extra.md", policy("# Huge\n\n" + "A rule line that repeats.\n" * 40_000), line=False, commit=True),
        Input("policy-symlink-outside", "policies/extra.md", symlink("policies/extra.md", "outside/policy.md", "# Outside\n\nSecret rule.\n"), line=False, commit=True),
        Input("policy-secret", "policies/extra.md", policy(f"# Keys\n\nUse {SECRETS['google']} for maps.\n"), commit=True),
        Input("policy-symlinked-folder", "policies", both(lambda r: shutil.rmtree(r / "policies"), symlink("policies", "outside/policies", None)), line=False, commit=True),
        # --- evolve arguments ---------------------------------------------------------------
        Input("resume-parent-path", "../x", lambda r: None, line=False, evolve_args=("--resume", "../x"), evolve_only=True),
        Input("resume-absolute-path", "/tmp/x", lambda r: None, line=False, evolve_args=("--resume", "/tmp/x"), evolve_only=True),
        Input("resume-unknown-run", "20990101-000000-abcdef", lambda r: None, line=False, evolve_args=("--resume", "20990101-000000-abcdef"), evolve_only=True),
        Input("resume-dot-dot", "..", lambda r: None, line=False, evolve_args=("--resume", ".."), evolve_only=True),
        Input("resume-symlinked-run", "20990101-000000-abcdef", symlink(".frames/runs/20990101-000000-abcdef", "outside/run", None), line=False, evolve_args=("--resume", "20990101-000000-abcdef"), evolve_only=True),
        Input("base-unknown", "no-such-rev", lambda r: None, line=False, evolve_args=("--base", "no-such-rev"), evolve_only=True),
        Input("base-option-injection", "--output=/tmp/x", lambda r: None, line=False, evolve_args=("--base", "--output=/tmp/x"), evolve_only=True),
        Input("frames-dir-symlink", ".frames", symlink(".frames", "outside/frames-state", None), line=False, evolve_only=True),
    ]
    return out


def snapshot(root: Path) -> str:
    """A digest of everything a command could write: files (with symlink targets) under the
    workspace and beside it, git refs, HEAD and the index."""
    h = hashlib.sha256()
    for base in (root, root.parent / "outside"):
        if not base.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            rel = Path(dirpath).relative_to(root.parent)
            if rel.parts[:2] == (root.name, ".git"):
                dirnames[:] = []
                continue
            for name in sorted(dirnames + filenames):
                path = Path(dirpath) / name
                h.update(str(rel / name).encode())
                if path.is_symlink():
                    h.update(os.readlink(path).encode())
                elif path.is_file():
                    h.update(hashlib.sha256(path.read_bytes()).digest())
    for args in (["for-each-ref"], ["rev-parse", "HEAD"], ["ls-files", "-s"]):
        h.update(subprocess.run(["git", *args], cwd=root, capture_output=True).stdout)
    return h.hexdigest()


def template(folder: Path) -> Path:
    """The small workspace every input starts from, committed on `main`."""
    root = folder / "template" / "ws"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com"), ("commit.gpgsign", "false")):
        subprocess.run(["git", "config", key, value], cwd=root, check=True)
    shutil.copytree(ROOT / "policies", root / "policies")
    for name in SKILLS:
        shutil.copytree(ROOT / "skills" / name, root / "skills" / name)
    import yaml

    cases = []
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        cases += yaml.safe_load(path.read_text())
    (root / "cases").mkdir()
    (root / "cases" / "airline.yaml").write_text(yaml.safe_dump(cases[:8], sort_keys=False, allow_unicode=True))
    (root / "frames.yaml").write_text(CONFIG.format(extra=""))
    (root / ".gitignore").write_text(".frames/\n")
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "workspace"], cwd=root, check=True)
    return root


@dataclass
class Outcome:
    name: str
    validate: int | None
    evolve: int
    located: bool
    wrote: bool
    traceback: bool
    message: str
    left_out: bool = False


def run(cmd: list[str], cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=120, env=env)
    except subprocess.TimeoutExpired:
        return -9, "timed out after 120 s"
    return done.returncode, done.stdout + done.stderr


def error_line(output: str, where: str = "") -> str:
    """The error line of a command's output that names `where`, else its first error line, else its last line."""
    errors = [line for line in output.splitlines() if ": error:" in line or line.startswith("error:")]
    return next((line for line in errors if where and where in line), errors[0] if errors else (output.strip().splitlines() or [""])[-1])


def try_input(item: Input, tmpl: Path, work: Path) -> Outcome:
    case_dir = work / item.name
    shutil.copytree(tmpl.parent, case_dir, symlinks=True)
    root = case_dir / "ws"
    item.setup(root)
    if item.commit:
        subprocess.run(["git", "add", "-A", "skills", "policies"], cwd=root, capture_output=True)
        subprocess.run(["git", "commit", "-q", "-m", f"bad input {item.name}"], cwd=root, capture_output=True)
    before = snapshot(root)
    validate_code, validate_out = (None, "") if item.evolve_only else run([*FRAMES, "validate"], root)
    wrote_validate = snapshot(root) != before
    evolve_code, evolve_out = run([*FRAMES, "evolve", *item.evolve_args], root)
    wrote_evolve = snapshot(root) != before
    tb = "Traceback (most recent call last)" in validate_out + evolve_out
    wrote = (validate_code not in (0, None) and wrote_validate) or (evolve_code != 0 and wrote_evolve)
    where = item.where
    messages = [error_line(o, where) for c, o in ((validate_code, validate_out), (evolve_code, evolve_out)) if c == 2]

    def names(msg: str) -> bool:
        if where not in msg:
            return False
        return not item.line or any(part.isdigit() for part in msg.split(where, 1)[1].split(":")[1:2])

    located = bool(messages) and all(names(m) for m in messages)
    # A skill that does not load is left out of an evolve run with a warning naming it (issue 17's
    # decision), not fatal: that agrees with validate's error when the warning names the file.
    left_out = validate_code == 2 and evolve_code == 0 and where.startswith("skills") and any(
        "warning" in line and where in line for line in evolve_out.splitlines())
    shutil.rmtree(case_dir, ignore_errors=True)
    shown = error_line(evolve_out if evolve_code else validate_out, where)
    return Outcome(item.name, validate_code, evolve_code, located, wrote, tb, "left out by evolve; " + shown if left_out else shown, left_out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="run only inputs whose name holds this text")
    parser.add_argument("--jobs", type=int, default=2, help="inputs tried at once (default 2)")
    args = parser.parse_args()
    items = [i for i in inputs() if args.only in i.name]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tmpl = template(work)
        with ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(lambda i: try_input(i, tmpl, work), items))
    print(f"{'input':34} {'validate':>8} {'evolve':>6} {'located':>7} {'wrote':>5} {'tb':>3}  message")
    for o, item in zip(outcomes, items):
        v = "-" if o.validate is None else str(o.validate)
        print(f"{o.name:34} {v:>8} {o.evolve:>6} {'yes' if o.located else 'NO':>7} {'YES' if o.wrote else 'no':>5} {'TB' if o.traceback else '-':>3}  {o.message[:150]}")
    tracebacks = sum(o.traceback for o in outcomes)
    wrote = sum(o.wrote for o in outcomes)
    disagree = sum(o.validate is not None and (o.validate == 2) != (o.evolve == 2) and not o.left_out for o in outcomes)
    accepted = sum(o.evolve == 0 and o.validate in (0, None) for o in outcomes)
    unlocated = sum(not o.located for o in outcomes if 2 in (o.validate, o.evolve))
    print(f"\n{len(outcomes)} inputs; accepted={accepted} unlocated={unlocated}")
    print(f"tracebacks={tracebacks} wrote-on-error={wrote} validate-evolve-disagree={disagree}")
    return 0 if tracebacks == wrote == disagree == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
