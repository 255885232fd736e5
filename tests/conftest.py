"""Shared fixtures. Tests are offline: litellm must never fetch its price table."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import GitRepo, init_git_repo
from helpers.review_world import copy_world, make_world

from frames_cli.evolution.state.records import RunState

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# The terminal settings rich reads from the environment, as a CI runner or a developer's shell may
# set them: FORCE_COLOR colours every error line the tests compare, COLUMNS narrows every table and
# TERM=dumb hides progress bars. Tests that need a terminal set what they need themselves.
for _name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES", "TERM"):
    os.environ.pop(_name, None)

# A shell starts a background job (`cmd &`, some CI runners) with SIGINT ignored, and Python then
# installs no KeyboardInterrupt handler; the Ctrl-C tests expect the one a terminal gives.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def new_git_repo(root: Path) -> GitRepo:
    """Make the `git_repo` repository at `root` (a folder that does not exist yet)."""
    repo = init_git_repo(root)
    repo.write("README.md", "readme\n")
    repo.write("skills/alpha/SKILL.md", "---\nname: alpha\n---\nAlpha body.\n")
    repo.write("skills/beta/SKILL.md", "---\nname: beta\n---\nBeta body.\n")
    repo.write("skills/beta/scripts/run.sh", "#!/bin/sh\necho hi\n").chmod(0o755)
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "initial skills")
    return repo


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    """`skills/alpha/SKILL.md`, `skills/beta/SKILL.md`, an executable `skills/beta/scripts/run.sh`
    and `README.md`, committed on `main` by a repository-local identity."""
    return new_git_repo(tmp_path / "repo")


@pytest.fixture(scope="session")
def git_repo_factory():
    """`new_git_repo`, for fixtures wider than one test (build once, copy per test)."""
    return new_git_repo


# --- frames-sim workspaces (model layer and simulator tests) ---------------------------------------

SIM_CASES = """\
- id: cancel-1
  category: cancel
  source: {kind: manual, ref: fixture}
  created: "2026-11-29"
  task:
    input: {text: "Cancel my basic economy reservation ABC123, booked three days ago."}
    answer_format: "{actions: [tool calls]}"
    expected: {actions: [{name: get_reservation_details, arguments: {reservation_id: ABC123}}]}
    check: {kind: set, field: actions}
  diagnosis:
    evidence: ["Basic economy reservations can be cancelled only within 24 hours of booking."]
- id: bags-1
  category: baggage
  source: {kind: manual, ref: fixture}
  created: "2026-11-29"
  task:
    input: {text: "I am a silver member flying economy with one companion. How many free checked bags do we get?"}
    answer_format: "a number"
    expected: "4"
    check: {kind: exact}
  diagnosis:
    evidence: ["Silver members get 2 free checked bags per passenger in economy."]
- id: refund-1
  category: refund
  source: {kind: manual, ref: fixture}
  created: "2026-11-29"
  task:
    input: {text: "My flight was delayed by one hour. Can I get compensation?"}
    answer_format: "yes or no"
    expected: "no"
    check: {kind: exact}
  diagnosis:
    evidence: ["Offer compensation for delays only when the delay is longer than three hours."]
"""


@dataclass
class SimWorkspace:
    """A temporary frames workspace whose models are all `frames-sim/<role>`, with three cases.

    Attributes:
        workspace: the Workspace (frames.yaml, cases/fixture.yaml).
        config: its FramesConfig with tiny backoffs, so retry tests take milliseconds.
        run_dir: a run folder for ledger and audit log.
    """

    workspace: object
    config: object
    run_dir: Path

    def configured(self, **sections: dict) -> object:
        """`config` with fields replaced per section, e.g. `configured(llm={"concurrency": 2})`;
        the key `faults` means `simulator.faults`."""
        import dataclasses

        config = self.config
        for section, changes in sections.items():
            if section == "faults":
                faults = dataclasses.replace(config.simulator.faults, **changes)
                config = dataclasses.replace(config, simulator=dataclasses.replace(config.simulator, faults=faults))
            else:
                config = dataclasses.replace(config,
                                             **{section: dataclasses.replace(getattr(config, section), **changes)})
        return config


@pytest.fixture
def sim_workspace(tmp_path: Path) -> SimWorkspace:
    from frames_cli.workspace.config import FramesConfig, ModelsConfig, with_overrides
    from frames_cli.workspace.layout import Workspace

    root = tmp_path / "ws"
    (root / "cases").mkdir(parents=True)
    (root / "frames.yaml").write_text("version: 1\n")
    (root / "cases" / "fixture.yaml").write_text(SIM_CASES)
    roles = ("executor", "diagnoser", "rewriter", "generator", "judge", "coldstart")
    config = FramesConfig(models=ModelsConfig(**{r: f"frames-sim/{r}" for r in roles}))
    config = with_overrides(config, "llm", backoff_base_s=0.001, backoff_max_s=0.005, concurrency=4)
    return SimWorkspace(Workspace.open(root), config, root / ".frames" / "runs" / "test-run")


POLICY_FIXTURES = Path(__file__).parent / "fixtures" / "policies"


@pytest.fixture
def policy_workspace(tmp_path: Path):
    """Factory: a git repository with `frames.yaml` (from `config_text`) and `policies/` holding the
    named files of tests/fixtures/policies/ (or `policies/airline.md`, the bundled one); returns the root."""

    def make(*names: str, config_text: str = "version: 1\n") -> Path:
        root = tmp_path / "ws"
        (root / "policies").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        (root / "frames.yaml").write_text(config_text)
        for name in names:
            src = Path(__file__).parents[1] / "policies" / name if name == "airline.md" else POLICY_FIXTURES / name
            (root / "policies" / name).write_bytes(src.read_bytes())
        return root

    return make


@pytest.fixture(scope="module")
def world_template(git_repo_factory, tmp_path_factory) -> tuple[GitRepo, RunState]:
    """The synthetic finished run of helpers/review_world.py: (its repository, its state), built once
    per module; each test gets its own copy (`world`)."""
    repo = git_repo_factory(tmp_path_factory.mktemp("world") / "repo")
    return repo, make_world(repo)


@pytest.fixture
def world(world_template, tmp_path: Path) -> GitRepo:
    """A private copy of `world_template`'s workspace, with `state` (the saved RunState) attached."""
    return copy_world(*world_template, tmp_path / "world")
