"""A small airline workspace in a real git repo, with the simulator for every role (evolution tests),
and `frames evolve` run on it through the CLI.

S0's skills state about half of the rules the cases turn on, so the simulated executor fails the
other half and evolution has something to find. One rule of `cancel-flight` is protected.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml
from helpers import GitRepo as EvolveRepo, init_git_repo
from typer.testing import CliRunner

from frames_cli.commands.app import app

SKILLS = {
    "cancel-flight": (
        "Cancel a reservation when the airline policy allows it.",
        "# Cancel flight\n\n<!-- frames:protected -->\nNever cancel a flight that has already been flown.\n"
        "<!-- /frames:protected -->\n\n- Cancel within 24 hours of booking for a full refund.\n",
    ),
    "baggage": (
        "Free and paid checked bags by membership tier and cabin.",
        "# Baggage\n\n- Gold members get three free checked bags.\n- Each extra bag costs 50 dollars.\n",
    ),
    "compensation": (
        "Refunds, certificates and compensation after delays or cancellations.",
        "# Compensation\n\n- Refunds go back to the original payment method within 5 to 7 business days.\n",
    ),
}

#: (category, evidence sentence, question) — two cases per rule, answers "yes" / "no".
RULES = [
    ("cancel", "Never cancel a flight that has already been flown.", "Can I cancel a flight I already flew yesterday?",
     "no"),
    ("cancel", "Cancel within 24 hours of booking for a full refund.",
     "I booked two hours ago, can I cancel for a full refund?", "yes"),
    ("cancel", "Basic economy tickets can be cancelled only with travel insurance.",
     "Can I cancel my basic economy ticket without insurance?", "no"),
    ("cancel", "A flight cancelled by the airline may always be cancelled by the customer.",
     "The airline cancelled my flight, may I cancel my reservation?", "yes"),
    ("baggage", "Gold members get three free checked bags.", "As a gold member, is my third checked bag free?", "yes"),
    ("baggage", "Each extra bag costs 50 dollars.", "Does an extra bag cost 50 dollars?", "yes"),
    ("baggage", "Silver members get two free checked bags.", "As a silver member, is my third checked bag free?", "no"),
    ("baggage", "Regular members in economy get one free checked bag.",
     "As a regular member in economy, is my first checked bag free?", "yes"),
    ("compensation", "Refunds go back to the original payment method within 5 to 7 business days.",
     "Will my refund go to my original card?", "yes"),
    ("compensation", "Compensation certificates are offered only to gold members or insured passengers.",
     "I am a regular member without insurance, do I get a compensation certificate?", "no"),
    ("compensation", "Never offer compensation for a delay under three hours.",
     "My flight was delayed two hours, do I get compensation?", "no"),
]

#: A policy file stating the rules above, by section (retrieval and guard tests).
POLICY = """# Airline Policy

Agents help customers with bookings, cancellations and refunds.

## Cancellation

A reservation may be cancelled within 24 hours of booking for a full refund.
Basic economy tickets can be cancelled only with travel insurance.

A flight that has already been flown can never be cancelled.

## Baggage

Gold members get three free checked bags.
Silver members get two free checked bags.
Each extra bag costs 50 dollars.

## Compensation

Compensation certificates are offered only to gold members or insured passengers.
Never offer compensation for a delay under three hours.
"""

CONFIG = {
    "models": {role: f"frames-sim/{role}" for role in ("executor", "diagnoser", "rewriter", "judge")},
    "llm": {"concurrency": 8, "max_retries": 1, "backoff_base_s": 0.0},
    "evolution": {
        "max_rounds": 3, "patience": 2, "diagnosers": 3, "batch_size": 4, "vote_threshold": 2,
        "tolerance": 0.05, "anchor_cases": 2, "rewrite_retries": 1, "seed": 1,
        # Two cases per rule are too few to hold any out: these tests gate in-sample, on the
        # paper's single set E (held-out sets: tests/evolution/test_splits.py).
        "split": {"selection": 0, "test": 0},
        # On E every case is diagnosed, so no gain can be tested (evolution/decide/recommend.py): the
        # paper's rule makes the highest-rate member the best one and the review branch.
        "recommend_alpha": 1.0,
    },
    "simulator": {"seed": 3},
}


def skill_text(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def make_cases() -> list[dict]:
    cases = []
    for i, (category, evidence, question, answer) in enumerate(RULES):
        for j, prefix in enumerate(("", "Quick question: ")):
            cases.append(
                {
                    "id": f"{category}-{i}-{j}",
                    "category": category,
                    "source": {"kind": "test", "ref": f"rule {i}"},
                    "created": "2026-11-29",
                    "task": {
                        "input": {"text": prefix + question},
                        "expected": answer,
                        "check": {"kind": "exact"},
                        "answer_format": "yes or no",
                    },
                    "diagnosis": {"symptom": "wrong answer", "evidence": [evidence]},
                }
            )
    return cases


def write_workspace(root: Path, config: dict | None = None, cases: list[dict] | None = None) -> None:
    """Write the workspace's files (skills, cases, frames.yaml, .gitignore) into the folder `root`."""
    for name, (description, body) in SKILLS.items():
        path = root / "skills" / name / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(skill_text(name, description, body))
    (root / "cases").mkdir()
    (root / "cases" / "airline.yaml").write_text(yaml.safe_dump(cases or make_cases(), sort_keys=False))
    (root / "frames.yaml").write_text(yaml.safe_dump(config or CONFIG, sort_keys=False))
    (root / ".gitignore").write_text(".frames/\n")


def build_repo(root: Path, config: dict | None = None, cases: list[dict] | None = None) -> EvolveRepo:
    """Write and commit the workspace at `root` (branch main)."""
    repo = init_git_repo(root)
    write_workspace(root, config, cases)
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "airline skills")
    return repo


def one_round_config() -> dict:
    """CONFIG with one round at most."""
    config = copy.deepcopy(CONFIG)
    config["evolution"]["max_rounds"] = 1
    return config


def run_cli(repo: EvolveRepo, *args: str):
    """`frames evolve ARGS` on `repo`, through typer's CliRunner."""
    return CliRunner().invoke(app, ["evolve", "--repo", str(repo.root), *args])


def evolve(root: Path, *args: str) -> dict:
    """The deploy menu `frames evolve --json ARGS` prints for the workspace at `root` (exit 0 asserted)."""
    result = CliRunner().invoke(app, ["evolve", "--repo", str(root), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def run_folder(root: Path, run_id: str) -> Path:
    """The folder of run `run_id` in the workspace at `root`."""
    return root / ".frames" / "runs" / run_id
