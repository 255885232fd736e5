"""The simulator's world: the workspace's cases, indexed by id, read once per client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace


@dataclass
class SimWorld:
    """What the simulated models "know": every case with its expected answer and evidence.

    The executor simulator finds its case by the `Case id:` line of the prompt; the judge grades
    against `task.expected`. The world is read once and shared by every call of a client.
    """

    cases: dict[str, Case] = field(default_factory=dict)

    @classmethod
    def from_cases(cls, cases: Iterable[Case]) -> SimWorld:
        """A world of `cases` (a later duplicate id wins)."""
        return cls({c.id: c for c in cases})

    @classmethod
    def from_workspace(cls, workspace: Workspace, config: FramesConfig) -> SimWorld:
        """The cases matched by `eval.cases` (a glob relative to the workspace root).

        Raises:
            InputError: a case file is malformed (path and line in the message).
        """
        from frames_cli.formats.case import case_files, load_cases

        return cls.from_cases(load_cases(case_files(workspace.root, config.eval.cases)))

    def get(self, case_id: str | None) -> Case | None:
        """The case with `case_id`, or None (unknown or no id)."""
        return self.cases.get(case_id) if case_id else None
