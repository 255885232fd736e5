"""The Rewriter protocol: the seam between coldstart's deterministic cut and a model's rewrite."""

from __future__ import annotations

from typing import Protocol

from frames_cli.coldstart.neighbours import Neighbour
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.skill import Skill


class Rewriter(Protocol):
    """Turns verbatim coldstart skills into rewritten ones (built-in: `rewrite.ModelRewriter`).

    Contract:
        - The result has one entry per input pair, in the same order.
        - An entry is `(new skill, None)`, or `(the verbatim skill given, why the rewrite failed)`:
          a failed rewrite is a result, never an exception.
        - A new skill keeps the name and back-links of its verbatim skill (build it with
          `writer.make_skill(name, chunk, body, description, self.mode)`); inputs are not mutated.
        - `neighbours` maps a skill name to the skills of the whole set it could be mistaken for
          (`neighbours.closest`), which its description should set it apart from; absent names
          have none.

    Attributes:
        mode: recorded in each new skill's `frames-coldstart` ("model <model string>"), so a
            change of model regenerates the skills on the next run.
    """

    mode: str

    def __call__(
        self, items: list[tuple[Chunk, Skill]], neighbours: dict[str, list[Neighbour]] | None = None
    ) -> list[tuple[Skill, str | None]]: ...
