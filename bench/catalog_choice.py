"""Catalog choice: does the catalog lead an agent to the skill that answers a question?

For each question set in bench/data/catalog_choice/ (questions in a user's words, each labelled
with the policy file and line that answers it), this cold-starts the set's policies into a
temporary workspace, renders the catalog exactly as the built-in executor shows it
(`executor.catalog.Catalog.text`), and ranks the skills these ways:

- BM25 (k1 = 1.5, b = 0.75, rank-bm25's Okapi with Lucene's idf, ln(1 + (N − n + 0.5)/(n + 0.5)),
  see `LuceneBM25`) over the catalog lines (`id: name — description`), the question as the query,
  both tokenised by `words.tokens`; `--idf okapi` ranks with rank-bm25's own idf instead;
- the simulated executor (`frames-sim/executor`): the real first-turn prompt (`executor_catalog`)
  with the question as the request, and the ids it asks to load, in its order;
- with `--executor spool/executor`, a model's choice: the same first-turn prompt sent through
  the spool provider, answered from the set's recording (below);
- for reference, not a target: BM25 over the skills' bodies (what an agent would read after
  loading them), which tells how far the catalog lines are from the sections' own text.

The answer is the skill whose back-links cover the labelled line. Top-1 is the share of questions
whose answer ranks first, top-3 within the first three (the simulated executor loads three).
Skills of general rules (tagged `general-rules`) are not in the listing: the executor gives them
with every case (decision 0099), so every ranking is over the listed skills, and a question whose
answer is a given skill is counted apart (`given`), not ranked: the agent reads that answer
whatever it loads.
With `--model frames-sim/coldstart` the skills are made by that model (the coldstart rewrite with
the model's descriptions) instead of verbatim. With `--model spool/coldstart` (and `--executor
spool/executor`) the requests go to the spool provider, answered from a recording:
`<set>.spool-answers.jsonl.xz` beside the questions holds, per request, its spool id, messages and
the answer a model gave (`spool_replay`; `--record` adds a run answered live, with `--work` and a
`--wait` long enough to answer). A request the recording lacks (its prompt changed since) waits
`--wait` seconds: a section then stays verbatim (the output says how many the model rewrote), a
question is left out of the model's column (`of` says over how many it is).

Each set is split in two halves by the sha256 of the question text (`half_of`): `tune` is the
half a change to coldstart may be judged on while it is being made, `held-out` the half it must
not look at; both are reported, so a gain that holds only on `tune` shows. `--half` restricts the
run (and `--misses`) to one half.

    python bench/catalog_choice.py [--set NAME ...] [--model MODEL] [--executor spool/executor] [--half tune|held-out]
                                   [--idf lucene|okapi] [--misses] [--json] [--work DIR --wait SECONDS --record]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spool_replay

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "catalog_choice"
#: Question set → the folder whose Markdown files are its policies.
SETS = {"18f-travel": DATA / "18f-travel", "tau2-airline": ROOT / "policies"}
TOP = 3
HALVES = ("tune", "held-out")


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


def half_of(questions: list[Question]) -> dict[str, str]:
    """Question text → "tune" or "held-out": questions sorted by sha256 of their text, the first
    ceil(n/2) distinct texts are `tune`. Fixed by the text alone, so adding a question moves no other
    one from its half by more than one place, and a repeated text is always in one half."""
    texts = sorted(dict.fromkeys(q.text for q in questions),
                   key=lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest())
    cut = math.ceil(len(texts) / 2)
    return {t: HALVES[0] if i < cut else HALVES[1] for i, t in enumerate(texts)}


def answers_file(name: str) -> Path:
    """The recorded spool answers of set `name` (`spool_replay`), coldstart rewrites and executor
    first turns alike. Compressed with xz because every executor request repeats the whole
    catalog (18F: 244 requests, 10.5 MB as text, 78 KB in xz; gzip's 32 KB window cannot span
    two 35-47 KB catalogs: 3.1 MB)."""
    return DATA / f"{name}.spool-answers.jsonl.xz"


@dataclass
class Bench:
    """One set's workspace under `work`: its policies, the models of the roles measured (`model`
    for coldstart, `executor` for the first turn), and a model client when a role has one. With a
    `spool/...` model the set's recording is replayed first, and a request waits at most `wait`
    seconds for an answer (long enough for a loaded machine to see a recorded one; a person
    answering live needs much more). Use as a context manager; on leaving, `record` adds the
    answered spool requests to the recording."""

    name: str
    work: Path
    model: str | None = None
    executor: str | None = None
    wait: float = 5.0
    record: bool = False

    def __enter__(self) -> Bench:
        from frames_cli.workspace.config import with_overrides
        from frames_cli.workspace.config_file import load_config
        from frames_cli.workspace.create import init_workspace
        from frames_cli.workspace.layout import Workspace

        root = self.work / self.name
        init_workspace(root)
        for path in sorted(SETS[self.name].glob("*.md")):
            shutil.copy(path, root / "policies" / path.name)
        self.ws = Workspace.open(root)
        self.config = with_overrides(load_config(root), "models", coldstart=self.model, executor=self.executor)
        self.spool = root / self.config.spool.dir
        self.recorded: dict[str, dict] = {}
        self.client = None
        if any((m or "").startswith("spool/") for m in (self.model, self.executor)):
            self.recorded = spool_replay.replay(answers_file(self.name), self.spool)
            # Every request is out at once, so whoever answers sees them all.
            self.config = with_overrides(self.config, "llm", concurrency=256)
            self.config = with_overrides(self.config, "spool", timeout_s=self.wait, poll_s=min(0.05, self.wait / 4))
        if self.model or self.executor:
            from frames_cli.llm.client.client import ModelClient

            self.client = ModelClient(self.ws, self.config, run_dir=self.ws.state_dir / "bench").__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.client:
            self.client.__exit__(*exc)
        if self.record and self.spool.exists():
            print(
                f"{self.name}: {spool_replay.record(answers_file(self.name), self.spool)} answers recorded in "
                f"{answers_file(self.name)}",
                file=sys.stderr,
            )

    def skills(self):
        """Cold-start the policies (verbatim, or rewritten by `model`); returns (SkillSet, rewrite
        failures as (skill, reason) pairs)."""
        from frames_cli.coldstart.run import run_coldstart
        from frames_cli.formats.skill_set import SkillSet

        if not self.model:
            run_coldstart(self.ws, self.config, commit=False)
            return SkillSet.from_dir(self.ws.skills_dir), []
        from frames_cli.coldstart.rewrite import ModelRewriter

        result = run_coldstart(self.ws, self.config, rewriter=ModelRewriter(self.client, self.config), commit=False)
        return SkillSet.from_dir(self.ws.skills_dir), result.rewrite_failures

    def model_rankings(self, catalog, questions: list[str]) -> dict[str, list[str] | None]:
        """Question → the skills the `executor` model asks to load (at most TOP), in its order,
        from the first turn exactly as the built-in executor sends it (`first_turn`); [] when it
        loads nothing, None when the recording holds no answer for it.

        Raises:
            SystemExit: a recorded answer was not taken within `wait` seconds (a busy machine):
                the figures would count a recorded question as unanswered.
        """
        from frames_cli.llm.messages.schemas import EXECUTOR_STEP
        from frames_cli.llm.transport.spool import spool_id
        from frames_cli.llm.messages.types import ChatRequest

        requests = [ChatRequest("executor", [{"role": "user", "content": first_turn(catalog, q)}], EXECUTOR_STEP,
                                tag="q") for q in questions]
        replies = self.client.chat_many(requests)
        name = (self.executor or "").removeprefix("spool/")
        late = [q for q, rq, r in zip(questions, requests, replies) if not r.ok
                and spool_id(name, rq.messages, 0) in self.recorded]
        if late:
            raise SystemExit(f"{self.name}: {len(late)} recorded answer(s) not taken within {self.wait} s (first: "
                             f"{late[0]!r}); run again with a longer --wait")
        for reason in sorted({r.error for r in replies if not r.ok}):
            print(
                f"  {self.name}: {sum(r.error == reason for r in replies)} executor call(s) without an answer: "
                f"{reason[:200]}",
                file=sys.stderr,
            )
        return {q: catalog.names((r.data or {}).get("load") or [])[:TOP] if r.ok else None
                for q, r in zip(questions, replies)}


def answer_of(skills, question: Question) -> str:
    """The name of the one skill whose back-links cover the question's line.

    Raises:
        SystemExit: no skill or several cover it (a label that does not point into one skill).
    """
    found = [s.name for s in skills.values()
             if any(b.file == question.file and b.start <= question.line <= b.end for b in s.backlinks)]
    if len(found) != 1:
        raise SystemExit(f"{question.file}:{question.line}: covered by {found or 'no skill'} ({question.text})")
    return found[0]


#: Which idf the BM25 ranking uses: "lucene" (default) or "okapi" (rank-bm25's own); set by --idf.
IDF = {"variant": "lucene"}


def _bm25(corpus: list[list[str]]):
    """A BM25 index over `corpus` (token lists) with the idf chosen by `IDF`.

    rank-bm25's BM25Okapi takes idf = ln((N − n + 0.5)/(n + 0.5)) and replaces a negative value
    by 0.25 × the mean idf. On a 6-line catalog that is not monotone: a word on 3 of 6 lines gets
    idf 0, less than a word on 5 of 6 lines (the floor), so "change" or "flight" weighed less than
    "one". Lucene (and so Elasticsearch and OpenSearch) uses ln(1 + (N − n + 0.5)/(n + 0.5)),
    positive and falling with n (Lucene's BM25Similarity; Robertson & Zaragoza 2009, §3.2 on the
    negative-idf problem); a careful evaluator ranks with that.
    """
    from rank_bm25 import BM25Okapi

    if IDF["variant"] == "okapi":
        return BM25Okapi(corpus)

    class LuceneBM25(BM25Okapi):
        def _calc_idf(self, nd: dict) -> None:
            for word, n in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - n + 0.5) / (n + 0.5))

    return LuceneBM25(corpus)


def bm25_ranking(catalog, question: str) -> list[str]:
    """Skill names by BM25 score of their catalog line for `question`, best first (ties: catalog order)."""
    from frames_cli.words import tokens

    lines = catalog.text().split("\n")[1:]
    names = list(catalog.listed.values())
    scores = _bm25([tokens(line) for line in lines]).get_scores(tokens(question))
    order = sorted(range(len(names)), key=lambda i: -scores[i])
    return [names[i] for i in order]


def body_ranking(skills, question: str) -> list[str]:
    """Skill names by BM25 score of their bodies for `question`, best first (ties: name order)."""
    from frames_cli.words import tokens

    names = sorted(skills)
    scores = _bm25([tokens(skills[n].body) for n in names]).get_scores(tokens(question))
    return [names[i] for i in sorted(range(len(names)), key=lambda i: -scores[i])]


def first_turn(catalog, question: str) -> str:
    """The built-in executor's first message for a case whose request is `question` (case id "q")."""
    from frames_cli.executor.builtin import first_turn as executor_first_turn

    return executor_first_turn(catalog, "q", question, "JSON", TOP)


