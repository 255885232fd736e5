"""Malformed and hostile files (issue 15's 102 inputs): frames.yaml, cases, skills, policies, symlinks, secrets,
bombs, run ids.

Each goes through `frames validate` and `frames evolve`; a skill or policy input is committed
first (evolve reads them at the base). Inputs only `frames evolve` takes (`--resume` ids,
`--base`) are not given to validate. A skill that does not load is left out of an evolve run with
a warning (docs/decisions/0024-first-contact-with-a-provider.md): validate's exit 2 and evolve's
warning naming the same file count as agreeing ("left out").
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from hostile.harness import CONFIG, SECRETS, Trial, write

SKILL = "---\nname: {name}\ndescription: {description}\n---\n{body}"


def file_input(name: str, where: str, setup: Callable[[Path], None], line: bool = True, commit: bool = False,
               evolve_args: tuple[str, ...] = (), evolve_only: bool = False) -> Trial:
    """A file input: `setup` writes it; validate and evolve (with `evolve_args`) run on it."""
    evolve = ("evolve", *evolve_args)
    commands = (evolve,) if evolve_only else (("validate",), evolve)
    return Trial(name, "file", setup, commands, where, line, commit, compare=not evolve_only)


def config(extra: str) -> Callable[[Path], None]:
    return lambda r: write(r, "frames.yaml", CONFIG.format(extra=extra))


def raw_config(text: str | bytes) -> Callable[[Path], None]:
    return lambda r: write(r, "frames.yaml", text)


def skill(
    name: str, body: str, description: str = "A test skill.", folder: str | None = None
) -> Callable[[Path], None]:
    return lambda r: write(r, f"skills/{folder or name}/SKILL.md",
                           SKILL.format(name=name, description=description, body=body))


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


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi")
)
DEEP = "[" * 5000 + "]" * 5000
GOOD_BODY = "# Test\n\n- Check the reservation id first.\n"


def trials() -> list[Trial]:
    """The file inputs of issue 15 (102): frames.yaml, cases, skills, policies, evolve arguments."""
    out = [
        # --- frames.yaml -----------------------------------------------------------------------
        file_input("yaml-syntax", "frames.yaml", raw_config("version: 1\nmodels: [broken\n")),
        file_input("yaml-unknown-key", "frames.yaml", config("llm:\n  concurrenc: 3\n")),
        file_input("yaml-duplicate-key", "frames.yaml", config("evolution:\n  seed: 1\n")),
        file_input("yaml-wrong-type", "frames.yaml", config("llm:\n  concurrency: many\n")),
        file_input("yaml-top-level-list", "frames.yaml", raw_config("- a\n- b\n")),
        file_input("yaml-version-2", "frames.yaml", raw_config("version: 2\n")),
        file_input("yaml-nul", "frames.yaml", raw_config("version: 1\nllm:\n  concurrency: 3\x00\n")),
        file_input(
            "yaml-escape", "frames.yaml", raw_config("version: 1\nexecutor:\n  kind: \x1b]0;pwned\x07builtin\n")
        ),
        file_input("yaml-bidi", "frames.yaml", raw_config("version: 1\neval:\n  cases: \u202ecases/*\n")),
        file_input("yaml-not-utf8", "frames.yaml", raw_config(b"version: 1\n# caf\xe9\n")),
        file_input("yaml-tolerance-nan", "frames.yaml", config("  tolerance: .nan\n")),
        file_input("yaml-tolerance-inf", "frames.yaml", config("  tolerance: .inf\n")),
        file_input("yaml-tolerance-neg-inf", "frames.yaml", config("  tolerance: -.inf\n")),
        file_input("yaml-timeout-nan", "frames.yaml", config("llm:\n  timeout_s: .nan\n")),
        file_input("yaml-max-usd-inf", "frames.yaml", config("budget:\n  max_usd: .inf\n")),
        file_input("yaml-backoff-nan", "frames.yaml", config("llm:\n  backoff_max_s: .NaN\n")),
        file_input(
            "yaml-alias-bomb-command", "frames.yaml", raw_config(BOMB + "executor:\n  kind: command\n  command: *i\n")
        ),
        file_input("yaml-alias-bomb-anywhere", "frames.yaml", raw_config(BOMB + "version: 1\n")),
        file_input("yaml-deep-nesting", "frames.yaml", raw_config("version: 1\nx: " + DEEP + "\n")),
        file_input(
            "yaml-huge",
            "frames.yaml",
            raw_config("version: 1\n" + "# padding line for a large file\n" * 40_000),
            line=False,
        ),
        file_input("yaml-vote-above-diagnosers", "frames.yaml", config("  diagnosers: 2\n  vote_threshold: 3\n")),
        file_input("yaml-executor-empty-string", "frames.yaml", config("executor: ''\n")),
        file_input("yaml-command-without-argv", "frames.yaml", config("executor:\n  kind: command\n")),
        file_input("yaml-batch-zero", "frames.yaml", config("  batch_size: 0\n")),
        file_input("yaml-cases-absolute-glob", "frames.yaml", config("eval:\n  cases: /etc/*\n")),
        file_input("yaml-cases-parent-glob", "frames.yaml", config("eval:\n  cases: ../*/cases/*\n")),
        file_input("yaml-spool-dir-parent", "frames.yaml", config("spool:\n  dir: ../spool\n")),
        file_input("yaml-spool-dir-absolute", "frames.yaml", config("spool:\n  dir: /tmp/frames-spool\n")),
        file_input(
            "yaml-sim-role-unknown",
            "frames.yaml",
            raw_config(CONFIG.format(extra="").replace("frames-sim/judge", "frames-sim/oracle")),
        ),
        file_input("yaml-tab-indent", "frames.yaml", raw_config("version: 1\nllm:\n\tconcurrency: 3\n")),
        file_input("yaml-python-tag", "frames.yaml", raw_config("version: !!python/object/apply:os.system ['true']\n")),
        file_input("yaml-bool-for-int", "frames.yaml", config("llm:\n  concurrency: yes\n")),
        file_input(
            "yaml-symlink",
            "frames.yaml",
            symlink("frames.yaml", "outside/frames.yaml", CONFIG.format(extra="")),
            line=False,
        ),
        # --- cases ----------------------------------------------------------------------------
        file_input("case-yaml-syntax", "cases/bad.yaml", case_file("- id: [broken\n")),
        file_input("case-nul", "cases/bad.yaml", case_file(case(id='"bad\x00id"'))),
        file_input("case-escape", "cases/bad.yaml", case_file(case(category="\x1b[2Jcancel"))),
        file_input("case-not-utf8", "cases/bad.yaml", case_file(case().encode() + b"# caf\xe9\n")),
        file_input("case-missing-id", "cases/bad.yaml", case_file(case().replace("id: bad-1\n  ", ""))),
        file_input("case-missing-category", "cases/bad.yaml", case_file(case().replace("category: cancel\n  ", ""))),
        file_input("case-duplicate-key", "cases/bad.yaml", case_file(case() + "  category: baggage\n")),
        file_input("case-duplicate-id", "cases/bad.yaml", case_file(case() + case())),
        file_input(
            "case-unknown-check",
            "cases/bad.yaml",
            case_file(case(task='{input: {text: "x"}, expected: "no", check: {kind: telepathy}}')),
        ),
        file_input("case-unknown-key", "cases/bad.yaml", case_file(case(colour="blue"))),
        file_input(
            "case-alias-bomb-fields",
            "cases/bad.yaml",
            case_file(
                "- &x\n"
                + "".join(f"  {line}\n" for line in BOMB.splitlines())
                + case(task='{input: {text: "x", fields: *x}, expected: "no", check: {kind: exact}}')
            ),
        ),
        file_input(
            "case-deep-nesting",
            "cases/bad.yaml",
            case_file(
                case(task='{input: {text: "x", fields: {a: ' + DEEP + '}}, expected: "no", check: {kind: exact}}')
            ),
        ),
        file_input("case-jsonl-broken", "cases/bad.jsonl", case_file('{"id": "a", "category": "x"\n', "bad.jsonl")),
        file_input(
            "case-jsonl-nul-escape",
            "cases/bad.jsonl",
            case_file(
                '{"id": "a\\u0000b", "category": "cancel", "source": {"kind": "t", "ref": "x"}, "created": '
                '"2026-12-01", "task": {"input": {"text": "x"}, "expected": "no", "check": {"kind": "exact"}}}\n',
                "bad.jsonl",
            ),
        ),
        file_input(
            "case-jsonl-nan",
            "cases/bad.jsonl",
            case_file(
                '{"id": "a", "category": "cancel", "source": {"kind": "t", "ref": "x"}, "created": "2026-12-01", '
                '"task": {"input": {"text": "x"}, "expected": NaN, "check": {"kind": "exact"}}}\n',
                "bad.jsonl",
            ),
        ),
        file_input(
            "case-expected-nan",
            "cases/bad.yaml",
            case_file(case(task='{input: {text: "x"}, expected: .nan, check: {kind: exact}}')),
        ),
        file_input("case-python-tag", "cases/bad.yaml", case_file(case(id="!!python/name:os.system"))),
        file_input(
            "case-symlink-outside",
            "cases/bad.yaml",
            symlink("cases/bad.yaml", "outside/cases.yaml", case()),
            line=False,
        ),
        file_input("case-not-a-list", "cases/bad.yaml", case_file("just a string\n")),
        file_input("case-empty-category", "cases/bad.yaml", case_file(case(category='""'))),
        file_input("case-id-path", "cases/bad.yaml", case_file(case(id="../../etc/passwd"))),
        # --- skills (committed: evolve reads them at the base) ----------------------------------
        file_input("skill-nul", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "hidden\x00text\n"), commit=True),
        file_input("skill-escape", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "\x1b]0;pwned\x07\n"), commit=True),
        file_input(
            "skill-bidi", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "Refund \u202eon 05 days\n"), commit=True
        ),
        file_input(
            "skill-zero-width", "skills/bad/SKILL.md", skill("bad", GOOD_BODY + "The fee is $7\u200b5.\n"), commit=True
        ),
        file_input(
            "skill-not-utf8",
            "skills/bad/SKILL.md",
            raw_skill("bad", b"---\nname: bad\ndescription: caf\xe9\n---\nbody\n"),
            commit=True,
        ),
        file_input(
            "skill-broken-front-matter",
            "skills/bad/SKILL.md",
            raw_skill("bad", "---\nname: bad\ndescription: [broken\n---\nbody\n"),
            commit=True,
        ),
        file_input("skill-no-front-matter", "skills/bad/SKILL.md", raw_skill("bad", "just a body\n"), commit=True),
        file_input(
            "skill-missing-name",
            "skills/bad/SKILL.md",
            raw_skill("bad", "---\ndescription: d\n---\nbody\n"),
            commit=True,
        ),
        file_input("skill-name-mismatch", "skills/bad/SKILL.md", skill("other", GOOD_BODY, folder="bad"), commit=True),
        file_input("skill-bad-name", "skills/Bad_Name/SKILL.md", skill("Bad_Name", GOOD_BODY), commit=True),
        file_input("skill-duplicate-name", "skills/", skill("book-flight", GOOD_BODY, folder="copy"), commit=True),
        file_input(
            "skill-angle-description",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY, description="use <b>bold</b>"),
            commit=True,
        ),
        file_input(
            "skill-unknown-key",
            "skills/bad/SKILL.md",
            raw_skill("bad", "---\nname: bad\ndescription: d\ncolour: blue\n---\nbody\n"),
            commit=True,
        ),
        file_input(
            "skill-metadata-not-string",
            "skills/bad/SKILL.md",
            raw_skill("bad", "---\nname: bad\ndescription: d\nmetadata:\n  k: [1, 2]\n---\nbody\n"),
            commit=True,
        ),
        file_input(
            "skill-alias-bomb",
            "skills/bad/SKILL.md",
            raw_skill(
                "bad",
                "---\nname: bad\ndescription: d\nmetadata:\n  " + BOMB.replace("\n", "\n  ").rstrip() + "\n---\nbody\n",
            ),
            commit=True,
        ),
        file_input(
            "skill-unclosed-protected",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + "<!-- frames:protected -->\nkeep\n"),
            commit=True,
        ),
        file_input(
            "skill-stray-close-marker",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + "<!-- /frames:protected -->\n"),
            commit=True,
        ),
        file_input(
            "skill-marker-no-spaces",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + "<!--frames:protected-->\nFee is $75.\n<!--/frames:protected-->\n"),
            commit=True,
        ),
        file_input(
            "skill-marker-upper-case",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + "<!-- FRAMES:PROTECTED -->\nFee is $75.\n<!-- /FRAMES:PROTECTED -->\n"),
            commit=True,
        ),
        file_input(
            "skill-marker-inline",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + "Fee is <!-- frames:protected -->$75<!-- /frames:protected --> per bag.\n"),
            commit=True,
        ),
        file_input(
            "skill-marker-extra-word",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + "<!-- frames:protected keep -->\nFee is $75.\n<!-- /frames:protected -->\n"),
            commit=True,
        ),
        file_input(
            "skill-folder-without-skill-md",
            "skills/draft",
            lambda r: write(r, "skills/draft/notes.md", "notes\n"),
            line=False,
            commit=True,
        ),
        file_input(
            "skill-symlinked-skill-md",
            "skills/bad/SKILL.md",
            symlink(
                "skills/bad/SKILL.md", "outside/SKILL.md", SKILL.format(name="bad", description="d", body=GOOD_BODY)
            ),
            line=False,
            commit=True,
        ),
        file_input(
            "skill-symlinked-folder",
            "skills/bad",
            symlink("skills/bad", "outside/bad-skill", None),
            line=False,
            commit=True,
        ),
        file_input(
            "skill-huge-body",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + "- A padding rule line that repeats for size.\n" * 250_000),
            line=False,
            commit=True,
        ),
        file_input(
            "skill-secret-github",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + f"Token: {SECRETS['github']}\n"),
            commit=True,
        ),
        file_input(
            "skill-secret-openai",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY + f"Key: {SECRETS['openai-project']}\n"),
            commit=True,
        ),
        file_input(
            "skill-long-description",
            "skills/bad/SKILL.md",
            skill("bad", GOOD_BODY, description="x" * 1100),
            commit=True,
        ),
        file_input(
            "skill-empty-description", "skills/bad/SKILL.md", skill("bad", GOOD_BODY, description='""'), commit=True
        ),
        file_input(
            "skill-nested-folder",
            "skills/outer",
            skill("inner", GOOD_BODY, folder="outer/inner"),
            line=False,
            commit=True,
        ),
        # --- policies (committed) -----------------------------------------------------------
        file_input("policy-nul", "policies/extra.md", policy("# Extra\n\nRule one.\nHidden\x00rule.\n"), commit=True),
        file_input("policy-escape", "policies/extra.md", policy("# Extra\n\nRule \x1b[2Jone.\n"), commit=True),
        file_input("policy-bidi", "policies/extra.md", policy("# Extra\n\nRefund \u202eon 05 days.\n"), commit=True),
        file_input(
            "policy-not-utf8",
            "policies/extra.md",
            policy("# Politique\n\nDélai de 5 jours.\n".encode("latin-1")),
            commit=True,
        ),
        file_input("policy-binary", "policies/scan.pdf", policy(b"%PDF-1.7\n\x00\x01binary", "scan.pdf"), commit=True),
        file_input("policy-empty", "policies/extra.md", policy(""), line=False, commit=True),
        file_input(
            "policy-huge",
            "policies/extra.md",
            policy("# Huge\n\n" + "A rule line that repeats.\n" * 40_000),
            line=False,
            commit=True,
        ),
        file_input(
            "policy-symlink-outside",
            "policies/extra.md",
            symlink("policies/extra.md", "outside/policy.md", "# Outside\n\nSecret rule.\n"),
            line=False,
            commit=True,
        ),
        file_input(
            "policy-secret", "policies/extra.md", policy(f"# Keys\n\nUse {SECRETS['google']} for maps.\n"), commit=True
        ),
        file_input(
            "policy-symlinked-folder",
            "policies",
            both(lambda r: shutil.rmtree(r / "policies"), symlink("policies", "outside/policies", None)),
            line=False,
            commit=True,
        ),
        # --- evolve arguments ---------------------------------------------------------------
        file_input(
            "resume-parent-path", "../x", lambda r: None, line=False, evolve_args=("--resume", "../x"), evolve_only=True
        ),
        file_input(
            "resume-absolute-path",
            "/tmp/x",
            lambda r: None,
            line=False,
            evolve_args=("--resume", "/tmp/x"),
            evolve_only=True,
        ),
        file_input(
            "resume-unknown-run",
            "20990101-000000-abcdef",
            lambda r: None,
            line=False,
            evolve_args=("--resume", "20990101-000000-abcdef"),
            evolve_only=True,
        ),
        file_input(
            "resume-dot-dot", "..", lambda r: None, line=False, evolve_args=("--resume", ".."), evolve_only=True
        ),
        file_input(
            "resume-symlinked-run",
            "20990101-000000-abcdef",
            symlink(".frames/runs/20990101-000000-abcdef", "outside/run", None),
            line=False,
            evolve_args=("--resume", "20990101-000000-abcdef"),
            evolve_only=True,
        ),
        file_input(
            "base-unknown",
            "no-such-rev",
            lambda r: None,
            line=False,
            evolve_args=("--base", "no-such-rev"),
            evolve_only=True,
        ),
        file_input(
            "base-option-injection",
            "--output=/tmp/x",
            lambda r: None,
            line=False,
            evolve_args=("--base", "--output=/tmp/x"),
            evolve_only=True,
        ),
        file_input(
            "frames-dir-symlink",
            ".frames",
            symlink(".frames", "outside/frames-state", None),
            line=False,
            evolve_only=True,
        ),
    ]
    return out
