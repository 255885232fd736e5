"""Wall time of `frames --help` (start-up cost of the CLI), median and worst of N fresh processes.

Usage: python bench/startup.py [N]   (default N = 10). Prints seconds; the target is well under 0.5 s.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _wall(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, *argv], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def main(runs: int = 10) -> None:
    rows = (
        ("frames --help", ["-m", "frames_cli", "--help"]),
        # typer renders help with rich: this import is the floor any typer CLI pays.
        ("import typer.rich_utils", ["-c", "import typer, typer.rich_utils"]),
        ("bare python", ["-c", "pass"]),
    )
    for label, argv in rows:
        times = _wall(argv, runs)
        print(f"{label:24s} median {statistics.median(times):.3f} s, worst {max(times):.3f} s over {runs} runs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
