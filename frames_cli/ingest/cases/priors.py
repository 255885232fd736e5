"""Priors: reviewer advice with no checkable outcome, attached to the skills it is about (`priors.yaml`).

A prior is not a case: nothing can be scored against "be more polite when refusing". It is kept as
context for the skill it is about, in ``priors.yaml`` at the workspace top (tracked in git, so a
reviewer sees where advice went)::

    version: 1
    skills:
      cancel-flight:
        - text: "Explain the 24-hour rule before refusing."
          source: {kind: review-log, ref: "reviews/week12.csv:14"}
          score: 4.21          # BM25 score of the match
    unmatched:                 # advice no skill matched well enough: kept, never dropped
      - text: "..."
        source: {kind: review-log, ref: "..."}

The skill is chosen by BM25 (rank-bm25, Okapi) of the advice against each skill's name, description
and body. Weak matches are left out rather than attached (DESIGN §9): a skill is kept only when its
score is at least `ingest.prior_min_score`, at least half of the best score, and the advice shares
at least two distinct content words with the skill (one shared word is chance); at most
`ingest.prior_max_skills` skills per prior. Name and description count three and two times.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.text import SafeLoader
from frames_cli.formats.case import Source
from frames_cli.formats.skill_set import SkillSet
from frames_cli.words import tokens
from frames_cli.files.atomic import atomic_write_text

PRIORS_FILE = "priors.yaml"
PRIORS_VERSION = 1

# A skill within this share of the best score is as plausible a home for the advice as the best.
_NEAR_BEST = 0.5
# One shared word is chance ("use", "flight"); advice about a skill shares at least two with it.
_MIN_SHARED = 2


@dataclass
class Prior:
    """One piece of advice. `score` is the BM25 match score (None for unmatched advice)."""

    text: str
    source: Source
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The entry as priors.yaml holds it: {"text", "source": {"kind", "ref"}}, plus "score"
        rounded to 2 decimals when matched."""
        out: dict[str, Any] = {"text": self.text, "source": {"kind": self.source.kind, "ref": self.source.ref}}
        if self.score is not None:
            out["score"] = round(self.score, 2)
        return out


@dataclass
class Priors:
    """The content of `priors.yaml`: skill name → priors, and the advice that matched no skill."""

    skills: dict[str, list[Prior]] = field(default_factory=dict)
    unmatched: list[Prior] = field(default_factory=list)

    def for_skill(self, name: str) -> list[str]:
        """The advice texts attached to skill `name`, oldest first (empty when none)."""
        return [p.text for p in self.skills.get(name, [])]

    def add(self, prior: Prior, skill: str | None) -> bool:
        """Attach `prior` to `skill` (None: unmatched); False when the same text is already there."""
        bucket = self.skills.setdefault(skill, []) if skill else self.unmatched
        if any(" ".join(p.text.split()).casefold() == " ".join(prior.text.split()).casefold() for p in bucket):
            return False
        bucket.append(prior)
        return True


def _prior(item: Any, loc: Location) -> Prior:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise InputError("each prior must be a mapping with a `text` string", loc)
    source = item.get("source") or {}
    if not isinstance(source, dict):
        raise InputError("`source` of a prior must be a mapping", loc)
    return Prior(item["text"], Source(str(source.get("kind", "manual")), str(source.get("ref", ""))), item.get("score"))


def load_priors(root: Path) -> Priors:
    """Read `<root>/priors.yaml` (empty Priors when the file does not exist).

    Raises:
        InputError: invalid YAML or an entry of the wrong shape, naming the file (and line for YAML errors).
    """
    import yaml

    path = Path(root) / PRIORS_FILE
    if not path.exists():
        return Priors()
    loc = Location(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=SafeLoader) or {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise InputError(f"invalid YAML: {exc.problem}", Location(path, mark.line + 1 if mark else None)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", loc) from None
    if not isinstance(data, dict) or not isinstance(data.get("skills", {}), dict):
        raise InputError("expected a mapping with `skills` and `unmatched`", loc)
    priors = Priors()
    for name, items in (data.get("skills") or {}).items():
        priors.skills[str(name)] = [_prior(i, loc) for i in items or []]
    priors.unmatched = [_prior(i, loc) for i in data.get("unmatched") or []]
    return priors


def save_priors(root: Path, priors: Priors) -> None:
    """Write `<root>/priors.yaml` atomically (skills sorted by name)."""
    import yaml

    data = {
        "version": PRIORS_VERSION,
        "skills": {name: [p.to_dict() for p in items] for name, items in sorted(priors.skills.items()) if items},
        "unmatched": [p.to_dict() for p in priors.unmatched],
    }
    atomic_write_text(Path(root) / PRIORS_FILE, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))


class SkillMatcher:
    """BM25 (Okapi, rank-bm25) over skill name + description + body; picks the skills advice is about.

    Args:
        skills: the workspace's skills.
        min_score: lowest BM25 score accepted (scores are unnormalised sums of term IDF weights;
            about 1.5 means at least one distinctive shared word).
        max_skills: most skills one piece of advice is attached to.
    """

    def __init__(self, skills: SkillSet, min_score: float, max_skills: int):
        self.names = list(skills)
        self.min_score = min_score
        self.max_skills = max_skills
        # Name and description say what a skill is about more densely than its body: weigh them up.
        docs = [tokens(f"{s.name.replace('-', ' ')} " * 3 + f"{s.description} " * 2 + s.body) for s in skills.values()]
        self._vocab = [set(d) for d in docs]
        self._bm25 = None
        if docs:
            from rank_bm25 import BM25Okapi

            self._bm25 = BM25Okapi(docs)

    def match(self, text: str) -> list[tuple[str, float]]:
        """(skill, score) pairs for `text`, best first, weak matches left out (may be empty)."""
        query = tokens(text)
        if self._bm25 is None or not query:
            return []
        scores = [float(s) for s in self._bm25.get_scores(query)]
        best = max(scores)
        distinct = set(query)
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])[: self.max_skills]
        return [
            (self.names[i], scores[i])
            for i in ranked
            if scores[i] >= self.min_score and scores[i] >= _NEAR_BEST * best
            and len(distinct & self._vocab[i]) >= _MIN_SHARED
        ]


def attach(
    priors: Priors, matcher: SkillMatcher, advice: Sequence[Prior], skill_hint: Sequence[str | None]
) -> list[list[str]]:
    """Attach each prior in `advice` to its matching skills (or to `unmatched`).

    Args:
        skill_hint: per prior, a skill the source named explicitly (used when it exists), else None.

    Returns:
        per prior, the skill names it was attached to (empty: unmatched).
    """
    placed: list[list[str]] = []
    for prior, hint in zip(advice, skill_hint):
        targets: Sequence[tuple[str, float | None]]
        if hint and hint in matcher.names:
            targets = [(hint, None)]
        else:
            targets = matcher.match(prior.text)
        for name, score in targets:
            priors.add(Prior(prior.text, prior.source, score), name)
        if not targets:
            priors.add(prior, None)
        placed.append([name for name, _ in targets])
    return placed
