"""One hostile input tried in a fresh copy of a small workspace, as real processes, and what it did.

A `Trial` sets up its input (a file, a setting, a git state, a model's answer through the spool
provider), runs its frames commands, takes the input away again (`undo`) and runs the normal
commands a user would run next. Judged per trial:

- traceback: a Python traceback in any output;
- hang: a command that did not end within `TIMEOUT` seconds;
- wrote: a command that failed and left something behind (files under the workspace and beside
  it, refs, HEAD, the index; outside the file family, `.frames/` and `refs/frames/` are a run's
  own state and are left out);
- stranded: after the normal commands, a normal command failed, a change is still pending
  (`.frames/pending-commit`), or skills/ is not clean in git once the normal run committed;
- leak: any output, or anything frames committed, holds a control or invisible character, a
  planted credential, or a planted forged line.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRAMES = [sys.executable, "-m", "frames_cli"]
SKILLS = ("book-flight", "cancel-flight", "domain-basic")
TIMEOUT = 150
CONFIG = """version: 1
models:
  executor: frames-sim/executor
  diagnoser: frames-sim/diagnoser
  rewriter: frames-sim/rewriter
  judge: frames-sim/judge
evolution:
  max_rounds: 1
  patience: 1
{extra}"""
#: Planted in hostile texts: seen at the start of an output line, it is a forged line.
FORGED = "FORGED-LINE-29"
SECRETS = {
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws-secret": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "google": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "openai-project": "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4",
}
_SECRET_CORES = [v.split("= ")[-1] for v in SECRETS.values()]

Step = Callable[[Path], None]


def nothing(_root: Path) -> None:
    """A setup or undo that does nothing."""


@dataclass(frozen=True)
class Trial:
    """One hostile input.

    Attributes:
        name, family: shown in the table ("file", "bounds", "answer", "git").
        setup: makes the input in the workspace folder `root`.
        commands: frames commands run on it, in order (arguments after `frames`).
        where, line: the file an exit-2 message must name, and whether with a line ("" = unchecked).
        commit: commit skills/ and policies/ after `setup` (evolve reads them at the base).
        compare: validate's and evolve's verdicts are compared (the first two commands).
        answer: the text every spool request is answered with while the commands run (bytes as written).
        undo: takes the input away before the normal commands (default: the template's files back).
        normal: the commands a user runs next; each must exit 0.
        kill_after: SIGKILL the first command this many seconds after it started, or once the file
            `kill_on` (relative to the workspace's parent) exists (None: never).
        clean_skills: after the normal commands, skills/ must be clean in git (they commit).
    """

    name: str
    family: str
    setup: Step = nothing
    commands: tuple[tuple[str, ...], ...] = (("validate",), ("evolve",))
    where: str = ""
    line: bool = True
    commit: bool = False
    compare: bool = False
    answer: bytes | None = None
    undo: Step | None = None
    normal: tuple[tuple[str, ...], ...] = (("validate",),)
    kill_after: float | None = None
    kill_on: str | None = None
    clean_skills: bool = False


@dataclass
class Outcome:
    """What one trial did (see the module docstring); `codes` are the commands' exit codes."""

    name: str
    family: str
    codes: list[int | None] = field(default_factory=list)
    located: bool = True
    wrote: bool = False
    traceback: bool = False
    hang: bool = False
    stranded: str = ""
    leak: str = ""
    message: str = ""
    left_out: bool = False
    compared: bool = False

    @property
    def disagree(self) -> bool:
        """validate and evolve (the first two commands of a `compare` trial) disagree on refusing
        the input (exit 2), unless evolve left a skill out."""
        return (
            self.compared
            and len(self.codes) >= 2
            and self.codes[0] is not None
            and (self.codes[0] == 2) != (self.codes[1] == 2)
            and not self.left_out
        )


def write(root: Path, rel: str, data: str | bytes) -> None:
    """Write `data` to `root/rel`, making folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def git(root: Path, *args: str, check: bool = False) -> str:
    """`git args` in `root`; stdout."""
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, errors="replace",
                          check=check).stdout


def template(folder: Path) -> Path:
    """The small workspace every trial starts from, committed on `main`: the bundled airline policy,
    three of its skills, eight of its cases, the simulator for every role, one round."""
    import yaml

    root = folder / "template" / "ws"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main", check=True)
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com"), ("commit.gpgsign", "false")):
        git(root, "config", key, value, check=True)
    shutil.copytree(ROOT / "policies", root / "policies")
    for name in SKILLS:
        shutil.copytree(ROOT / "skills" / name, root / "skills" / name)
    cases = []
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        cases += yaml.safe_load(path.read_text())
    (root / "cases").mkdir()
    (root / "cases" / "airline.yaml").write_text(yaml.safe_dump(cases[:8], sort_keys=False, allow_unicode=True))
    (root / "frames.yaml").write_text(CONFIG.format(extra=""))
    (root / ".gitignore").write_text(".frames/\n")
    git(root, "add", ".", check=True)
    git(root, "commit", "-q", "-m", "workspace", check=True)
    return root


def restore(template_root: Path) -> Step:
    """An undo: the template's frames.yaml, policies/, skills/ and cases/ back in the working tree,
    the input's files outside it and a `.frames` symlink gone (git and a real `.frames/` as the
    commands left them)."""

    def undo(root: Path) -> None:
        if (root / ".frames").is_symlink():
            (root / ".frames").unlink()
        for name in ("policies", "skills", "cases", "frames.yaml", "outside"):
            for base in (root, root.parent):
                path = base / name
                if path.is_symlink() or path.is_file():
                    path.unlink()
                elif path.is_dir():
                    shutil.rmtree(path)
        for name in ("policies", "skills", "cases"):
            shutil.copytree(template_root / name, root / name)
        shutil.copy(template_root / "frames.yaml", root / "frames.yaml")

    return undo


def snapshot(root: Path, *, state: bool = True) -> str:
    """A digest of everything a command could write: files (with symlink targets) under the
    workspace and beside it, git refs, HEAD and the index; `.frames/`, `refs/frames/` and frames'
    notes (a run's own state) only with `state`."""
    h = hashlib.sha256()
    for base in (root, root.parent / "outside"):
        if base.exists():
            _digest_files(h, base, root, state)
    listed = git(root, "for-each-ref")
    if not state:  # a run's candidates and notes are frames' own state, like `.frames/`
        listed = "\n".join(line for line in listed.splitlines() if "\trefs/frames/" not in line
                           and "\trefs/notes/frames" not in line)
    h.update(listed.encode())
    for args in (["rev-parse", "HEAD"], ["ls-files", "-s"]):
        h.update(git(root, *args).encode())
    return h.hexdigest()


def _digest_files(h: hashlib._Hash, base: Path, root: Path, state: bool) -> None:
    """Add to `h` every path under `base` (relative to the workspace's parent) with its symlink target
    or content; not `.git/`, nor `.frames/` without `state`."""
    for dirpath, dirnames, filenames in os.walk(base):
        rel = Path(dirpath).relative_to(root.parent)
        if rel.parts[:2] == (root.name, ".git") or (not state and rel.parts[:2] == (root.name, ".frames")):
            dirnames[:] = []
            continue
        for name in sorted(dirnames + filenames):
            if not state and rel == Path(root.name) and name == ".frames":
                continue
            path = Path(dirpath) / name
            h.update(str(rel / name).encode())
            if path.is_symlink():
                h.update(os.readlink(path).encode())
            elif path.is_file():
                h.update(hashlib.sha256(path.read_bytes()).digest())


def run(
    cmd: list[str], cwd: Path, kill_after: float | None = None, kill_on: Path | None = None
) -> tuple[int | None, str]:
    """Run `cmd`; (exit code, stdout + stderr). None is a hang (killed at TIMEOUT); -9 a planned
    kill (SIGKILL after `kill_after` seconds, or once the file `kill_on` exists)."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    if kill_after is not None or kill_on is not None:
        deadline = time.monotonic() + (kill_after if kill_after is not None else TIMEOUT)
        while proc.poll() is None and time.monotonic() < deadline and not (kill_on is not None and kill_on.exists()):
            time.sleep(0.02)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return None, out.decode("utf-8", "replace") + f"\n(timed out after {TIMEOUT} s)"
    return proc.returncode, out.decode("utf-8", "replace")


class Answerer:
    """Answers every spool request of a workspace with one text while a trial's commands run."""

    def __init__(self, root: Path, answer: bytes):
        self.folder = root / ".frames" / "spool"
        self.answer = answer
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Answerer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def _loop(self) -> None:
        while not self.stop.wait(0.05):
            for request in self.folder.glob("*.request.json") if self.folder.is_dir() else []:
                answer = request.with_name(request.name.replace(".request.json", ".answer.txt"))
                if not answer.exists():
                    tmp = answer.with_suffix(".tmp")
                    tmp.write_bytes(self.answer)
                    os.replace(tmp, answer)


def error_line(output: str, where: str = "") -> str:
    """The error line of a command's output that names `where`, else its first error line, else its last line."""
    errors = [line for line in output.splitlines() if ": error:" in line or line.startswith("error:")]
    return next((line for line in errors if where and where in line), errors[0] if errors
                else (output.strip().splitlines() or [""])[-1])


def leak_in(text: str) -> str:
    """What `text` (output or committed text) shows that it must not: a control or invisible
    character, a planted credential, a forged line; "" when nothing."""
    for ch in set(text):
        if ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Cs"):
            return f"U+{ord(ch):04X}"
    for core in _SECRET_CORES:
        if core in text:
            return f"credential {core[:8]}…"
    if any(line.lstrip().startswith((FORGED, f"error: {FORGED}")) for line in text.splitlines()):
        return "forged line"
    return ""


def committed_leak(root: Path, before: dict[str, str]) -> str:
    """A leak in what frames committed since `before` (ref → sha): new commits' messages and files."""
    for ref, sha in refs(root).items():
        if before.get(ref) == sha:
            continue
        for commit in git(root, "rev-list", sha, *[f"^{s}" for s in set(before.values())]).split():
            found = leak_in(git(root, "show", "--format=%B", "--no-color", "--no-ext-diff", "--text", commit))
            if found:
                return f"commit {commit[:8]}: {found}"
    return ""


def refs(root: Path) -> dict[str, str]:
    """{ref: sha} of the repository."""
    return {r: s for s, r in (line.split(" ", 1)
                              for line in git(root, "for-each-ref", "--format=%(objectname) %(refname)").splitlines())}


def try_trial(trial: Trial, template_root: Path, work: Path) -> Outcome:
    """Run `trial` in a fresh copy of the template under `work`; its Outcome."""
    case_dir = work / trial.name
    shutil.copytree(template_root.parent, case_dir, symlinks=True)
    root = case_dir / "ws"
    trial.setup(root)
    if trial.commit:
        git(root, "add", "-A", "skills", "policies")
        git(root, "commit", "-q", "-m", f"bad input {trial.name}")
    out = Outcome(trial.name, trial.family, compared=trial.compare)
    outputs: list[str] = []
    known = refs(root)
    runtime_state = trial.family != "file"
    for i, command in enumerate(trial.commands):
        before = snapshot(root, state=not runtime_state)
        kill = (trial.kill_after, case_dir / trial.kill_on if trial.kill_on else None) if i == 0 else (None, None)
        if trial.answer is not None:
            with Answerer(root, trial.answer):
                code, text = run([*FRAMES, *command], root, *kill)
        else:
            code, text = run([*FRAMES, *command], root, *kill)
        out.codes.append(code)
        outputs.append(text)
        changed = snapshot(root, state=not runtime_state) != before
        out.wrote |= code not in (0, -9) and changed
        out.hang |= code is None
    _judge_messages(trial, out, outputs)
    out.leak = next((found for found in map(leak_in, outputs) if found), "") or committed_leak(root, known)
    (trial.undo or restore(template_root))(root)
    for command in trial.normal:
        code, text = run([*FRAMES, *command], root)
        outputs.append(text)
        if code != 0 and not out.stranded:
            out.stranded = f"`frames {' '.join(command)}` exit {code}: {error_line(text)[:100]}"
        out.hang |= code is None
    if (root / ".frames" / "pending-commit").exists():
        out.stranded = out.stranded or "a change is still pending"
    if trial.clean_skills and git(root, "status", "--porcelain", "--untracked-files=all", "--", "skills").strip():
        out.stranded = out.stranded or "skills/ not clean in git after the normal run: " + " ".join(
            git(root, "status", "--porcelain", "--", "skills").split()[:4]
        )
    out.traceback = any("Traceback (most recent call last)" in text for text in outputs)
    out.leak = out.leak or next((found for found in map(leak_in, outputs[len(trial.commands):]) if found), "")
    shutil.rmtree(case_dir, ignore_errors=True)
    return out


def _judge_messages(trial: Trial, out: Outcome, outputs: list[str]) -> None:
    """`located` (every exit-2 message names `trial.where`, with a line when asked), `left_out`
    (evolve warned about the skill validate refused) and the message shown."""
    where = trial.where
    messages = [error_line(o, where) for c, o in zip(out.codes, outputs) if c == 2]

    def names(msg: str) -> bool:
        if where not in msg:
            return False
        return not trial.line or any(part.isdigit() for part in msg.split(where, 1)[1].split(":")[1:2])

    out.located = not where or not messages or all(names(m) for m in messages)
    if trial.compare and len(outputs) >= 2:
        out.left_out = out.codes[0] == 2 and out.codes[1] == 0 and where.startswith("skills") and any(
            "warning" in line and where in line for line in outputs[1].splitlines())
    failing = next((o for c, o in zip(out.codes, outputs) if c not in (0, None)), outputs[-1] if outputs else "")
    out.message = ("left out by evolve; " if out.left_out else "") + error_line(failing, where)
