"""Does the simulated executor pick skills the way the real model did?

The real-model trial (`../shared/data/real-model-trial/`, see its README) holds every first-turn
executor request a large language model answered: the catalog, the request, and the skill ids it
asked to load. This replays each of those prompts through a skill-choice rule and counts how often
it picks what the real model picked. The general-rules skill is left out on both sides (the real
model loaded it nearly always, and every rule here can be made to).

Per first turn, with R the real model's other loads (1 to 3 ids):
- agreement: |the rule's first |R| picks ∩ R| / |R|, averaged;
- first pick: share of turns whose rule's first pick is in R.

Rules compared: `sim` (the simulated executor's own, `sim.matching.bm25_ranked`: Okapi BM25 over
name + description, only skills sharing a word), `words` (its rule before 2026-12-01 and still the
diagnoser's, `sim.matching.ranked`: most distinct shared words), BM25 over all the same texts with
rank-bm25's Okapi idf and with Lucene's idf. Each is run on the request alone (what the real model
read, without the JSON details) and on request + the case's `diagnosis.evidence` (what the
simulator's query holds). To show the choice is not fitted to some of the cases, the turns are
also split by case (case ids sorted by sha256, first half `A`, the rest `B`) and each half scored.

    python bench/sim_choice.py [--data ../shared/data/real-model-trial]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("airline-exchanges.jsonl", "airline-thin-exchanges.jsonl")


def first_turns(data: Path) -> list[tuple[str, str, list[tuple[str, str, str]], list[str]]]:
    """(case id, request, catalog entries (id, name, description), real loads) of every first turn."""
    from frames_cli.sim import reading

    out = []
    for name in FILES:
        for line in (data / name).read_text().splitlines():
            row = json.loads(line)
            prompt = row["messages"][0]["content"]
            if row["model"] != "spool/executor" or "<skill" in prompt:
                continue
            answer = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
            if not isinstance(answer, dict) or "load" not in answer:
                continue
            request = prompt.split("\nRequest:\n", 1)[1].split("\nDetails:", 1)[0].strip()
            out.append((reading.case_id(prompt), request, reading.catalog(prompt), list(answer["load"])))
    return out


def _bm25(texts: list[str], idf: str):
    from rank_bm25 import BM25Okapi

    from frames_cli.words import tokens

    class Lucene(BM25Okapi):
        def _calc_idf(self, nd: dict) -> None:
            for word, n in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - n + 0.5) / (n + 0.5))

    return (Lucene if idf == "lucene" else BM25Okapi)([tokens(t) for t in texts])


def rank(rule: str, query: str, entries: list[tuple[str, str, str]]) -> list[str]:
    """Catalog ids in the order `rule` ("sim", "okapi", "lucene") would load them."""
    from frames_cli.words import tokens
    from frames_cli.sim.matching import bm25_ranked, ranked, skill_text

    texts = [skill_text(name, desc) for _, name, desc in entries]
    if rule in ("sim", "words"):
        choose = bm25_ranked if rule == "sim" else ranked
        return [sid for sid, _ in choose(query, ((e[0], t) for e, t in zip(entries, texts)))]
    scores = _bm25(texts, rule).get_scores(tokens(query))
    return [entries[i][0] for i in sorted(range(len(entries)), key=lambda i: -scores[i])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "real-model-trial")
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"{args.data}: no real-model trial here (it lives in ../shared/data/real-model-trial)")
    from frames_cli.formats.case_files import load_cases

    cases = {c.id: c for c in load_cases([ROOT / "cases" / "tau2-airline.yaml"])}
    turns = first_turns(args.data)
    ids = sorted({t[0] for t in turns}, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
    half_a = set(ids[: len(ids) // 2])
    in_a = sum(t[0] in half_a for t in turns)
    print(f"{len(turns)} first turns of the real-model trial ({len(ids)} cases; half A {in_a} turns, B "
          f"{len(turns) - in_a})")
    print(f"{'rule':<8} {'query':<20} {'agreement':>9} {'first pick':>10} {'A agree':>8} {'B agree':>8} {'A first':>8} "
          f"{'B first':>8}")
    for rule in ("sim", "words", "okapi", "lucene"):
        for with_evidence in (False, True):
            score = {"all": [0.0, 0, 0], "A": [0.0, 0, 0], "B": [0.0, 0, 0]}
            for case_id, request, entries, real in turns:
                general = {sid for sid, name, _ in entries if "general-rules" in name}
                want = [s for s in real if s not in general]
                if not want:
                    continue
                evidence = list(cases[case_id].diagnosis.evidence) if with_evidence and case_id in cases else []
                picks = [s for s in rank(rule, " ".join([request, *evidence]), entries) if s not in general]
                for key in ("all", "A" if case_id in half_a else "B"):
                    score[key][0] += len(set(picks[: len(want)]) & set(want)) / len(want)
                    score[key][1] += bool(picks) and picks[0] in want
                    score[key][2] += 1
            agree = {k: v[0] / v[2] for k, v in score.items()}
            first = {k: v[1] / v[2] for k, v in score.items()}
            label = "request + evidence" if with_evidence else "request"
            print(f"{rule:<8} {label:<20} {agree['all']:>9.1%} {first['all']:>10.1%} {agree['A']:>8.1%} "
                  f"{agree['B']:>8.1%} {first['A']:>8.1%} {first['B']:>8.1%}")

if __name__ == "__main__":
    main()