def sim_ranking(catalog, question: str) -> list[str]:
    """The skills the simulated executor asks to load for `question` (at most 3), in its order."""
    from frames_cli.formats.case import Case, Check, Source, Task
    from frames_cli.sim import executor
    from frames_cli.sim.base import SimCall
    from frames_cli.sim.world import SimWorld
    from frames_cli.workspace.config import SimulatorConfig

    case = Case("q", "bench", Source("bench"), "2026-12-01", Task({"text": question}, None, Check("exact", {})))
    reply = executor.behave(SimCall("executor", first_turn(catalog, question), 0, SimulatorConfig(),
                                    SimWorld.from_cases([case])))
    return catalog.names(reply.get("load") or [])


def run_set(name: str, model: str | None, misses: bool, work: Path, half: str | None = None, wait: float = 5.0,
            record: bool = False, executor: str | None = None) -> dict:
    """Measure one set: {"set", "skills", "catalog_tokens" (`tokens.approx_tokens` of the catalog
    text), "rewritten", "questions", "bm25": {"top1", "top3"},
    "sim": {...}, "bodies": {...}, ["model": {...},] "halves": {"tune"|"held-out": {"questions",
    "bm25", ...}}}; with `half`, that half only. `rewritten` is the number of skills the model
    rewrote (None when verbatim); "model" is the `executor` model's choice, when one is named."""
    from frames_cli.executor.catalog import Catalog

    with Bench(name, work, model, executor, wait, record) as bench:
        skills, failures = bench.skills()
        for skill, why in failures:
            print(f"  {name}: {skill} kept verbatim: {why[:200]}", file=sys.stderr)
        catalog = Catalog.of(skills)
        listed = {n: skills[n] for n in catalog.listed.values()}
        given = {catalog.ids[sid] for sid in catalog.given}
        questions = load_questions(name)
        halves = half_of(questions)
        if half:
            questions = [q for q in questions if halves[q.text] == half]
        chosen = bench.model_rankings(catalog, list(dict.fromkeys(q.text for q in questions))) if executor else {}
    methods = ("bm25", "sim", "bodies", *(("model",) if executor else ()))
    groups = ("all", *HALVES)
    # [top-1 hits, top-3 hits, questions ranked]: the model ranks only the questions it answered.
    hits = {g: {m: [0, 0, 0] for m in methods} for g in groups}
    count = dict.fromkeys(groups, 0)
    # Questions answered by a skill given with every case: the agent reads it whatever it loads.
    answered_by_given = dict.fromkeys(groups, 0)
    for q in questions:
        want = answer_of(skills, q)
        count["all"] += 1
        count[halves[q.text]] += 1
        if want in given:
            answered_by_given["all"] += 1
            answered_by_given[halves[q.text]] += 1
            continue
        rankings = {"bm25": bm25_ranking(catalog, q.text), "sim": sim_ranking(catalog, q.text),
                    "bodies": body_ranking(listed, q.text)}
        if executor and chosen[q.text] is not None:
            rankings["model"] = chosen[q.text]
        for method, ranking in rankings.items():
            top1, top3 = ranking[:1] == [want], want in ranking[:TOP]
            for g in ("all", halves[q.text]):
                hits[g][method][0] += top1
                hits[g][method][1] += top3
                hits[g][method][2] += 1
            if misses and not top1 and method != "bodies":
                print(f"  {name} [{halves[q.text]}] {method} miss: {q.text!r}\n    want {want}, got {ranking[:TOP]}",
                      file=sys.stderr)

    def rates(g: str) -> dict:
        return {m: {"top1": round(h[0] / max(1, h[2]), 3), "top3": round(h[1] / max(1, h[2]), 3), "ranked": h[2]}
                for m, h in hits[g].items()}

    from frames_cli.tokens import approx_tokens

    return {
        "set": name,
        "skills": len(skills),
        "listed": len(listed),
        "catalog_tokens": approx_tokens(catalog.text()),
        "given_tokens": approx_tokens(catalog.given_text()),
        "rewritten": len(skills) - len(failures) if model else None,
        "questions": count["all"],
        "given": answered_by_given["all"],
        **rates("all"),
        "halves": {g: {"questions": count[g], "given": answered_by_given[g], **rates(g)} for g in HALVES if count[g]},
    }


