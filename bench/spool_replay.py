"""Recorded spool answers: a bench replays what a model once answered through `spool/<role>`.

A recording is xz-compressed JSONL, one {id, model, messages, answer} per request; `id` is the
spool id (`llm.transport.spool.spool_id`, the hash of the model's name, the messages and the sample), so a
request finds its answer only while its prompt is byte-for-byte the one recorded. Replaying puts
each answer in the spool folder as `<id>.answer.txt`, where the spool provider takes it at once;
recording gathers the answered requests of a folder that someone answered live.
"""

from __future__ import annotations

import json
import lzma
import re
from pathlib import Path

#: A spool id as `llm.transport.spool.spool_id` makes it: the only file name a recording may ask for.
SPOOL_ID = re.compile(r"[0-9a-f]{20}")


def read(path: Path) -> dict[str, dict]:
    """The recording at `path` as {id: entry}; {} when there is none.

    Raises:
        SystemExit: a line that is not a JSON object with a spool id and an answer text, named by
            file and line (an id like "../x" would name a file outside the spool folder).
    """
    if not path.exists():
        return {}
    rows: dict[str, dict] = {}
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{path}:{number}: not JSON ({exc.msg})") from None
            if (
                not isinstance(row, dict)
                or not SPOOL_ID.fullmatch(str(row.get("id")))
                or not isinstance(row.get("answer"), str)
            ):
                raise SystemExit(f"{path}:{number}: not a recorded answer (an object with a 20-hex-digit `id` and an "
                                 f"`answer` text)")
            rows[row["id"]] = row
    return rows


def replay(path: Path, spool: Path) -> dict[str, dict]:
    """Put every answer of the recording at `path` into the folder `spool`; returns the recording."""
    rows = read(path)
    spool.mkdir(parents=True, exist_ok=True)
    for rid, row in rows.items():
        (spool / f"{rid}.answer.txt").write_text(row["answer"], encoding="utf-8")
    return rows


def record(path: Path, spool: Path) -> int:
    """Add every answered request of the folder `spool` to the recording at `path`, sorted by id;
    returns the entries. Entries already there stay (a replayed request writes no request file), so
    one that no prompt asks for any more stays too. The xz format holds no time: the same entries
    give the same bytes."""
    rows = read(path)
    for request in sorted(spool.glob("*.request.json")):
        asked = json.loads(request.read_text(encoding="utf-8"))
        answer = spool / asked["answer_file"]
        if answer.exists() and answer.stat().st_size:
            rows[asked["id"]] = {"id": asked["id"], "model": asked["model"], "messages": asked["messages"],
                                 "answer": answer.read_text(encoding="utf-8")}
    text = "".join(json.dumps(rows[k], ensure_ascii=False) + "\n" for k in sorted(rows))
    path.write_bytes(lzma.compress(text.encode("utf-8"), preset=9))
    return len(rows)
