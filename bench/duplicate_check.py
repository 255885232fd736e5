"""The rewrite's duplicate check (`evolution.rules.duplicate_pairs`) on long and hostile bodies (issue 29).

Usage: python bench/duplicate_check.py [--lines 500,1000,2000,4000]

Four body shapes per size, each timed once (wall clock): `random` (lines of 12 words drawn from 30
policy words: most repeat an earlier rule), `table` (a fee table: one amount per line, no repeats),
`codes` (one rule per reservation code: near-alike, no repeats, every line a candidate of every
other) and `same` (one rule written on every line). Printed: seconds and repeats found. Before
issue 29 every pair was compared: 1,000 lines took 32 s, 4,000 over 300 s.
"""

from __future__ import annotations

import argparse
import random
import time

from frames_cli.evolution.propose.rules import duplicate_pairs

WORDS = (
    "agent must cancel reservation refund passenger flight cabin economy business bag checked fee insurance travel "
    "booking hours days status membership gold silver payment certificate gift card credit profile user change modify"
).split()


def bodies(n: int) -> dict[str, str]:
    """The four body shapes of `n` lines."""
    rng = random.Random(0)
    return {
        "random": "\n".join("- " + " ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(n)),
        "table": "\n".join(f"- {i} free checked bags for each business passenger with a gold membership"
                           for i in range(n)),
        "codes": "\n".join(f"- The agent must not cancel reservation R{i:05d}X for the passenger in economy today."
                           for i in range(n)),
        "same": "\n".join("- The agent must cancel the reservation and refund the passenger within 24 hours."
                          for _ in range(n)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", default="500,1000,2000,4000", help="comma-separated body sizes")
    args = parser.parse_args()
    print(f"{'lines':>6} {'shape':>7} {'seconds':>8} {'repeats':>8}")
    for n in (int(x) for x in args.lines.split(",")):
        for shape, body in bodies(n).items():
            start = time.perf_counter()
            found = duplicate_pairs(body, 0.4)
            print(f"{n:>6} {shape:>7} {time.perf_counter() - start:>8.2f} {len(found):>8}", flush=True)


if __name__ == "__main__":
    main()