def print_table(results: list[dict], args: argparse.Namespace) -> None:
    """The figures of every set as text: catalog sizes, the model's rewrites, the rankings' rates."""
    print(f"skills made {'by ' + args.model if args.model else 'verbatim'}")
    for r in results:
        print(f"{r['set']}: catalog of {r['listed']} skills, {r['catalog_tokens']:,} tokens "
              f"({r['catalog_tokens'] / max(1, r['listed']):.1f} per skill; characters / 4)")
        if r["listed"] < r["skills"]:
            print(f"{r['set']}: {r['skills'] - r['listed']} skill(s) of general rules given with every case, "
                  f"{r['given_tokens']:,} tokens; {r['given']} question(s) answered by them are not ranked")
    for r in results:
        if r["rewritten"] is not None:
            left = r["skills"] - r["rewritten"]
            print(
                f"{r['set']}: the model rewrote {r['rewritten']} of {r['skills']} skills"
                + (f"; {left} kept verbatim" if left else "")
            )
    extra = f"   {'model top-1':>11} {'top-3':>6} {'of':>4}" if args.executor else ""
    print(f"{'set':<14} {'half':<8} {'skills':>6} {'ranked':>9}   {'BM25 top-1':>10} {'top-3':>6}   "
          f"{'sim top-1':>9} {'top-3':>6}   {'bodies top-1':>12} {'top-3':>6}{extra}")
    for r in results:
        rows = [("all", r)] if args.half else [("all", r),
                                               *((h, {**v, "skills": r["skills"]}) for h, v in r["halves"].items())]
        for label, row in rows:
            m = row.get("model", {})
            model = ""
            if args.executor:
                model = (f"   {m['top1']:>11.1%} {m['top3']:>6.1%} {m['ranked']:>4}" if m.get("ranked")
                         else f"   {'-':>11} {'-':>6} {0:>4}")
            print(
                f"{r['set']:<14} {(args.half or label):<8} {row['skills']:>6} {row['questions'] - row['given']:>9}   "
                f"{row['bm25']['top1']:>10.1%} {row['bm25']['top3']:>6.1%}   {row['sim']['top1']:>9.1%} "
                f"{row['sim']['top3']:>6.1%}   {row['bodies']['top1']:>12.1%} {row['bodies']['top3']:>6.1%}{model}"
            )
    if args.executor:
        print(f"model: the skills {args.executor} asked to load on the executor's first turn, over the `of` questions "
              f"it answered (the recording holds no answer for the others)")



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", choices=sorted(SETS), help="question set (default: all)")
    parser.add_argument("--model",
                        help="make the skills with this coldstart model (e.g. frames-sim/coldstart); default verbatim")
    parser.add_argument("--half", choices=HALVES,
                        help="only this half of each set's questions (default: both, reported apart)")
    parser.add_argument("--misses", action="store_true", help="print every question whose answer is not ranked first")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--idf", choices=("lucene", "okapi"), default="lucene",
                        help="BM25's idf: Lucene's (default) or rank-bm25 Okapi's floored one")
    parser.add_argument("--work", type=Path,
                        help="build the workspaces in this (new) folder and keep them, e.g. to answer a spool live "
                             "(default: a temporary folder)")
    parser.add_argument("--wait", type=float, default=5.0,
                        help="spool models: seconds a request waits for its answer (default 5: replay only)")
    parser.add_argument("--record", action="store_true",
                        help="spool models: write the answered requests to the set's recording")
    parser.add_argument("--executor",
                        help="also rank by this model's choice from the executor's first turn (e.g. spool/executor: "
                             "the recorded answers)")
    args = parser.parse_args()
    if args.executor and not args.executor.startswith("spool/"):
        # The simulated executor needs its world (the case) built by `sim_ranking`: that is the sim column.
        parser.error("--executor takes a spool/ model (the recorded answers); the simulated executor is the sim column")
    IDF["variant"] = args.idf
    if args.work:
        if args.work.exists():
            parser.error(f"--work {args.work}: exists; name a new folder (its workspaces are built from scratch)")
        args.work.mkdir(parents=True)
    with contextlib.nullcontext(args.work) if args.work else tempfile.TemporaryDirectory() as work:
        results = [run_set(name, args.model, args.misses, Path(work), args.half, args.wait, args.record, args.executor)
                   for name in args.set or sorted(SETS)]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print_table(results, args)

if __name__ == "__main__":
    main()
