"""Descriptions as a reviewer reads them, and what the catalog costs (issue 30).

For each policy folder this cold-starts the folder (verbatim) in a temporary workspace and prints:
skills made; mean and longest description (characters); descriptions that hold a word list or a
cut word (`coldstart.lint.defects`, always the current checker); names ending in a digit; the
catalog as the built-in executor shows it (`executor.catalog.Catalog.text`), in tokens as frames
counts them without a tokenizer (`tokens.approx_tokens`: characters / 4) and per listed skill, and
the skills of general rules the executor gives with every case instead of listing them (decision
0099), in tokens; and, with
`--per-case N`, the mean tokens per case (prompt + completion, the FRAMES cost) of `frames eval`
with the simulated executor over the set's first N one-line questions (bench/data/catalog_choice/;
the built-in executor sends the catalog on its first turn and again, as history, on its second).

Sets: `18f-travel` and `tau2-airline` (tuned on: bench/catalog_choice.py's sets) and the held-out
folders of bench/data/description_holdout/ (`tau-retail`, `tau2-telecom`, `18f-hr`), which the
description rules were not tuned on. `--compare REV` measures the code of git revision REV as well
(exported to a temporary folder and run in a subprocess), so before and after come from one command.

    python bench/descriptions.py [--set NAME ...] [--compare REV] [--per-case N] [--show] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
HOLDOUT = DATA / "description_holdout"
SETS = {
    "18f-travel": (DATA / "catalog_choice" / "18f-travel", DATA / "catalog_choice" / "18f-travel.jsonl"),
    "tau2-airline": (ROOT / "policies", DATA / "catalog_choice" / "tau2-airline.jsonl"),
    **{p.name: (p, None) for p in sorted(HOLDOUT.iterdir()) if p.is_dir()},
}
TUNED = ("18f-travel", "tau2-airline")

# What one run prints back as JSON (the `--dump` mode, run with the code being measured).
_CASE = """- id: q{n}
  category: bench
  source: {{kind: bench, ref: "questions#{n}"}}
  created: '2026-12-02'
  task:
    input: {{text: {text}}}
    expected: "-"
    check: {{kind: contains}}
