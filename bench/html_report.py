"""The HTML run report of the bundled example, opened in a real headless Chromium.

Copies the bundled example (frames.yaml, policies/, skills/, cases/) into a temporary git
repository, runs `frames evolve` (simulator, offline), writes `frames report`, opens the page in
the system's Chromium (Debian: `apt-get install chromium`) and prints what it measured: the page's
size, the URLs it names (XML namespace names left out), the console messages and blocked requests
the browser logged, and how long rendering took. The screenshot goes to docs/screenshots/report.png
(the top 2,400 pixels at 1,280 wide), where a person can look at it.

    python bench/html_report.py [--rounds N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.browser import find_chromium, open_in_chromium, urls_named  # noqa: E402
from bundled import copy_example  # noqa: E402

SCREENSHOT = ROOT / "docs" / "screenshots" / "report.png"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=None, help="evolution rounds (default: frames.yaml's max_rounds)")
    args = parser.parse_args()
    from typer.testing import CliRunner

    from frames_cli.commands.app import app

    if find_chromium() is None:
        print("no chromium on PATH: install it (Debian: apt-get install chromium); the browser check is skipped")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "example"
        copy_example(root)
        git = lambda *a: subprocess.run(["git", *a], cwd=root, check=True, capture_output=True)  # noqa: E731
        git("init", "-q", "-b", "main")
        git("add", ".")
        git("-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "bundled example")
        evolve = ["evolve", "--repo", str(root)] + (["--max-rounds", str(args.rounds)] if args.rounds else [])
        result = CliRunner().invoke(app, evolve)
        if result.exit_code != 0:
            print(result.output)
            return 1
        page = root / "report.html"
        started = time.perf_counter()
        result = CliRunner().invoke(app, ["report", "--repo", str(root), "--out", str(page)])
        built = time.perf_counter() - started
        if result.exit_code != 0:
            print(result.output)
            return 1
        html = page.read_text()
        started = time.perf_counter()
        seen = open_in_chromium(page, SCREENSHOT)
        rendered = time.perf_counter() - started
    print(f"report: {len(html.encode()):,} bytes, {html.count('<svg')} inline SVG pictures, built in {built:.1f} s")
    print(f"URLs named by the page (XML namespace names left out): {len(urls_named(html))}")
    print(f"browser: DOM {len(seen.dom):,} characters; console messages and blocked requests: {len(seen.problems)}")
    for line in seen.problems:
        print(f"  {line}")
    print(f"browser: two headless loads (DOM dump, screenshot) in {rendered:.1f} s")
    print(f"screenshot: {SCREENSHOT.relative_to(ROOT)} ({SCREENSHOT.stat().st_size:,} bytes)")
    return 1 if seen.problems or urls_named(html) else 0


if __name__ == "__main__":
    raise SystemExit(main())
