"""A table of hostile and malformed inputs through frames as real processes (issues 15 and 29).

Usage: python bench/bad_inputs.py [--only SUBSTRING] [--family NAME] [--jobs N]

Four families (bench/hostile/): `file` (issue 15's 102 inputs: frames.yaml, cases, skills,
policies, symlinks, secrets, bombs, run ids; through `frames validate` and `frames evolve`),
`bounds` (every number of frames.yaml just past its documented range, escaped text, paths leaving
the workspace, back-links past any file), `answer` (a model's hostile answers through the spool
provider, role by role: front matter, control characters however escaped, credentials, forged
lines, runaway sizes, broken JSON) and `git` (hooks, signing, locks, sparse checkouts, operations in
progress, kill -9 while writing or committing, 10,000 sections) and `real` (third-party files:
USWDS accordions, a Chinese statute, UTF-16 and CRLF exports, skills written for other runtimes).
Each input runs in a fresh copy of
a small workspace (bench/hostile/harness.py); then the input is taken away and the normal commands
a user runs next must pass.

Printed per input: the exit codes, whether an exit-2 message names the file (and line), and the
five judgements of hostile/harness.py. Totals: `tracebacks`, `wrote-on-error`, `hangs`,
`stranded`, `leaks` (all must be 0), and for the file and bounds families `accepted` (every
command exit 0), `unlocated` and `validate-evolve-disagree`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile import answers, bounds, files, gitstates, thirdparty
from hostile.harness import Outcome, Trial, template, try_trial

FAMILIES = {"file": files.trials, "bounds": bounds.trials, "answer": answers.trials, "git": gitstates.trials,
            "real": thirdparty.trials}


def row(o: Outcome) -> str:
    """One table line."""
    codes = "/".join("-" if c is None else str(c) for c in o.codes)
    flags = (f"{'yes' if o.located else 'NO':>7} {'YES' if o.wrote else 'no':>5} {'TB' if o.traceback else '-':>3} "
             f"{'HANG' if o.hang else '-':>4}")
    trouble = "; ".join(x for x in (f"stranded: {o.stranded}" if o.stranded else "", f"leak: {o.leak}" if o.leak
                                    else "") if x)
    return f"{o.name[:44]:44} {o.family:6} {codes:>9} {flags}  {(trouble or o.message)[:140]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="run only inputs whose name holds this text")
    parser.add_argument("--family", choices=sorted(FAMILIES), help="run only this family")
    parser.add_argument("--jobs", type=int, default=2, help="inputs tried at once (default 2)")
    args = parser.parse_args()
    items: list[Trial] = [t for name, make in FAMILIES.items() if args.family in (None, name) for t in make()
                          if args.only in t.name]
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tmpl = template(work)
        with ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(lambda t: try_trial(t, tmpl, work), items))
    print(f"{'input':44} {'family':6} {'exits':>9} {'located':>7} {'wrote':>5} {'tb':>3} {'hang':>4}  message")
    for o in outcomes:
        print(row(o))
    checked = [o for o in outcomes if o.family in ("file", "bounds")]
    accepted = sum(all(c == 0 for c in o.codes) for o in checked)
    unlocated = sum(not o.located for o in outcomes)
    disagree = sum(o.disagree for o in checked)
    totals = {"tracebacks": sum(o.traceback for o in outcomes), "wrote-on-error": sum(o.wrote for o in outcomes),
              "hangs": sum(o.hang for o in outcomes), "stranded": sum(bool(o.stranded) for o in outcomes),
              "leaks": sum(bool(o.leak) for o in outcomes)}
    per_family = ", ".join(f"{f} {sum(o.family == f for o in outcomes)}" for f in FAMILIES)
    print(f"\n{len(outcomes)} inputs ({per_family}) in {time.monotonic() - started:.0f} s; accepted={accepted} "
          f"unlocated={unlocated} validate-evolve-disagree={disagree}")
    print(" ".join(f"{k}={v}" for k, v in totals.items()))
    return 0 if not any(totals.values()) and disagree == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
