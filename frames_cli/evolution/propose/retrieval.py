"""Retrieval for diagnosis context (DESIGN §9): BM25 over policy passages and past accepted skill changes.

Two kinds of passage share one index, so their scores for a query are comparable:

- **policy**: each document under `policies/` at the run's base commit, cut along its headings into
  paragraphs (blank lines end a paragraph, never inside fenced code; at most `MAX_PASSAGE_LINES`
  lines each), cited as `policies/<file>:<first line>-<last line>` (1-based, inclusive);
- **change**: the non-merge commits in the parent candidate's history that changed `skills/`, newest
  first: the changes a person merged into the base branch, and the children of this run that passed
  the gate on the way to the parent. Root commits (the first import of skills) and `frames
  coldstart` commits (trailer `Frames-Command: coldstart`: they copy policy text, which is indexed
  already) are not changes and are left out. Cited as `commit <12 hex>`, except this run's own
  children, cited as `candidate <id>`: their shas hold the run's start time and id, so citing them
  would make two runs on the same inputs send different prompts (and the simulator, which draws
  from the prompt, answer differently).

Skills are not indexed: every diagnoser already sees the whole parent skill set.

Scoring (Okapi BM25 of rank-bm25, k1 = 1.5, b = 0.75). Each failure of a batch is one query. BM25
scores are sums of term weights over the query, so they grow with the query's length and the
corpus's IDF scale and are comparable only within one query (Robertson & Zaragoza 2009, "The
Probabilistic Relevance Framework: BM25 and Beyond"). A passage p is kept for failure q when

    s(p, q) ≥ min_score · max_p' s(p', q)        (max normalisation: BM25's theoretical minimum is 0,
                                                  so this is min-max normalisation, Bruch et al. 2023,
                                                  "An Analysis of Fusion Functions for Hybrid Retrieval")
    |terms(q) ∩ terms(p)| ≥ min_shared_terms     (an absolute floor: a query unrelated to every passage
                                                  still has a best passage; sharing one or two words is chance)

and s(p, q) > 0. The batch's ranking fuses its failures' normalised scores n = s / max s by
CombMAX, ties broken by CombSUM (both Fox & Shaw 1994, "Combination of Multiple Searches",
TREC-2): each failure's own best passages come first (n = 1), and among equals the one kept for
more failures; then the higher raw score, then index order. CombSUM alone was tried and rejected:
passages that match what every failure mentions ("the user must provide their user id") headed 7
of the bundled example's first 9 batches, over the passages that decide single
failures. The top `top_k` are returned; none when nothing clears the floor.

Terms are `words.tokens`: lower-cased words without stop words, crudely stemmed, so
"refunds" meets "refund". Everything here is deterministic and pure (no I/O, no model call) except
`change_passages`, which runs `git log`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frames_cli.words import tokens

if TYPE_CHECKING:
    from frames_cli.formats.policy import PolicyDocument, Section
    from frames_cli.gitstore.store import GitStore
    from frames_cli.workspace.config import RetrievalConfig

#: Longest policy passage in lines; a longer paragraph (a long list) is cut into pieces of this size.
MAX_PASSAGE_LINES = 20
#: Characters of a change's message body shown and indexed, cut at a line end (frames' own messages
#: quote every proposal and end with pass rates; the first lines say what changed and why).
MAX_CHANGE_CHARS = 1200
#: Trailer that marks coldstart commits (they copy policy text into skills: not a change), and its
#: values that are no change either: `frames adopt` reformats a library a team brought along.
COLDSTART_TRAILER = ("Frames-Command", "coldstart")
IMPORT_COMMANDS = (COLDSTART_TRAILER[1], "adopt")


@dataclass(frozen=True)
class Passage:
    """One retrievable piece of text.

    Attributes:
        cite: how a reader finds it: `policies/x.md:12-30` (1-based inclusive lines of the file at
            the base commit) or `commit <12 hex>`.
        kind: "policy", "change" or "failed" (a change an earlier run saw fail: evolution/propose/lessons.py).
        title: the heading path (" > "-joined) of a policy passage, the summary line of a change.
        text: the text shown to the diagnoser below its title (a change: its message body, at most
            MAX_CHANGE_CHARS characters); indexed with `title` and, for a change, the skill names.
        skills: for a change, the skill names it touched; empty for policy.
    """

    cite: str
    kind: str
    title: str
    text: str
    skills: tuple[str, ...] = ()

    def index_text(self) -> str:
        """The text the index holds for this passage."""
        return "\n".join([self.title, self.text, *(s.replace("-", " ") for s in self.skills)])


@dataclass(frozen=True)
class Hit:
    """A passage retrieved for a batch.

    Attributes:
        passage: the passage.
        score: CombMAX over the batch's failures of s / max s (0..1; 1 = the best passage for at
            least one failure).
        combsum: CombSUM of the same (the tie-break; at most the number of failures).
        bm25: the highest raw BM25 score it had for any of them (unnormalised, for audit only).
        case_ids: the failures it was kept for, in batch order.
    """

    passage: Passage
    score: float
    combsum: float
    bm25: float
    case_ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """What the round records: {"cite", "kind", "score", "combsum", "bm25", "case_ids"} (scores
        rounded to 4 places)."""
        return {
            "cite": self.passage.cite,
            "kind": self.passage.kind,
            "score": round(self.score, 4),
            "combsum": round(self.combsum, 4),
            "bm25": round(self.bm25, 4),
            "case_ids": list(self.case_ids),
        }


class PassageIndex:
    """A BM25 index over passages, queried per failure with the weak-match rule of the module docstring.

    Args:
        passages: policy and change passages; those without a content word are not indexed.
        settings: `evolution.retrieval` (top_k, min_score, min_shared_terms are used here).
    """

    def __init__(self, passages: Iterable[Passage], settings: RetrievalConfig):
        self.settings = settings
        docs = [(p, tokens(p.index_text())) for p in passages]
        docs = [(p, t) for p, t in docs if t]
        self.passages = [p for p, _ in docs]
        self._terms = [frozenset(t) for _, t in docs]
        self._bm25 = None
        if docs:
            from rank_bm25 import BM25Okapi

            self._bm25 = BM25Okapi([t for _, t in docs])

    def __len__(self) -> int:
        return len(self.passages)

    def search(self, query: str) -> list[tuple[int, float, float]]:
        """The passages that clear the weak-match rule for one query, best first.

        Returns:
            (passage position, normalised score s / max s in 0..1, raw BM25 score) triples; empty
            when the index is empty, the query has no content word, or nothing clears the floor.
        """
        terms = tokens(query)
        if self._bm25 is None or not terms:
            return []
        raw = [float(s) for s in self._bm25.get_scores(terms)]
        best = max(raw)
        if best <= 0.0:
            return []
        distinct = set(terms)
        s = self.settings
        kept = [
            (i, raw[i] / best, raw[i])
            for i in range(len(raw))
            if raw[i] > 0.0 and raw[i] >= s.min_score * best and len(distinct & self._terms[i]) >= s.min_shared_terms
        ]
        return sorted(kept, key=lambda k: (-k[2], k[0]))

    def retrieve(self, queries: Mapping[str, str]) -> list[Hit]:
        """The top `top_k` passages for a batch, fused over its failures (CombMAX, then CombSUM).

        Args:
            queries: case id → that failure's query text (see `failure_query`), in batch order.

        Returns:
            At most `top_k` hits, best first; empty when no passage clears the floor for any failure.
        """
        found: dict[int, list[tuple[str, float, float]]] = {}
        for case_id, query in queries.items():
            for i, norm, raw in self.search(query):
                found.setdefault(i, []).append((case_id, norm, raw))
        hits = {
            i: Hit(
                self.passages[i], max(n for _, n, _ in kept), sum(n for _, n, _ in kept), max(r for _, _, r in kept),
                tuple(c for c, _, _ in kept),
            )
            for i, kept in found.items()
        }
        ranked = sorted(hits, key=lambda i: (-hits[i].score, -hits[i].combsum, -hits[i].bm25, i))
        return [hits[i] for i in ranked[: self.settings.top_k]]


def failure_query(record: Mapping[str, Any]) -> str:
    """The query text of one failure: a `Failure.to_prompt()` record's input text, expected and
    observed output, the evaluator's reason and the diagnosis record (symptom, cause, notes, evidence).

    The input's `fields` (profiles, reservations) are left out: they are mostly names, ids and
    dates that match no policy word and would only make every query longer.
    """
    given = record.get("input")
    text = given.get("text", "") if isinstance(given, Mapping) else given
    diagnosis = record.get("diagnosis") or {}
    parts: list[Any] = [text, record.get("expected"), record.get("got"), record.get("reason")]
    parts += [diagnosis.get(k) for k in ("symptom", "cause", "notes")] + list(diagnosis.get("evidence") or [])
    return "\n".join(
        p if isinstance(p, str) else json.dumps(p, ensure_ascii=False, default=str) for p in parts
        if p not in (None, "")
    )


def policy_passages(files: Mapping[str, bytes]) -> tuple[list[Passage], list[str]]:
    """Cut the policy documents in `files` into passages (see the module docstring).

    Args:
        files: workspace-relative path → bytes, as `GitStore.read_files(base, "policies/")` gives.

    Returns:
        (passages in file and line order, problems): a document that cannot be read (binary, not
        UTF-8, too large, empty) is left out and named in `problems` as `path[:line]: message`.
        Companion files (LICENSE*, README*, SOURCE*, ...) and hidden files are skipped silently.
    """
    from frames_cli.formats.policy import parse_policy_files

    docs, problems = parse_policy_files(files)
    return [p for doc in docs for p in _section_passages(doc, doc.root)], problems


def _section_passages(doc: PolicyDocument, section: Section) -> list[Passage]:
    """The paragraphs of `section`'s own lines, then its children's, in document order."""
    title = " > ".join(section.path) or doc.title
    out: list[Passage] = []
    para: list[int] = []

    def close() -> None:
        if para:
            a, b = para[0], para[-1]
            out.append(Passage(f"{doc.file}:{a}-{b}", "policy", title, "\n".join(doc.lines[a - 1 : b])))
            para.clear()

    for no in range(section.start + doc.heading_lines(section), section.own_end + 1):
        fenced = no in doc.fenced
        if not doc.lines[no - 1].strip() and not fenced:
            close()
            continue
        # Also inside a fence: one unclosed fence would otherwise make the rest of the document
        # a single passage (800 lines, 30,000 characters, shown to every diagnoser).
        if len(para) >= MAX_PASSAGE_LINES:
            close()
        para.append(no)
    close()
    for child in section.children:
        out.extend(_section_passages(doc, child))
    return out


def change_passages(store: GitStore, ref: str, max_changes: int, run_id: str | None = None) -> list[Passage]:
    """The past accepted skill changes in the history of `ref`, newest first (see the module docstring).

    Args:
        store: the repository.
        ref: the parent candidate's commit.
        max_changes: most commits indexed (0: none).
        run_id: the run asking; its own children (trailer `Frames-Run: <run_id>`) are cited as
            `candidate <id>` (trailer `Frames-Candidate`) instead of by sha.

    Raises:
        GitError: `ref` names no commit.
    """
    skills_dir = "skills/"
    out: list[Passage] = []
    for entry in store.log(ref, (skills_dir,), max_changes):
        if not entry.parents or entry.trailers.get(COLDSTART_TRAILER[0]) in IMPORT_COMMANDS:
            continue
        summary, _, body = entry.message.partition("\n")
        text = body.strip("\n")
        if len(text) > MAX_CHANGE_CHARS:
            cut = text.rfind("\n", 0, MAX_CHANGE_CHARS)
            text = text[: cut if cut > 0 else MAX_CHANGE_CHARS] + "\n…"
        names = sorted({p[len(skills_dir) :].split("/")[0] for p in entry.paths if p.startswith(skills_dir)})
        own = (
            run_id is not None and entry.trailers.get("Frames-Run") == run_id and entry.trailers.get("Frames-Candidate")
        )
        cite = f"candidate {entry.trailers['Frames-Candidate']}" if own else f"commit {entry.sha[:12]}"
        out.append(Passage(cite, "change", summary, text, tuple(names)))
    return out


def batch_hits(index: PassageIndex | None, records: Sequence[Mapping[str, Any]]) -> list[Hit]:
    """The hits for one diagnoser batch of `Failure.to_prompt()` records (none without an index)."""
    if index is None or not len(index):
        return []
    return index.retrieve({str(r["case_id"]): failure_query(r) for r in records})
