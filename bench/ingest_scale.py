"""Scale of `frames ingest review-log`: a reviewer team's year of logs in one file.

Builds a CSV of --rows rows by cycling the twelve hand-written rows of
tests/ingest/data/reviews-week12.csv (bad rows, a Latin-1 byte, a misspelt verdict and multi-line
cells included) with the ticket number and the input made unique per row, so every good row is a distinct
case and the store compares each against all the others and the workspace's cases. Then runs the same path as the
command in a temporary copy of the bundled
workspace: read and classify (ReviewLogConverter, with the bundled policy for grounding), store
with duplicate folding against the workspace's cases (dedup.store_cases), and attach the advice
rows to skills (BM25). Prints rows, cases, problems, the wall time of each phase and the peak
memory (RSS).

Usage: python bench/ingest_scale.py [--rows N]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frames_cli.ingest.feedback import pipeline  # noqa: E402
from frames_cli.ingest.feedback.review_log import ReviewLogConverter  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402
from bundled import copy_example  # noqa: E402

SOURCE = ROOT / "tests" / "ingest" / "data" / "reviews-week12.csv"


def build_log(path: Path, rows: int) -> None:
    """Write `rows` rows cycled from SOURCE, each with a unique ticket and input text."""
    raw = SOURCE.read_bytes()
    lines = raw.split(b"\n")
    header, body = lines[0], b"\n".join(lines[1:])
    # Split the template into its records with the csv module (cells span lines), keeping bytes.
    records = list(csv.reader(io.StringIO(body.decode("latin-1"), newline="")))
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    for i in range(rows):
        record = list(records[i % len(records)])
        if len(record) > 1:
            record[0] = f"R-{i:06d}"
            record[1] = f"{record[1]} (ticket {i})" if record[1] else record[1]
        writer.writerow(record)
    path.write_bytes(header + b"\n" + out.getvalue().encode("latin-1"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        copy_example(root)
        log = Path(tmp) / "reviews.csv"
        build_log(log, args.rows)
        ws = Workspace.open(root)
        config = ws.config()

        t0 = time.perf_counter()
        converter = ReviewLogConverter(log, policy=pipeline.workspace_policy(ws),
                                       evidence_match=config.ingest.evidence_match)
        cases = converter.convert()
        t1 = time.perf_counter()
        stored = pipeline.store(ws, cases, None, "review-log-bench", replace=True)
        t2 = time.perf_counter()
        _, placed = pipeline.attach_priors(ws, config, converter.priors)
        t3 = time.perf_counter()

    errors = sum(1 for p in converter.problems if p.severity == "error")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows {args.rows}: {len(cases)} cases ({len(stored.written)} stored, {len(stored.merged)} folded), "
          f"{len(placed)} priors, {errors} bad rows, {len(converter.problems) - errors} warnings")
    print(f"read+classify {t1 - t0:.2f} s ({args.rows / (t1 - t0):,.0f} rows/s), store+dedup {t2 - t1:.2f} s, "
          f"priors {t3 - t2:.2f} s; peak RSS {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
