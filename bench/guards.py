"""Guards measured on real text: the good rules each guard drops and the junk it catches.

Reads the labelled corpus `bench/data/guards/corpus.jsonl` (every proposed rule line of the
real-model trials, the lines issue 27 quotes, junk of the simulator's own runs and of review-log
narratives; bench/data/guards/README.md says where each comes from and how it was labelled) and
puts every line through the guards that drop a proposed rule between plan and apply
(`frames_cli.evolution.propose.case_index.CaseValues.findings`: the same checks `guard_proposals` applies to a
proposal and `added_line_errors` to a line a rewrite adds), each guard alone, with the context the
line had: the case index and policy of its workspace (the bundled airline example's cases/,
holdout/ and policies/; the 18F travel workspace of `bench/data/guards/18f/`), its skill and the
cases it cites.

Prints, per part of the corpus (`tune`, the lines guards were changed against, and `held-out`)
and per guard: the good rules it drops, the junk it catches alone, and the junk it is the first to
catch in the guards' order; then the good rules dropped and the junk kept over all guards. Lines
of the held-out part are named only with --show-held-out. The last line is over the whole corpus:
`good-rules-dropped=<n> junk-caught=<share>` (targets: 0 and at least 0.90, issue 27).

Usage: python bench/guards.py [--show-held-out] [--part tune|held-out]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frames_cli.evolution.propose.case_index import GUARD_NAMES, CaseValues  # noqa: E402
from frames_cli.formats.case_files import load_cases  # noqa: E402

DATA = ROOT / "bench" / "data" / "guards"
#: Where each workspace's cases and policy documents are, relative to the project root.
WORKSPACES = {
    "airline": (["cases/*.yaml", "holdout/*.yaml"], "policies"),
    "18f": (["bench/data/guards/18f/cases.yaml"], "bench/data/catalog_choice/18f-travel"),
}


@dataclass(frozen=True)
class Line:
    """One labelled line of the corpus (bench/data/guards/README.md)."""

    id: str
    part: str
    good: bool
    workspace: str
    skill: str
    cases: tuple[str, ...]
    text: str


def load_corpus(path: Path = DATA / "corpus.jsonl") -> list[Line]:
    """The corpus's lines; raises ValueError naming the line of a record that lacks a field."""
    out = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rec = json.loads(raw)
            out.append(Line(rec["id"], rec["part"], rec["label"] == "good", rec["workspace"], rec["skill"],
                            tuple(rec["cases"]), rec["text"]))
        except (KeyError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}:{number}: not a corpus record ({exc})") from exc
    return out


def workspace_index(name: str) -> CaseValues:
    """The guards' index of one workspace, as a run builds it: its cases and its policy texts."""
    globs, policies = WORKSPACES[name]
    cases = load_cases(sorted(p for g in globs for p in ROOT.glob(g)))
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / policies).glob("*.md"))
             if p.name not in ("LICENSE.md", "SOURCE.md")]
    return CaseValues.build(cases, texts)


def verdicts(lines: list[Line]) -> dict[str, dict[str, str]]:
    """Per line id, the guards that refuse it and why (every guard, not only the first)."""
    indexes = {name: workspace_index(name) for name in sorted({line.workspace for line in lines})}
    return {line.id: dict(indexes[line.workspace].findings(line.text, line.skill, line.cases)) for line in lines}


def share(part: int, whole: int) -> str:
    """`part/whole` as a share with three decimals (`-` when whole is 0)."""
    return f"{part / whole:.3f}" if whole else "-"


def report(lines: list[Line], found: dict[str, dict[str, str]], part: str, show: bool) -> tuple[int, int, int]:
    """Print one part's table and lines; return (good rules dropped, junk caught, junk)."""
    chosen = [line for line in lines if part in ("all", line.part)]
    good = [line for line in chosen if line.good]
    junk = [line for line in chosen if not line.good]
    print(f"\n== {part}: {len(chosen)} lines, {len(good)} good, {len(junk)} junk")
    print(f"{'guard':<16} {'good dropped':>12} {'junk caught':>12} {'caught first':>12}")
    for name in GUARD_NAMES:
        dropped = sum(name in found[line.id] for line in good)
        caught = sum(name in found[line.id] for line in junk)
        first = sum(next(iter(found[line.id]), None) == name for line in junk)
        print(f"{name:<16} {dropped:>12} {caught:>12} {first:>12}")
    dropped = [line for line in good if found[line.id]]
    kept = [line for line in junk if not found[line.id]]
    print(f"{'all guards':<16} {len(dropped):>12} {len(junk) - len(kept):>12}   junk caught "
          f"{share(len(junk) - len(kept), len(junk))}")
    if show:
        for line in dropped:
            guard, why = next(iter(found[line.id].items()))
            print(f"  good dropped {line.id} [{guard}] {line.text[:100]!r}: {why[:140]}")
        for line in kept:
            print(f"  junk kept    {line.id} ({line.skill}) {line.text[:120]!r}")
    return len(dropped), len(junk) - len(kept), len(junk)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-held-out", action="store_true", help="name the held-out lines a guard gets wrong")
    parser.add_argument("--part", choices=["tune", "held-out"],
                        help="print only this part's table (the last line stays over the whole corpus)")
    args = parser.parse_args(argv)
    lines = load_corpus()
    found = verdicts(lines)
    for part in ("tune", "held-out"):
        if args.part in (None, part):
            report(lines, found, part, show=part == "tune" or args.show_held_out)
    dropped, caught, junk = report(lines, found, "all", show=False)
    print(f"good-rules-dropped={dropped} junk-caught={share(caught, junk)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
