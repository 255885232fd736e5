"""Git refusing or dying around frames' commits on the user's branch: hooks, signing, locks, sparse checkouts, kill
-9 (issue 29).

Each trial removes the template's skills (committed), so `frames coldstart` has six skills to write
and commit, then puts git in a hostile state. After the command, the state is taken away again and
the user's next `frames coldstart` must exit 0 with skills/ committed and clean: a refused commit
leaves nothing written or staged, a killed one is finished or undone by the next run.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from hostile.harness import Trial, git, write

Step = Callable[[Path], None]
NORMAL = (("coldstart",), ("validate",))
FAIL = "#!/bin/sh\necho 'policy check failed: see CONTRIBUTING' >&2\nexit 1\n"
#: A journal left by no frames run: it names a file outside the workspace to delete and one to restore.
JOURNAL_OUTSIDE = (
    '{"kind": "begin", "version": 1, "command": "coldstart", "head": null}\n'
    '{"kind": "touch", "path": "../../outside-victim.txt", "copy": null}\n'
    '{"kind": "touch", "path": "/etc/hostname", "copy": "0"}\n'
)


def _without_skills(root: Path) -> None:
    shutil.rmtree(root / "skills")
    git(root, "add", "-A", "skills")
    git(root, "commit", "-q", "-m", "no skills yet")


def _hook(name: str, text: str, folder: str = ".git/hooks") -> Step:
    def make(root: Path) -> None:
        path = root / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
    return make


def _git_config(*pairs: tuple[str, str]) -> Step:
    return lambda root: [git(root, "config", k, v) for k, v in pairs] and None


def _touch(rel: str, text: str = "") -> Step:
    return lambda root: write(root, rel, text)


def _then(*steps: Step) -> Step:
    return lambda root: [step(root) for step in steps] and None


def _remove(*rels: str) -> Step:
    def undo(root: Path) -> None:
        for rel in rels:
            path = root / rel
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    return undo


def _wait_for(rel: str, seconds: float = 20) -> Step:
    """An undo step: wait until git, orphaned by the kill, has finished (its hook writes `rel`)."""
    def wait(root: Path) -> None:
        deadline = time.monotonic() + seconds
        while not (root.parent / rel).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
    return wait


def _big_policy(sections: int) -> Step:
    text = "# Big policy\n\n" + "".join(f"## Rule {i}\n\nCheck field {i} of the reservation before acting on it.\n\n"
                                        for i in range(sections))
    return lambda root: (write(root, "policies/big.md", text), git(root, "add", "policies"),
                         git(root, "commit", "-q", "-m", "big policy")) and None


def trial(name: str, setup: Step, undo: Step, *, command: tuple[str, ...] = ("coldstart",), **kw: object) -> Trial:
    """A git-state trial: the skills removed, then `setup`; `undo` takes the state away."""
    return Trial(
        f"git-{name}",
        "git",
        _then(_without_skills, setup),
        (command,),
        undo=undo,
        normal=NORMAL,
        clean_skills=True,
        **kw,
    )  # type: ignore[arg-type]


def trials() -> list[Trial]:
    """Hooks, signing, locks, sparse checkouts, operations in progress, kills, many sections."""
    hooks = ".git/hooks"
    slow_hook = "#!/bin/sh\ntouch ../in-hook\nsleep 2\n{end}\ntouch ../hook-done\n{result}\n"
    out = [
        trial("pre-commit-fails", _hook("pre-commit", FAIL), _remove(f"{hooks}/pre-commit")),
        trial("commit-msg-fails", _hook("commit-msg", FAIL), _remove(f"{hooks}/commit-msg")),
        trial("prepare-commit-msg-fails", _hook("prepare-commit-msg", FAIL), _remove(f"{hooks}/prepare-commit-msg")),
        trial(
            "hook-edits-then-fails",
            _hook(
                "pre-commit",
                "#!/bin/sh\nfor f in $(git diff --cached --name-only); do echo junk >> \"$f\"; done\nexit 1\n",
            ),
            _remove(f"{hooks}/pre-commit"),
        ),
        trial(
            "hook-reformats-and-passes",
            _hook(
                "pre-commit",
                "#!/bin/sh\nfor f in $(git diff --cached --name-only); do printf '\\n' >> \"$f\"; git add \"$f\"; "
                "done\n",
            ),
            _remove(f"{hooks}/pre-commit"),
        ),
        trial(
            "hooks-path-fails",
            _then(_hook("pre-commit", FAIL, "hooks-elsewhere"), _git_config(("core.hooksPath", "hooks-elsewhere"))),
            _then(_remove("hooks-elsewhere"), lambda r: git(r, "config", "--unset", "core.hooksPath") and None),
        ),
        trial(
            "gpgsign-no-program",
            _git_config(("commit.gpgsign", "true"), ("gpg.program", "/nonexistent/gpg")),
            _git_config(("commit.gpgsign", "false")),
        ),
        trial(
            "gpgsign-ssh-no-key",
            _git_config(("commit.gpgsign", "true"), ("gpg.format", "ssh"), ("user.signingkey", "/nonexistent/key.pub")),
            _git_config(("commit.gpgsign", "false")),
        ),
        trial("index-lock-stale", _touch(".git/index.lock"), _remove(".git/index.lock")),
        trial("branch-lock-stale", _touch(".git/refs/heads/main.lock"), _remove(".git/refs/heads/main.lock")),
        trial("head-lock-stale", _touch(".git/HEAD.lock"), _remove(".git/HEAD.lock")),
        trial(
            "index-lock-during-commit",
            _hook("pre-commit", "#!/bin/sh\ntouch .git/index.lock\nexit 0\n"),
            _remove(f"{hooks}/pre-commit", ".git/index.lock"),
        ),
        trial(
            "sparse-cone",
            lambda r: git(r, "sparse-checkout", "set", "policies") and None,
            lambda r: git(r, "sparse-checkout", "disable") and None,
        ),
        trial(
            "sparse-no-cone",
            lambda r: git(r, "sparse-checkout", "set", "--no-cone", "/*", "!/skills/") and None,
            lambda r: git(r, "sparse-checkout", "disable") and None,
        ),
        trial(
            "mid-merge", lambda r: write(r, ".git/MERGE_HEAD", git(r, "rev-parse", "HEAD")), _remove(".git/MERGE_HEAD")
        ),
        trial("mid-rebase", _touch(".git/rebase-merge/head-name", "refs/heads/main\n"), _remove(".git/rebase-merge")),
        trial(
            "mid-cherry-pick",
            lambda r: write(r, ".git/CHERRY_PICK_HEAD", git(r, "rev-parse", "HEAD")),
            _remove(".git/CHERRY_PICK_HEAD"),
        ),
        trial("mid-bisect", _touch(".git/BISECT_LOG", "git bisect start\n"), _remove(".git/BISECT_LOG")),
        trial("detached-head", lambda r: git(r, "checkout", "-q", "--detach") and None, lambda r: None),
        trial("corrupt-pending-journal", _touch(".frames/pending-commit/journal.jsonl", "{not json\n"), lambda r: None),
        trial(
            "pending-journal-other-version",
            _touch(".frames/pending-commit/journal.jsonl", '{"kind": "begin", "version": 99}\n'),
            lambda r: None,
        ),
        trial(
            "kill-during-commit",
            _hook("pre-commit", slow_hook.format(end="", result="exit 0")),
            _then(_wait_for("hook-done"), _remove(f"{hooks}/pre-commit")),
            kill_on="in-hook",
        ),
        trial(
            "kill-during-commit-then-refused",
            _hook("pre-commit", slow_hook.format(end="", result="exit 1")),
            _then(_wait_for("hook-done"), _remove(f"{hooks}/pre-commit")),
            kill_on="in-hook",
        ),
        trial(
            "adopt-hook-refuses",
            _then(
                _hook("pre-commit", FAIL),
                _touch(
                    "../library/travel-helper/SKILL.md",
                    "---\nname: travel-helper\ndescription: Book trains before flights on short trips.\n---\nBody.\n",
                ),
            ),
            _remove(f"{hooks}/pre-commit"),
            command=("adopt", "../library"),
        ),
        trial(
            "adopt-killed-in-commit",
            _then(
                _hook("pre-commit", slow_hook.format(end="", result="exit 0")),
                _touch(
                    "../library/travel-helper/SKILL.md",
                    "---\nname: travel-helper\ndescription: Book trains before flights on short trips.\n---\nBody.\n",
                ),
            ),
            _then(_wait_for("hook-done"), _remove(f"{hooks}/pre-commit")),
            command=("adopt", "../library"),
            kill_on="in-hook",
        ),
        trial("pending-commit-is-a-file", _touch(".frames/pending-commit", "not a folder"), lambda r: None),
        trial(
            "pending-journal-names-outside",
            _touch(".frames/pending-commit/journal.jsonl", JOURNAL_OUTSIDE),
            lambda r: None,
        ),
        trial(
            "skills-symlink-outside",
            lambda r: (r.parent / "outside").mkdir(exist_ok=True) or (r / "skills").symlink_to(r.parent / "outside"),
            _remove("skills"),
        ),
        trial("unborn-branch", lambda r: git(r, "symbolic-ref", "HEAD", "refs/heads/fresh") and None, lambda r: None),
        trial("sections-10000", _big_policy(10_000), lambda r: None),
    ]
    out += [trial(f"kill-while-writing-{t}s", _big_policy(2000), lambda r: None, kill_after=t)
            for t in (2.0, 4.0, 6.0, 9.0)]
    return out
