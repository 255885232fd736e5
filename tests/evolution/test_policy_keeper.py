"""The policy keeper reads a short sentence with the one before it on its line (evolution/propose/policy_keeper.py).

Invariant: "... send the message 'YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.' to
the user." is one kept rule; a rewrite that cuts its short tail ("PLEASE HOLD ON.' to the user.",
two content words, too short to be kept alone) changes it and is refused. A heading stays no rule.
"""

from __future__ import annotations

from frames_cli.evolution.propose.consensus import Blueprint
from frames_cli.evolution.propose.policy_keeper import PolicyKeeper
from frames_cli.formats.skill import text_sha256
from frames_cli.formats.skill_set import SkillSet

RULE = ("To transfer, first call transfer_to_human_agents, then send the message 'YOU ARE BEING TRANSFERRED. PLEASE "
        "HOLD ON.' to the user.")
POLICY = f"## Transfer\n\n{RULE}\n"


def _s0() -> SkillSet:
    span = POLICY.rstrip("\n")
    link = f"policies/p.md#L1-L3 sha256:{text_sha256(span)} Policy > Transfer"
    text = (f"---\nname: transfer\ndescription: Transfer to a human.\nmetadata:\n  frames-backlinks: \"{link}\"\n---\n"
            f"{POLICY}")
    return SkillSet.from_files({"skills/transfer/SKILL.md": text.encode()})


def test_a_short_tail_is_read_with_its_sentence_and_cutting_it_is_refused() -> None:
    s0 = _s0()
    keeper = PolicyKeeper.build(s0, {"policies/p.md": POLICY.encode()})
    assert [p.text for p in keeper.kept["transfer"]] == [RULE]
    cut = POLICY.replace(" PLEASE HOLD ON.' to the user.", "")
    errors, changes = keeper.check(s0["transfer"], cut, Blueprint("transfer", False, "", (), 2))
    assert changes == [] and len(errors) == 1 and "policy sentence" in errors[0].message
    assert keeper.check(s0["transfer"], POLICY + "- Say why.\n", Blueprint("transfer", False, "", (), 2)) == ([], [])
