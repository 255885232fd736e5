"""The journal of a run's evaluations: each is written to `<evals_dir>/<name>.json` as soon as it
arrives, and the candidate store is handed what was written.

An evaluation is the record of paid model answers; it is kept the moment it exists (also in the
middle of a gate that draws more samples), so a killed run never pays for it again. It is the one
file a stage other than commit and attribute causes to be written, and only through `keep`.
"""

from __future__ import annotations

import json
from pathlib import Path

from frames_cli.evolution.round.candidate_store import CandidateStore
from frames_cli.evolution.round.context import Evaluation
from frames_cli.files.atomic import atomic_write_json


class EvaluationLog:
    """Writes a run's evaluations and keeps its read-only `store` in step with them.

    Args:
        evals_dir: the folder of the kept evaluations, `<name>.json` each.
        store: the run's candidate store, told of every evaluation written.
    """

    def __init__(self, evals_dir: Path, store: CandidateStore):
        self.evals_dir = evals_dir
        self.store = store

    def keep(self, name: str, ev: Evaluation) -> None:
        """Write `ev` to `<evals_dir>/<name>.json` (atomically): the per-case results later stages read
        (through the store, which is handed the text written rather than reading it back)."""
        written = atomic_write_json(self.evals_dir / f"{name}.json", ev.to_json())
        # What was written, not `ev`: the file's keys are sorted and credentials redacted, and a
        # resumed run reads the file; both must see the same evaluation.
        self.store.remember(name, Evaluation(**json.loads(written)))
