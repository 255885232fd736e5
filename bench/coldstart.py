"""Time of `frames coldstart` (verbatim path): the cut alone and a whole run with its git commit.

Usage: python bench/coldstart.py [SECTIONS]   (default 200). Builds a synthetic policy of SECTIONS
sections (three sub-sections each, about 1 KB of text per sub-section) next to the bundled airline
policy in a temporary git repository, then prints seconds for: cutting and naming only, the first
run (writes and commits every skill), and the second run (must write nothing).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from frames_cli.coldstart.run import plan_chunks, run_coldstart
from frames_cli.formats.policy import read_policies
from frames_cli.workspace.layout import Workspace

ROOT = Path(__file__).resolve().parents[1]


def synthetic_policy(sections: int) -> str:
    """A Markdown policy with `sections` H2 sections of three H3 sub-sections of rule paragraphs."""
    out = ["# Synthetic Service Policy", "", "Every rule below applies to every customer.", ""]
    for s in range(sections):
        out += [f"## Process {s}", ""]
        for sub in range(3):
            out += [f"### Step {s}.{sub}", ""]
            for r in range(6):
                out.append(f"- Rule {s}.{sub}.{r}: the agent must check condition {r} before acting, and refuse when "
                           f"it fails.")
            out += ["", "If any check fails, explain which one in one sentence and stop.", ""]
    return "\n".join(out) + "\n"


def main(sections: int = 200) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        (root / "frames.yaml").write_text("version: 1\n")
        (root / "policies").mkdir()
        (root / "policies" / "airline.md").write_bytes((ROOT / "policies" / "airline.md").read_bytes())
        text = synthetic_policy(sections)
        (root / "policies" / "synthetic.md").write_text(text)
        ws = Workspace.open(root)
        config = ws.config()

        start = time.perf_counter()
        planned = plan_chunks(read_policies(ws.root, ws.policies_dir), config)
        cut = time.perf_counter() - start

        start = time.perf_counter()
        first = run_coldstart(ws, config)
        first_s = time.perf_counter() - start

        start = time.perf_counter()
        second = run_coldstart(ws, config)
        second_s = time.perf_counter() - start

    lines = text.count("\n") + 167
    print(f"policy: {len(text) / 1e6:.2f} MB synthetic + airline, {lines} lines -> {len(planned)} skills")
    print(f"cut and name:        {cut:.3f} s")
    print(f"first run + commit:  {first_s:.3f} s ({len(first.written)} skills written)")
    print(f"second run (no-op):  {second_s:.3f} s ({len(second.written)} written, commit {second.commit})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