"""


def dump(folder: Path, questions: Path | None, per_case: int) -> dict:
    """Cold-start `folder` with the frames_cli on the path; {"descriptions": {name: text},
    "catalog_tokens", "tokens_per_case" (None without questions or `per_case`)}."""
    from frames_cli.coldstart.run import run_coldstart
    from frames_cli.executor.catalog import Catalog
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.tokens import approx_tokens
    from frames_cli.workspace.create import init_workspace
    from frames_cli.workspace.layout import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        init_workspace(root)
        for path in sorted(folder.glob("*.md")):
            shutil.copy(path, root / "policies" / path.name)
        ws = Workspace.open(root)
        run_coldstart(ws, ws.config(), commit=False)
        skills = SkillSet.from_dir(ws.skills_dir)
        catalog = Catalog.of(skills)
        # Before decision 0099 every skill was listed and none given (a revision of --compare).
        listed = getattr(catalog, "listed", catalog.ids)
        given = approx_tokens(catalog.given_text()) if hasattr(catalog, "given_text") else 0
        out = {"descriptions": {n: s.description for n, s in skills.items()},
               "catalog_tokens": approx_tokens(catalog.text()), "catalog_lines": len(listed), "given_tokens": given,
               "tokens_per_case": None}
        if questions and per_case:
            texts = [json.loads(line)["question"] for line in questions.read_text().splitlines()
                     if line.strip()][:per_case]
            (root / "cases" / "bench.yaml").write_text("".join(_CASE.format(n=i, text=json.dumps(t))
                                                               for i, t in enumerate(texts, 1)))
            config = (root / "frames.yaml").read_text()
            if "  executor: null" not in config:
                raise SystemExit("frames init's frames.yaml no longer has `  executor: null` to point at "
                                 "frames-sim/executor")
            (root / "frames.yaml").write_text(config.replace("  executor: null", "  executor: frames-sim/executor", 1))
            subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
            subprocess.run(
                ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "bench"],
                cwd=root,
                check=True,
                capture_output=True,
            )
            done = subprocess.run([sys.executable, "-m", "frames_cli", "eval", "--json"], cwd=root, capture_output=True,
                                  text=True, env=os.environ.copy())
            if done.returncode != 0:
                raise SystemExit(f"frames eval failed ({done.returncode}): {done.stderr[-2000:]}")
            out["tokens_per_case"] = json.loads(done.stdout)["mean_tokens"]
        return out


def measure(name: str, per_case: int, code: Path | None) -> dict:
    """One set measured with the code at `code` (None: this checkout), in a subprocess so that
    another revision's frames_cli is the one imported; the figures the table prints."""
    from frames_cli.coldstart.lint import defects

    folder, questions = SETS[name]
    env = os.environ.copy()
    env["PYTHONPATH"] = str(code or ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    args = [sys.executable, str(Path(__file__).resolve()), "--dump", str(folder), "--per-case", str(per_case)]
    args += ["--questions", str(questions)] if questions else []
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=code or ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{name}: {done.stderr[-2000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    texts = found["descriptions"]
    lengths = [len(t) for t in texts.values()]
    flagged = {n: defects(t) for n, t in texts.items() if defects(t)}
    return {
        "set": name,
        "held_out": name not in TUNED,
        "skills": len(texts),
        "mean_chars": round(sum(lengths) / len(lengths), 1),
        "max_chars": max(lengths),
        "word_list": sum("word list" in d for d in flagged.values()),
        "cut_word": sum("cut word" in d for d in flagged.values()),
        "numbered_names": sorted(n for n in texts if n[-1].isdigit()),
        "catalog_tokens": found["catalog_tokens"],
        "tokens_per_skill": round(found["catalog_tokens"] / max(1, found["catalog_lines"]), 1),
        "given_tokens": found["given_tokens"],
        "tokens_per_case": found["tokens_per_case"],
        "descriptions": texts,
        "flagged": flagged,
    }


def _export(rev: str, into: Path) -> Path:
    """The files of git revision `rev` of this repository under `into`."""
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", choices=sorted(SETS), help="policy folder (default: all)")
    parser.add_argument("--compare", metavar="REV",
                        help="also measure the code of this git revision (e.g. the commit before a change)")
    parser.add_argument("--per-case", type=int, default=0, metavar="N",
                        help="tokens per case of `frames eval` (simulated executor) over the first N questions (18F, "
                             "airline)")
    parser.add_argument("--show", action="store_true", help="print every description, and the checker's findings")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--questions", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        print(json.dumps(dump(args.dump, args.questions, args.per_case)))
        return
    names = args.set or list(SETS)
    with tempfile.TemporaryDirectory() as tmp:
        codes = [("now", None)] + ([(args.compare, _export(args.compare, Path(tmp) / "rev"))] if args.compare else [])
        rows = [{**measure(n, args.per_case, code), "code": label} for n in names for label, code in codes]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'set':<14} {'code':<10} {'skills':>6} {'mean chars':>10} {'max':>4} {'word list':>9} {'cut word':>8} "
          f"{'n-names':>7} {'catalog tok':>11} {'per skill':>9} {'given tok':>9} {'per case':>8}")
    for r in rows:
        case = f"{r['tokens_per_case']:>8.0f}" if r["tokens_per_case"] else f"{'-':>8}"
        label = r["set"] + (" *" if r["held_out"] else "")
        print(f"{label:<14} {r['code'][:10]:<10} {r['skills']:>6} {r['mean_chars']:>10} {r['max_chars']:>4} "
              f"{r['word_list']:>9} {r['cut_word']:>8} {len(r['numbered_names']):>7} {r['catalog_tokens']:>11,} "
              f"{r['tokens_per_skill']:>9} {r['given_tokens']:>9,} {case}")
        if args.show:
            for n, text in r["descriptions"].items():
                mark = f"  [{', '.join(r['flagged'][n])}]" if n in r["flagged"] else ""
                print(f"    {n}: {text}{mark}")
    print("* held out: the description rules were not tuned on it. Tokens: characters / 4 "
          "(frames.tokens.approx_tokens); per case: mean prompt + completion tokens of `frames eval` with "
          "frames-sim/executor on one-line questions.")


if __name__ == "__main__":
    main()
