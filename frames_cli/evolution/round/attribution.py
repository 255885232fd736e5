"""Which rewrite broke a category: a rejected (or dominated) child's
pass → fail cases, attributed to the changed skills they loaded.

A child that changed several skills and failed the gate is usually broken by one of them. Per case,
the evaluation records which skills the agent loaded (`skills_used` of each result), so a case that
passed in the parent and fails in the child points at the changed skills it read. A skill whose
catalog line (its description, or the skill itself when new) changed is implicated by every such
case, since the catalog decides what every case loads. The sub-child keeps the parent's files and
the rewrites no case implicated; it is evaluated like any child (evolution/run/loop.py,
evolution/round/stages/attribute.py). A broken case that loaded none of the changed skills implicates nothing: the
analysis says so and no skill is guessed.

Pure: no I/O. A child rejected early (evolution/compare/early.py) has results for some cases only; only
cases both the parent and the child have results for are compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from frames_cli.evolution.compare.verdict import Outcomes
    from frames_cli.formats.skill_set import SkillSet

#: Why a child is analysed: it failed the gate, or it passed but sits off the Pareto front.
WHY = ("gate", "dominated")


@dataclass(frozen=True)
class Attribution:
    """The analysis of one child: which of its rewrites the broken cases implicate.

    Attributes:
        child: the analysed candidate's id.
        why: "gate" (it failed the gate) or "dominated" (it passed but is off the front).
        categories: the categories analysed (the gate's failing ones; for a dominated child those
            below the parent's rate), sorted.
        changed: the skills the child changed against the round's parent, sorted.
        broken: case id → the changed skills it implicates, for every case of `categories` (and
            every must-pass case the gate named) that the child passed in fewer samples than the
            parent; sorted by case id.
        implicated: skill → the broken cases that implicate it, sorted.
        catalog: changed skills whose catalog line changed (new skill or new description): every
            broken case implicates them.
        unattributed: broken cases that loaded none of the changed skills (implicating nothing).
        unevaluated: cases of `categories` the parent passed and the child has no result for
            (rejected early; 0 when the early stop evaluated them after all: evolution/compare/early.cases_to_settle).
    """

    child: str
    why: str
    categories: tuple[str, ...]
    changed: tuple[str, ...]
    broken: dict[str, tuple[str, ...]] = field(default_factory=dict)
    implicated: dict[str, tuple[str, ...]] = field(default_factory=dict)
    catalog: tuple[str, ...] = ()
    unattributed: tuple[str, ...] = ()
    unevaluated: int = 0

    @property
    def kept(self) -> tuple[str, ...]:
        """The changed skills no broken case implicates (what a sub-child keeps), sorted."""
        return tuple(s for s in self.changed if s not in self.implicated)

    @property
    def sub_child_possible(self) -> bool:
        """True when some rewrite is implicated and some is not: leaving out the first makes a new child."""
        return bool(self.implicated) and bool(self.kept)

    def note(self) -> str:
        """One sentence for events, the round record and the review: what was found, or why nothing."""
        cats = ", ".join(self.categories) or "no category"
        if not self.broken:
            why = (
                "no category fell below the parent"
                if not self.categories
                else f"no case of {cats} went from pass to fail against the parent"
            )
            return f"{self.child}: {why}; no skill can be implicated"
        if not self.implicated:
            return (
                f"{self.child}: no skill can be implicated: the broken cases {', '.join(self.unattributed)} loaded "
                f"none of the changed skills ({', '.join(self.changed)}) and no catalog line changed"
            )
        parts = [
            f"{skill} (by {', '.join(cases)}{', catalog line changed' if skill in self.catalog else ''})"
            for skill, cases in self.implicated.items()
        ]
        text = f"{self.child}: {cats} broken by {'; '.join(parts)}"
        if self.unattributed:
            text += f"; {', '.join(self.unattributed)} loaded no changed skill"
        if not self.kept:
            text += "; every changed skill is implicated, so no sub-child is left to make"
        return text

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (tuples as lists) for the round record."""
        data = asdict(self)
        data["broken"] = {k: list(v) for k, v in self.broken.items()}
        data["implicated"] = {k: list(v) for k, v in self.implicated.items()}
        for key in ("categories", "changed", "catalog", "unattributed"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Attribution:
        """Inverse of `to_json`."""
        return cls(
            child=obj["child"], why=obj["why"], categories=tuple(obj["categories"]), changed=tuple(obj["changed"]),
            broken={k: tuple(v) for k, v in obj.get("broken", {}).items()},
            implicated={k: tuple(v) for k, v in obj.get("implicated", {}).items()},
            catalog=tuple(obj.get("catalog", ())), unattributed=tuple(obj.get("unattributed", ())),
            unevaluated=int(obj.get("unevaluated", 0)),
        )


def attribute(
    child: str,
    why: str,
    categories: Iterable[str],
    parent: Outcomes,
    child_outcomes: Outcomes,
    loaded: Mapping[str, Iterable[str]],
    changed: Iterable[str],
    catalog: Iterable[str] = (),
    must_pass_broken: Iterable[str] = (),
) -> Attribution:
    """Attribute the child's pass → fail cases of `categories` to the changed skills they loaded.

    Args:
        child: the analysed candidate's id.
        why: one of WHY.
        categories: the categories to analyse.
        parent, child_outcomes: case id → outcome of the round's parent and of the child, on the
            cases the analysis may use (the run's counted cases; disputed ones left out by the caller).
        loaded: case id → names of the skills the child's agent loaded on that case (any sample).
        changed: the skills the child changed against the parent.
        catalog: those of `changed` whose catalog line changed (`catalog_changes`).
        must_pass_broken: must-pass cases the gate named broken; analysed whatever their category.

    Returns:
        The Attribution. A case counts as broken when the child passed it in fewer samples than the parent.

    Raises:
        ValueError: `why` is not one of WHY.
    """
    if why not in WHY:
        raise ValueError(f"why must be one of {WHY}, not {why!r}")
    cats = sorted(set(categories))
    changed_set, catalog_set = set(changed), set(catalog) & set(changed)
    wanted = set(must_pass_broken)
    unevaluated = 0
    broken: dict[str, tuple[str, ...]] = {}
    for cid, before in sorted(parent.items()):
        if before.category not in cats and cid not in wanted:
            continue
        after = child_outcomes.get(cid)
        if after is None:
            unevaluated += before.passed > 0
            continue
        if after.passed < before.passed:
            broken[cid] = tuple(sorted((set(loaded.get(cid, ())) & changed_set) | catalog_set))
    implicated: dict[str, list[str]] = {}
    for cid, skills in broken.items():
        for skill in skills:
            implicated.setdefault(skill, []).append(cid)
    return Attribution(
        child=child, why=why, categories=tuple(cats), changed=tuple(sorted(changed_set)), broken=broken,
        implicated={s: tuple(implicated[s]) for s in sorted(implicated)}, catalog=tuple(sorted(catalog_set)),
        unattributed=tuple(cid for cid, skills in broken.items() if not skills), unevaluated=unevaluated,
    )


def loaded_skills(results: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """case id → the skills its agent loaded in any sample, from result records (context.Evaluation.results)."""
    out: dict[str, set[str]] = {}
    for r in results:
        out.setdefault(r["case_id"], set()).update(r.get("skills_used") or ())
    return out


def catalog_changes(parent: SkillSet, child: SkillSet, changed: Iterable[str]) -> list[str]:
    """The `changed` skills whose catalog line differs between `parent` and `child` (a new skill, a
    new description, or a skill that no longer loads), sorted."""
    out = []
    for name in changed:
        before, after = parent.get(name), child.get(name)
        if before is None or after is None or before.description != after.description:
            out.append(name)
    return sorted(out)


def dominated_categories(parent: Mapping[str, float], child: Mapping[str, float]) -> list[str]:
    """Categories where a dominated child's pass rate is below its parent's, sorted (none: it lost on cost)."""
    return sorted(c for c, rate in child.items() if c in parent and rate < parent[c])

