"""Answer keys against a reviewer's: how many rejected rows get a key that holds every requirement and nothing else.

The labelled set (`bench/data/answer_keys/`) is 160 rejected review-log rows written by hand
before any reader ran on them, over ten domains and two formats (CSV, JSON Lines), each labelled
with the requirements a reviewer would sign (`labels.yaml`; [] = the comment states none). The
held-out sets (`heldout/` to `heldout4/`) are scored only with `--heldout`: they were kept out
while the rules were tuned (bench/data/answer_keys/README.md says which figure of each was blind).
For each reader it prints, per set, the rejected rows, the share whose key is right (every
requirement, nothing else; no key when the label has none), the rows whose key holds a fragment,
the rows whose key holds narrative (text that is no requirement), and the rows marked `review:
needed`. A model is scored on the rows its recording answers.

    python bench/answer_keys.py                     # the deterministic reader (offline default)
    python bench/answer_keys.py --model spool/keys  # also a model, replaying keys.spool-answers.jsonl.xz
    python bench/answer_keys.py --model spool/keys --record /tmp/keys --wait 900
                                                    # the rows not recorded: answered in /tmp/keys/spool, recorded
    python bench/answer_keys.py --show              # every row that is not right, with its key

Scoring (here, not in frames): words are `words.tokens` (stemmed, stop words out). A key is
right when each labelled requirement has ≥ 80 % of its words in the key, ≥ 85 % of the key's words
are requirement words, and no item is a fragment. An item is a fragment when it holds a link
target, or, found in the comment, starts or ends inside a sentence (not after a sentence end, a
list bullet, a semicolon, a colon or a verdict word), or, not found, is under 60 % of the
requirement it is part of. An item holds narrative when under half of its words are requirement words.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# litellm (imported with the model layer) would otherwise fetch its price table from the internet.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from frames_cli.ingest.keys.answer_key import AnswerKey, extract_key  # noqa: E402
from frames_cli.ingest.keys.comment_text import VERDICT_WORDS, strip_links  # noqa: E402
from frames_cli.words import overlap, token_set  # noqa: E402

DATA = ROOT / "bench" / "data" / "answer_keys"
RECORDING = DATA / "keys.spool-answers.jsonl.xz"
_LINK_DEBRIS = re.compile(r"\]\(|https?://|www\.|\(#|\(\s*\)|\[\s*\]")
_OPENS = re.compile(rf"(?:^|[.!?;:\n•—–\"“)]|\s[-*+]|^\s*\d+[.)]|(?:^|\s)(?:{VERDICT_WORDS}),?)\s*$", re.IGNORECASE)


@dataclass
class Row:
    """One labelled rejected row: where it is, its comment and the requirements a reviewer signs."""

    file: str
    row_id: str
    comment: str
    requirements: list[str]
    request: str | None = None

    @property
    def part(self) -> str:
        """"tuning", or the held-out set the row is in: "heldout" to "heldout4" (bench/data/answer_keys/README.md)."""
        return self.file.split("/")[0] if "/" in self.file else "tuning"


def load() -> list[Row]:
    """The labelled rows, read with frames' own review-log reader (columns found by their names)."""
    import yaml

    from frames_cli.ingest.rows.records import FieldResolver, read_records
    from frames_cli.ingest.feedback.review_log import ALIASES, parse_verdict

    labels = yaml.safe_load((DATA / "labels.yaml").read_text(encoding="utf-8"))
    rows = []
    for file, wanted in labels.items():
        read = read_records(DATA / file, FieldResolver({}, ALIASES))
        by_id = {r.text("id"): r for r in read.records}
        for row_id, requirements in wanted.items():
            record = by_id[row_id]
            assert parse_verdict(record.text("verdict"), record.location, []) == "rejected", (file, row_id)
            rows.append(Row(file, row_id, record.text("comment") or "", list(requirements), record.text("input")))
    return rows


def _fragment(item: str, comment: str, requirements: list[str]) -> bool:
    """Whether key item `item` is not a whole sentence or clause of `comment` (rules in the docstring)."""
    if _LINK_DEBRIS.search(item):
        return True
    text = " ".join(strip_links(comment)[0].split())
    plain = " ".join(item.split())
    at = text.find(plain)
    if at < 0:
        return any(overlap(item, r) >= 0.8 and overlap(r, item) < 0.6 for r in requirements)
    before, after = text[:at], text[at + len(plain):]
    starts = not before.strip() or bool(_OPENS.search(before))
    ends = not after or after[0] in " .!?;\"”)\n" or not plain[-1].isalnum()
    return not (starts and ends)


