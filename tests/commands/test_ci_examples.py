"""The shipped CI examples (examples/ci/) run as written, with the forge's CLI replaced by a fake.

Each example's own shell steps (after installing frames) run in bash in an evolved workspace whose
`origin` is a local bare repository; `gh` / `glab` are small fakes that keep the pull requests in
a JSON file and record every call.

Invariants:
1. The first scheduled run pushes the review branch and opens one pull request whose body is the
   description `frames publish` wrote and whose title is its title.
2. The next run (nothing new: `frames evolve` is up to date) updates that pull request's body and
   opens no second one; the remote still holds one frames branch.
3. After the pull request was closed and its branch deleted, a run opens nothing and pushes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.remote import git, remote_refs

EXAMPLES = Path(__file__).parents[2] / "examples" / "ci"

FAKE_FORGE = r'''#!{python}
"""A fake of `gh` and `glab`: pull requests in $FORGE_STATE, every call appended to $FORGE_LOG."""
import json, os, sys
args = sys.argv[1:]
state_file = os.environ["FORGE_STATE"]
prs = json.load(open(state_file)) if os.path.exists(state_file) else []
with open(os.environ["FORGE_LOG"], "a") as log:
    log.write(json.dumps([os.path.basename(sys.argv[0]), *args]) + "\n")
def opt(name):
    return args[args.index(name) + 1] if name in args else None
kind, verb = args[0], args[1]
head = opt("--head") or opt("--source-branch")
if verb == "list":
    everything = opt("--state") == "all" or "--all" in args
    found = [p for p in prs if p["head"] == head and (everything or p["state"] == "open")]
    if os.path.basename(sys.argv[0]) == "gh":
        print(found[0]["number"] if found else "")
    else:
        print(json.dumps([{{"iid": p["number"]}} for p in found]))
elif verb == "create":
    body = open(opt("--body-file")).read() if opt("--body-file") else opt("--description")
    prs.append({{"number": len(prs) + 1, "head": head, "state": "open", "title": opt("--title"), "body": body}})
elif verb in ("edit", "update"):
    pr = next(p for p in prs if p["number"] == int(args[2]))
    pr["body"] = open(opt("--body-file")).read() if opt("--body-file") else opt("--description")
    pr["edits"] = pr.get("edits", 0) + 1
json.dump(prs, open(state_file, "w"))
'''


def github_steps() -> list[str]:
    steps = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())["jobs"]["evolve"]["steps"]
    runs = [s for s in steps if "run" in s]
    assert runs[0]["name"] == "Install frames"
    return [s["run"] for s in runs[1:]]


def gitlab_steps() -> list[str]:
    job = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())["frames-nightly"]
    assert any("glab" in line for line in job["before_script"])
    return list(job["script"])


FORGES = {
    "github": (github_steps, "gh",
               {"RUNNER_TEMP": "{tmp}/runner", "GITHUB_REF_NAME": "main", "FRAMES_REMOTE": "origin"}),
    "gitlab": (gitlab_steps, "glab",
               {"CI_DEFAULT_BRANCH": "main", "FRAMES_REMOTE": "origin", "FRAMES_PUSH_TOKEN": "t"}),
}


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_scheduled_job_opens_one_pull_request_and_updates_it(forge: str, evolved_template, tmp_path: Path) -> None:
    steps, cli, variables = FORGES[forge]
    template, menu = evolved_template
    root = tmp_path / "ws"
    shutil.copytree(template, root, symlinks=True)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(root, "remote", "add", "origin", str(bare))
    fakes = tmp_path / "bin"
    fakes.mkdir()
    (fakes / cli).write_text(FAKE_FORGE.format(python=sys.executable))
    (fakes / cli).chmod(0o755)
    (tmp_path / "runner").mkdir()
    env = {**os.environ, **{k: v.format(tmp=tmp_path) for k, v in variables.items()},
           "PATH": f"{fakes}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "FORGE_STATE": str(tmp_path / "prs.json"), "FORGE_LOG": str(tmp_path / "calls.jsonl")}

    def scheduled_run() -> None:
        for script in steps():
            done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=root, env=env, capture_output=True,
                                  text=True, timeout=300)
            assert done.returncode == 0, done.stdout + done.stderr

    def prs() -> list[dict]:
        return json.loads((tmp_path / "prs.json").read_text()) if (tmp_path / "prs.json").exists() else []

    branch = menu["branch"]
    scheduled_run()
    (pr,) = prs()
    assert pr["head"] == branch and pr["state"] == "open"
    assert pr["title"].startswith(f"frames: evolved skills from run {menu['run_id']}")
    assert "## frames candidate" in pr["body"] and "```diff" in pr["body"]
    assert remote_refs(bare)[f"refs/heads/{branch}"] == git(root, "rev-parse", branch)
    assert "refs/notes/frames" in remote_refs(bare)

    scheduled_run()
    (pr,) = prs()
    assert pr["edits"] == 1
    assert [r for r in remote_refs(bare) if r.startswith("refs/heads/frames/")] == [f"refs/heads/{branch}"]

    closed = [{**pr, "state": "closed"}]
    (tmp_path / "prs.json").write_text(json.dumps(closed))
    git(bare, "update-ref", "-d", f"refs/heads/{branch}")
    scheduled_run()
    assert prs() == closed
    assert f"refs/heads/{branch}" not in remote_refs(bare)
