"""Catalog choice: does the catalog lead an agent to the skill that answers a question?

For each question set in bench/data/catalog_choice/ (questions in a user's words, each labelled
with the policy file and line that answers it), this cold-starts the set's policies into a
temporary workspace, renders the catalog exactly as the built-in executor shows it
(`executor.catalog.Catalog.text`), and ranks the skills two ways:

- BM25 (rank-bm25's Okapi, k1 = 1.5, b = 0.75) over the catalog lines (`id: name — description`),
  the question as the query, both tokenised by `ingest.text.tokens`;
- the simulated executor (`frames-sim/executor`): the real first-turn prompt (`executor_catalog`)
  with the question as the request, and the ids it asks to load, in its order.

The answer is the skill whose back-links cover the labelled line. Top-1 is the share of questions
whose answer ranks first, top-3 within the first three (the simulated executor loads three).
With `--model frames-sim/coldstart` the skills are made by that model (the coldstart rewrite with
the model's descriptions) instead of verbatim.

    python bench/catalog_choice.py [--set NAME ...] [--model MODEL] [--misses]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "catalog_choice"
#: Question set → the folder whose Markdown files are its policies.
SETS = {"18f-travel": DATA / "18f-travel", "tau2-airline": ROOT / "policies"}
TOP = 3


@dataclass
class Question:
    """One labelled question: `text` in a user's words, answered by `file` at `line` (1-based)."""

    text: str
    file: str
    line: int


def load_questions(name: str) -> list[Question]:
    """The questions of set `name` (bench/data/catalog_choice/<name>.jsonl)."""
    rows = [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    return [Question(r["question"], f"policies/{r['file']}", int(r["line"])) for r in rows]


def make_skills(name: str, model: str | None, work: Path):
    """Cold-start set `name`'s policies in a fresh workspace under `work`; returns its SkillSet."""
    from frames_cli.coldstart.run import run_coldstart
    from frames_cli.formats.skill import SkillSet
    from frames_cli.workspace.config import load_config
    from frames_cli.workspace.create import init_workspace
    from frames_cli.workspace.layout import Workspace

    root = work / name
    init_workspace(root)
    for path in sorted(SETS[name].glob("*.md")):
        shutil.copy(path, root / "policies" / path.name)
    if model:
        text = (root / "frames.yaml").read_text().replace("  coldstart: null", f"  coldstart: {model}")
        (root / "frames.yaml").write_text(text)
    ws = Workspace.open(root)
    config = load_config(root)
    if model:
        from frames_cli.coldstart.rewrite import ModelRewriter
        from frames_cli.llm.client import ModelClient

        with ModelClient(ws, config, run_dir=ws.state_dir / "bench") as client:
            run_coldstart(ws, config, rewriter=ModelRewriter(client, config), commit=False)
    else:
        run_coldstart(ws, config, commit=False)
    return SkillSet.from_dir(ws.skills_dir)


def answer_of(skills, question: Question) -> str:
    """The name of the one skill whose back-links cover the question's line.

    Raises:
        SystemExit: no skill or several cover it (a label that does not point into one skill).
    """
    found = [s.name for s in skills.values() if any(b.file == question.file and b.start <= question.line <= b.end for b in s.backlinks)]
    if len(found) != 1:
        raise SystemExit(f"{question.file}:{question.line}: covered by {found or 'no skill'} ({question.text})")
    return found[0]


def bm25_ranking(catalog, question: str) -> list[str]:
    """Skill names by BM25 score of their catalog line for `question`, best first (ties: catalog order)."""
    from rank_bm25 import BM25Okapi

    from frames_cli.ingest.text import tokens

    lines = catalog.text().split("\n")[1:]
    names = list(catalog.ids.values())
    scores = BM25Okapi([tokens(line) for line in lines]).get_scores(tokens(question))
    order = sorted(range(len(names)), key=lambda i: -scores[i])
    return [names[i] for i in order]


def sim_ranking(catalog, question: str) -> list[str]:
    """The skills the simulated executor asks to load for `question` (at most 3), in its order."""
    from frames_cli.formats.case import Case, Check, Source, Task
    from frames_cli.llm.prompts import render
    from frames_cli.sim import executor
    from frames_cli.sim.base import SimCall
    from frames_cli.sim.world import SimWorld
    from frames_cli.workspace.config import SimulatorConfig

    case = Case("q", "bench", Source("bench"), "2026-12-01", Task({"text": question}, None, Check("exact", {})))
    prompt = render("executor_catalog", case_id="q", catalog=catalog.text(), request=question, answer_format="JSON", max_loads=TOP)
    reply = executor.behave(SimCall("executor", prompt, 0, SimulatorConfig(), SimWorld.from_cases([case])))
    return catalog.names(reply.get("load") or [])


def run_set(name: str, model: str | None, misses: bool, work: Path) -> dict:
    """Measure one set: {"set", "skills", "questions", "bm25": {"top1", "top3"}, "sim": {...}}."""
    from frames_cli.executor.catalog import Catalog

    skills = make_skills(name, model, work)
    catalog = Catalog.of(skills)
    questions = load_questions(name)
    hits = {"bm25": [0, 0], "sim": [0, 0]}
    for q in questions:
        want = answer_of(skills, q)
        for method, ranking in (("bm25", bm25_ranking(catalog, q.text)), ("sim", sim_ranking(catalog, q.text))):
            top1, top3 = ranking[:1] == [want], want in ranking[:TOP]
            hits[method][0] += top1
            hits[method][1] += top3
            if misses and not top1:
                print(f"  {name} {method} miss: {q.text!r}\n    want {want}, got {ranking[:TOP]}", file=sys.stderr)
    n = len(questions)
    return {
        "set": name,
        "skills": len(skills),
        "questions": n,
        **{m: {"top1": round(h[0] / n, 3), "top3": round(h[1] / n, 3)} for m, h in hits.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", choices=sorted(SETS), help="question set (default: all)")
    parser.add_argument("--model", help="make the skills with this coldstart model (e.g. frames-sim/coldstart); default verbatim")
    parser.add_argument("--misses", action="store_true", help="print every question whose answer is not ranked first")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_set(name, args.model, args.misses, Path(tmp)) for name in args.set or sorted(SETS)]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"skills made {'by ' + args.model if args.model else 'verbatim'}")
    print(f"{'set':<14} {'skills':>6} {'questions':>9}   {'BM25 top-1':>10} {'top-3':>6}   {'sim top-1':>9} {'top-3':>6}")
    for r in results:
        print(f"{r['set']:<14} {r['skills']:>6} {r['questions']:>9}   {r['bm25']['top1']:>10.1%} {r['bm25']['top3']:>6.1%}   {r['sim']['top1']:>9.1%} {r['sim']['top3']:>6.1%}")


if __name__ == "__main__":
    main()
