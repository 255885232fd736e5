"""What one evolve run knows of its candidates, read or built once: their skills/ files (from their
commits), their skill sets, their kept evaluations and each round child's file changes.

The store only reads and remembers; it never scores, gates or writes. The writer of an evaluation
(evolution/round/evaluations.EvaluationLog.keep) hands it the value it wrote, so what is remembered
is what is on disk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from frames_cli.evolution.propose.rewrite import plan_changes
from frames_cli.evolution.round.context import Evaluation
from frames_cli.evolution.state.run_ids import BASE_ID

if TYPE_CHECKING:
    from frames_cli.evolution.round.record import RoundRecord
    from frames_cli.evolution.state.records import RunState
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.gitstore.store import GitStore


class CandidateStore:
    """The run's candidates as read once: files, skill sets, evaluations and round children's changes.

    Args:
        store: the workspace's git store; a candidate's files are read from its commit.
        state: the run's record (a candidate's commit is looked up there when first needed).
        evals_dir: the folder of the kept evaluations, `<cid>.json` each.
        base_files: `skills/` files of the base commit (path -> bytes), S0's files.
    """

    def __init__(self, store: GitStore, state: RunState, evals_dir: Path, base_files: dict[str, bytes]):
        self._git = store
        self._state = state
        self._evals_dir = evals_dir
        self.base_files = base_files
        self._files: dict[str, dict[str, bytes]] = {}
        self._skills: dict[str, SkillSet] = {}
        self._evaluations: dict[str, Evaluation] = {}
        self._changes: dict[tuple[int, str], dict[str, bytes]] = {}

    def has_evaluation(self, name: str) -> bool:
        """Whether an evaluation named `name` (a candidate id, or `<id>-rest`, `<id>-fresh`, …) is kept."""
        return name in self._evaluations or (self._evals_dir / f"{name}.json").is_file()

    def evaluation(self, name: str) -> Evaluation:
        """The evaluation kept as `<evals_dir>/<name>.json`, read from disk the first time only.
        The value is shared: change a copy and keep that (`EvaluationLog.keep`).

        Raises:
            FileNotFoundError: no evaluation of that name was kept.
        """
        if name not in self._evaluations:
            data = json.loads((self._evals_dir / f"{name}.json").read_text(encoding="utf-8"))
            self._evaluations[name] = Evaluation(**data)
        return self._evaluations[name]

    def remember(self, name: str, evaluation: Evaluation) -> None:
        """Take `evaluation` as the one kept under `name` (called by its writer, after writing it)."""
        self._evaluations[name] = evaluation

    def files(self, cid: str) -> dict[str, bytes]:
        """The skills/ files of candidate `cid` (path -> bytes), read from its commit the first time only."""
        if cid == BASE_ID:
            return self.base_files
        if cid not in self._files:
            self._files[cid] = self._git.read_files(self._state.candidate(cid).commit)
        return self._files[cid]

    def skill_set(self, cid: str, files: Mapping[str, bytes]) -> SkillSet:
        """The loadable skills of candidate `cid` from its skills/ `files` (path -> bytes), built once per
        candidate; skills that do not load are left out, as the driver reported at start."""
        from frames_cli.formats.skill_set import SkillSet

        if cid not in self._skills:
            # A base skill that does not load is left out of every candidate (the driver says so
            # before the run starts) and stays in their commits as it was.
            self._skills[cid] = SkillSet.load_valid(files)[0]
        return self._skills[cid]

    def parent_skills(self, r: RoundRecord) -> SkillSet:
        """The skill set of round `r`'s parent candidate."""
        return self.skill_set(r.parent, self.files(r.parent))

    def child_changes(self, r: RoundRecord) -> dict[str, bytes]:
        """Round `r`'s child's file changes (path -> bytes), planned from the round's rewrite outcomes
        once; only skills named by the round's vote may appear. Ask only once the rewrites are done."""
        key = (r.round, r.parent)
        if key not in self._changes:
            self._changes[key] = plan_changes(self.parent_skills(r), r.outcomes, {b.skill for b in r.blueprints})
        return self._changes[key]
