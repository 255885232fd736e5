"""Time and memory of retrieval for diagnosis context (evolution/propose/retrieval.py): index build and batch queries.

Three corpora, each queried with the 50 bundled tau2 cases as failures in diagnoser batches of 8:
- `bundled`: the bundled example as `frames evolve` sees it at HEAD (policies/ and the skill
  commits in HEAD's history; the bundled policy is the tau2 airline policy verbatim);
- `tau2`: the policy file given by --tau2 alone (default ../shared/data/tau2-airline/policy.md,
  skipped when absent);
- `scaled`: --copies copies of the bundled policy as separate files and a history of --changes skill
  commits (in a temporary repository), the size of a large policy set after months of runs.

Prints the import time of rank-bm25 (once per process), then per corpus: passages, the time to read
and cut them (git objects, policy parsing, `git log`), the time to build the BM25 index and the peak
of Python allocations while building it (tracemalloc; numpy reports its arrays there), and the query
time per batch and per failure (median of --repeat runs over all batches), and how many passages a
batch got.

Usage: python bench/retrieval.py [--copies N] [--changes N] [--repeat N] [--tau2 PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frames_cli.evolution.propose.diagnose import Failure
from frames_cli.evolution.propose.retrieval import (
    Passage,
    PassageIndex,
    batch_hits,
    change_passages,
    policy_passages,
)
from frames_cli.formats.case_files import load_cases
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.config import RetrievalConfig

ROOT = Path(__file__).resolve().parents[1]
BATCH = 8


def measure(label: str, load: Callable[[], list[Passage]], batches: list[list[dict]], repeat: int) -> None:
    """Build the index from `load()` under tracemalloc, then time `batch_hits` over `batches`."""
    start = time.perf_counter()
    passages = load()
    read = time.perf_counter() - start
    tracemalloc.start()
    start = time.perf_counter()
    index = PassageIndex(passages, RetrievalConfig())
    build = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    runs, sizes = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        sizes = [len(batch_hits(index, batch)) for batch in batches]
        runs.append(time.perf_counter() - start)
    per_batch = statistics.median(runs) / len(batches)
    failures = sum(len(b) for b in batches)
    print(
        f"{label:8} {len(index):5} passages  read {read * 1000:7.1f} ms  index {build * 1000:6.1f} ms  peak "
        f"{peak / 2**20:5.1f} MiB  query {per_batch * 1000:7.2f} ms/batch "
        f"{statistics.median(runs) / failures * 1000:6.2f} ms/failure  hits/batch {min(sizes)}-{max(sizes)}"
    )


def scaled_repo(root: Path, copies: int, changes: int) -> tuple[GitStore, str]:
    """A repository with `copies` policy files and a history of `changes` commits that each edit one
    skill; returns the store and the last commit's sha."""
    import subprocess

    policy = (ROOT / "policies" / "airline.md").read_text()
    for i in range(copies):
        (root / "policies").mkdir(parents=True, exist_ok=True)
        (root / "policies" / f"airline-{i:03}.md").write_text(policy)
    (root / "skills" / "cancel-flight").mkdir(parents=True)
    (root / "skills" / "cancel-flight" / "SKILL.md").write_text("---\nname: cancel-flight\ndescription: Cancel.\n---\n"
                                                                "# Cancel\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "policies"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    store = GitStore(root)
    sha = store.resolve("HEAD")
    rules = [line.strip("- ").strip() for line in policy.splitlines() if len(line) > 60]
    for i in range(changes):
        rule = rules[i % len(rules)]
        body = f"---\nname: cancel-flight\ndescription: Cancel.\n---\n# Cancel\n\n- {rule} ({i})\n"
        message = (f"frames: r{i + 1}c1 rewrites cancel-flight (50.0% → 52.0%, gate pass)\n\n- cancel-flight (changed; "
                   f"votes 2 of 3)\n"
                   f'  - Add the rule: "{rule}"\n    why: the skill does not state the rule that decides case-{i}.')
        sha = store.commit_files(sha, {"skills/cancel-flight/SKILL.md": body.encode()}, message)
    return store, sha


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=50, help="policy files in the scaled corpus")
    parser.add_argument("--changes", type=int, default=200,
                        help="skill commits in the scaled history (evolution.retrieval.max_changes)")
    parser.add_argument("--repeat", type=int, default=5, help="query runs; the median is printed")
    parser.add_argument("--tau2", type=Path, default=ROOT.parent / "shared" / "data" / "tau2-airline" / "policy.md")
    args = parser.parse_args()

    start = time.perf_counter()
    import rank_bm25  # noqa: F401  (numpy with it: paid once per process, not per index)

    print(f"import rank_bm25 (and numpy): {(time.perf_counter() - start) * 1000:.0f} ms")
    cases = load_cases(sorted([*(ROOT / "cases").glob("*.yaml"), *(ROOT / "holdout").glob("*.yaml")]))
    records = [Failure(c, {"actions": []}, "expected actions differ").to_prompt() for c in cases]
    batches = [records[i : i + BATCH] for i in range(0, len(records), BATCH)]
    print(f"{len(records)} failures in {len(batches)} batches of up to {BATCH}; settings {RetrievalConfig()}")

    store = GitStore(ROOT)
    measure("bundled",
            lambda: policy_passages(store.read_files("HEAD", "policies/"))[0] + change_passages(store, "HEAD", 200),
            batches, args.repeat)
    if args.tau2.is_file():
        measure("tau2", lambda: policy_passages({"policies/policy.md": args.tau2.read_bytes()})[0], batches,
                args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        big, head = scaled_repo(Path(tmp) / "repo", args.copies, args.changes)
        measure(
            "scaled",
            lambda: policy_passages(big.read_files(head, "policies/"))[0] + change_passages(big, head, args.changes),
            batches,
            args.repeat,
        )


if __name__ == "__main__":
    main()
