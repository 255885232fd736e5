"""Fixtures for the ingest tests: a workspace holding the tau2 airline policy and skills cut from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from frames_cli.formats.policy import read_policy
from frames_cli.formats.skill import BackLink, Skill
from frames_cli.formats.skill_file import render_skill

DATA = Path(__file__).parent / "data"

# Skills cut from these top-level sections of the airline policy, as coldstart would (one per section).
SKILLS = {
    "book-flight": ("Book flight",
                    "Book a new reservation: trip details, cabin, passengers, payment, baggage, insurance."),
    "modify-flight": ("Modify flight",
                      "Change flights, cabin, baggage, insurance or passengers of an existing reservation."),
    "cancel-flight": ("Cancel flight", "Cancel a reservation: who may cancel, when it is allowed, and the refund."),
    "compensation": ("Refunds and Compensation",
                     "Decide whether to offer a certificate as compensation for cancelled or delayed flights."),
}


def write_skills(root: Path) -> None:
    """Write one SKILL.md per entry of SKILLS with a back-link to its policy section (span and sha256)."""
    doc = read_policy(root / "policies" / "airline.md", "policies/airline.md")
    by_title = {s.title: s for s in doc.root.children}
    for name, (title, description) in SKILLS.items():
        section = by_title[title]
        body = "\n".join(doc.lines[section.start : section.end]).strip() + "\n"
        skill = Skill(name=name, description=description, body=body, metadata={})
        skill.backlinks = [BackLink("policies/airline.md", f"Airline Agent Policy > {title}", section.start,
                                    section.end,
                                    doc.sha256(section.start, section.end))]
        folder = root / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(render_skill(skill), encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A frames workspace: frames.yaml with the generator simulator, the airline policy, four skills."""
    root = tmp_path / "ws"
    (root / "policies").mkdir(parents=True)
    (root / "cases").mkdir()
    shutil.copy(DATA / "policies" / "airline.md", root / "policies" / "airline.md")
    (root / "frames.yaml").write_text("models:\n  generator: frames-sim/generator\n", encoding="utf-8")
    write_skills(root)
    return root
