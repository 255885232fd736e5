"""Prompt conventions shared by the prompt builders (evolution/) and the simulator that parses them (sim/).

Kept apart from both so that neither package imports the other (docs/ARCHITECTURE.md, prompt conventions).
"""

from __future__ import annotations

#: The tags that delimit the diagnoser's retrieved context; the simulator strips this block.
RETRIEVED_OPEN, RETRIEVED_CLOSE = "<retrieved>", "</retrieved>"
#: The tags of the diagnoser's block of changes this run tried and saw fail (evolution/propose/lessons.py).
TRIED_OPEN, TRIED_CLOSE = "<tried>", "</tried>"
#: The change of a cost-directed blueprint (evolution/propose/cost.py), which the simulated rewriter carries out.
CONDENSE = (
    "Condense this skill: state the same rules in fewer words. Keep every rule, and keep every sentence "
    "quoted from the policy word for word; remove only repetition, filler and formatting that no rule needs."
)
#: The heading of the rewriter retry's ```json block of errors (evolution/propose/rewrite_errors.py),
#: whose `kind`, `line` and `text` the simulated rewriter acts on.
ERRORS_HEADING = "Errors"