def score(key: AnswerKey, row: Row) -> tuple[bool, bool, bool]:
    """(right, holds a fragment, holds narrative) of `key` against `row`'s label."""
    items = key.requirements
    if not row.requirements or not items:
        return (not row.requirements and not items), False, bool(items)
    want = frozenset().union(*(token_set(r) for r in row.requirements))
    have = frozenset().union(*(token_set(i) for i in items))
    covered = all(overlap(r, have) >= 0.8 for r in row.requirements)
    nothing_else = overlap(have, want) >= 0.85
    fragment = any(_fragment(i, row.comment, row.requirements) for i in items)
    narrative = any(overlap(i, want) < 0.5 for i in items)
    return covered and nothing_else and not fragment, fragment, narrative


def model_keys(rows: list[Row], model: str, work: Path | None, wait: float) -> dict[tuple[str, str], AnswerKey]:
    """Keys read by `model` (a `spool/<role>` model): replayed from `RECORDING` for the rows it
    answers (the others are left out), or, with `work` (a workspace folder whose `spool/` answerers
    serve), answered live and added to the recording."""
    import spool_replay

    from frames_cli.ingest.keys.answer_key_model import ModelKeyReader, key_request
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.llm.transport.spool import spool_id
    from frames_cli.workspace.layout import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(work or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        spool = folder / "spool"
        (folder / "frames.yaml").write_text(
            f"version: 1\nmodels:\n  keys: {model}\nspool:\n  dir: spool\n  timeout_s: {wait}\n  poll_s: 0.05\n"
            "llm:\n  cache: false\n  concurrency: 4\n  max_retries: 0\n",
            encoding="utf-8",
        )
        # Recorded answers are replayed live too, so that only the new requests wait for an answerer.
        recorded = spool_replay.replay(RECORDING, spool)
        if work is None:
            if not recorded:
                raise SystemExit(
                    f"no recording at {RECORDING}: run with --record DIR while answerers serve {model} in DIR/spool"
                )
            # A row the recording does not answer is left out, not read by the fallback and counted as the model's.
            name = model.removeprefix("spool/")
            rows = [r for r in rows if spool_id(name, key_request(r.comment, r.request).messages, 0) in recorded]
        ws = Workspace.open(folder)
        with ModelClient(ws, ws.config()) as client:
            keys = ModelKeyReader(client, model).read_many([(r.comment, r.request) for r in rows])
        if work is not None:
            n = spool_replay.record(RECORDING, spool)
            print(f"recorded {n} answers in {RECORDING.relative_to(ROOT)}")
    return {(r.file, r.row_id): k for r, k in zip(rows, keys)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="also read the keys with this model (spool/<role>), from the recording")
    parser.add_argument(
        "--record", metavar="DIR", type=Path, help="answer the model's requests live in DIR/spool and record them"
    )
    parser.add_argument("--wait", type=float, default=5.0, help="seconds the spool waits for an answer")
    parser.add_argument("--show", action="store_true", help="print every tuning row whose key is not right")
    parser.add_argument(
        "--heldout", action="store_true", help="also score the held-out sets (kept out while the rules are tuned)"
    )
    args = parser.parse_args()
    rows = load()
    readers = {"rules": {(r.file, r.row_id): extract_key(r.comment) for r in rows}}
    if args.model:
        readers[args.model] = model_keys(rows, args.model, args.record, args.wait)
    print(
        f"{'reader':<12} {'set':<10} {'rows':>4} {'right':>5} {'share':>7} {'fragment':>8} {'narrative':>9} "
        f"{'review':>6}"
    )
    for name, keys in readers.items():
        parts = [("tuning", [r for r in rows if r.part == "tuning"])]
        if args.heldout:
            parts += [
                (f"held-out{n and f'-{n}'}", [r for r in rows if r.part == f"heldout{n}"]) for n in ("", "2", "3", "4")
            ]
            parts.append(("all", rows))
        for label, subset in parts:
            subset = [r for r in subset if (r.file, r.row_id) in keys]
            if not subset:
                print(f"{name:<12} {label:<10} no recorded answers")
                continue
            scores = [score(keys[(r.file, r.row_id)], r) for r in subset]
            right = sum(s[0] for s in scores)
            review = sum(1 for r in subset if keys[(r.file, r.row_id)].unsure)
            print(f"{name:<12} {label:<10} {len(subset):>4} {right:>5} {100 * right / len(subset):>6.1f}% "
                  f"{sum(s[1] for s in scores):>8} {sum(s[2] for s in scores):>9} {review:>6}")
        if args.show:
            for r in (r for r in rows if (r.part == "tuning" or args.heldout) and (r.file, r.row_id) in keys):
                key = keys[(r.file, r.row_id)]
                ok, frag, narr = score(key, r)
                if not ok:
                    print(f"\n[{name}] {r.file} {r.row_id}{' fragment' if frag else ''}{' narrative' if narr else ''}"
                          f"\n  comment: {r.comment}\n  label:   {r.requirements}\n  key:     {key.requirements}"
                          f"\n  none: {key.none!r} unsure: {key.unsure!r}")


if __name__ == "__main__":
    main()
