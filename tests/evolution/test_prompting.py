"""Skill blocks in diagnoser and rewriter prompts follow the convention the simulator parses."""

from __future__ import annotations

from frames_cli.evolution.propose.prompting import skill_block, skill_blocks
from frames_cli.formats.skill import Skill
from frames_cli.sim import reading


def test_blocks_round_trip_through_the_simulators_reader():
    quoted = Skill(name="cancel-flight", description='Cancel a "basic" fare.\nOnly then.',
                   body="# Cancel\n\n- Rule one.\n\n")
    plain = Skill(name="baggage", description="Bags.", body="- Two bags.\n")
    blocks = reading.skill_blocks("Skills:\n\n" + skill_blocks([quoted, plain]))
    assert [(b.name, b.attrs["description"], b.text) for b in blocks] == [
        ("cancel-flight", "Cancel a 'basic' fare. Only then.", "# Cancel\n\n- Rule one."),
        ("baggage", "Bags.", "- Two bags."),
    ]
    (target,) = reading.skill_blocks(skill_block(plain, target=True))
    assert target.attrs == {"name": "baggage", "target": "true"}
