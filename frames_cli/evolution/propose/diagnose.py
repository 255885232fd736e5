"""Diagnosis: failing cases shuffled into disjoint batches, one diagnoser call per batch, proposals validated."""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frames_cli.evolution.propose.prompting import DIAGNOSIS_FORMAT, json_block, retrieved_section, skill_blocks

if TYPE_CHECKING:
    from frames_cli.evolution.propose.retrieval import PassageIndex
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.llm.client.client import ChatReply, ModelClient

#: Agent Skills name rule; a proposed new skill must satisfy it (it also keeps paths inside skills/).
SKILL_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Failure:
    """One failing case of the parent, as a diagnoser sees it.

    Attributes:
        case: the case, including its diagnosis record (diagnosers may see it; executors never).
        got: the parent's output on it.
        reason: why the check failed, as the evaluator said.
        skills_used: the skills the agent loaded for it.
        steps: the agent's trajectory on it (state, action, result per step).
    """

    case: Case
    got: Any
    reason: str
    skills_used: Sequence[str] = ()
    steps: Sequence[dict] = ()

    def to_prompt(self) -> dict:
        """The record shown in the `Failures:` block (ARCHITECTURE prompt conventions, plus the skills
        the agent used and its steps)."""
        d = self.case.diagnosis
        return {
            "case_id": self.case.id,
            "category": self.case.category,
            "input": self.case.task.input,
            "expected": self.case.task.expected,
            "got": self.got,
            "reason": self.reason,
            "skills_used": list(self.skills_used),
            # DESIGN §9: the whole trajectory, so an early wrong step (a wrong skill loaded) can be found.
            "agent_steps": list(self.steps),
            # Empty fields say nothing and cost tokens in every batch.
            "diagnosis": {
                k: v
                for k, v in (
                    ("symptom", d.symptom), ("cause", d.cause), ("notes", d.notes), ("evidence", list(d.evidence)),
                    ("trajectory", list(d.trajectory)),
                )
                if v
            },
        }


@dataclass(frozen=True)
class Proposal:
    """One validated proposal of one diagnoser.

    Attributes:
        diagnoser: index of the diagnoser (0..D−1); votes count distinct indexes.
        position: index of the proposal in that diagnoser's answer (keeps merge order stable).
        skill: target skill name (existing, or a new skill's name).
        change: the edit in words, as the diagnoser wrote it.
        rationale: why, in the diagnoser's words.
        case_ids: motivating case ids, all from the diagnoser's own batch.
        new_skill: the diagnoser asked for a new skill.
        description: the new skill's description, if given.
        rules: the sentences the change adds to the skill, each a whole rule, as the answer's `rules`
            lists them; empty when the change adds none (a removal, say).
    """

    diagnoser: int
    position: int
    skill: str
    change: str
    rationale: str
    case_ids: tuple[str, ...]
    new_skill: bool = False
    description: str = ""
    rules: tuple[str, ...] = ()

    @property
    def rule_text(self) -> str:
        """What the proposal adds, as the guards check it and consensus compares it: its rules, or,
        when it lists none, its whole change (docs/decisions/0095-rules-as-data.md); never a sentence
        looked for inside the change's words."""
        return " ".join(self.rules) if self.rules else self.change.strip()

    def to_json(self) -> dict:
        """Plain JSON for the run state."""
        return {**vars(self), "case_ids": list(self.case_ids), "rules": list(self.rules)}

    @classmethod
    def from_json(cls, obj: dict) -> Proposal:
        """Inverse of `to_json` (a run recorded before `rules` is upgraded first: state/upgrades.py)."""
        return cls(**{**obj, "case_ids": tuple(obj["case_ids"]), "rules": tuple(obj["rules"])})


@dataclass
class DiagnoserResult:
    """What one diagnoser call produced.

    Attributes:
        diagnoser: its index.
        case_ids: the batch it saw.
        proposals: proposals that passed validation.
        dropped: one line per proposal refused, with the reason.
        error: the call's error (after retries and repair); the diagnoser then counts as no proposals.
        retrieved: what its prompt's "Relevant policy and past changes" section held, best first
            (`retrieval.Hit.to_json()`: cite, kind, score, combsum, bm25, case_ids); empty when nothing
            cleared the weak-match floor or retrieval is off.
        disputes: failing cases of its batch whose expected result it says contradicts the policy,
            `{"case_id", "passage", "reason"}` each; such a case is cited by none of its proposals.
    """

    diagnoser: int
    case_ids: list[str]
    proposals: list[Proposal] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    error: str | None = None
    retrieved: list[dict] = field(default_factory=list)
    disputes: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        """Plain JSON for the run state."""
        return {
            "diagnoser": self.diagnoser,
            "case_ids": self.case_ids,
            "proposals": [p.to_json() for p in self.proposals],
            "dropped": self.dropped,
            "error": self.error,
            "retrieved": self.retrieved,
            "disputes": self.disputes,
        }

    @classmethod
    def from_json(cls, obj: dict) -> DiagnoserResult:
        """Inverse of `to_json` (older records have no `retrieved` or `disputes`: empty)."""
        proposals = [Proposal.from_json(p) for p in obj["proposals"]]
        return cls(
            obj["diagnoser"], obj["case_ids"], proposals, obj["dropped"], obj["error"], obj.get("retrieved", []),
            obj.get("disputes", []),
        )


def make_batches(
    case_ids: Sequence[str], batch_size: int | str, diagnosers: int, seed: int, round_no: int
) -> list[list[str]]:
    """Give each diagnoser of a round its own batch of failing case ids; no two batches are equal.

    The failures (sorted, then shuffled with (seed, round), so a run is reproducible and a resumed
    round gets the same batches) are cut into disjoint batches of size B. With at least D batches,
    diagnoser i gets batch i (a random subset of the failures, different each round). With fewer
    (fewer failures than D × B), the disjoint batches go to the first diagnosers and every other
    diagnoser i gets a *resampled* batch: a random subset of the failures drawn with its own seed
    (seed, round, i), of the largest size not above B that still has a subset no earlier diagnoser
    got. When every distinct non-empty subset is taken (one failure has one, two have three), the
    remaining diagnosers get no batch: a diagnoser sent a prompt another already got would be a
    copy, not an independent vote (`batching_note` says how the batches were formed).

    Args:
        case_ids: failing case ids of the parent (any order).
        batch_size: B ≥ 1, or "all" for a single batch of every failure.
        diagnosers: D ≥ 1.

    Returns:
        At most D distinct lists of case ids (diagnoser i gets element i); empty when there are no failures.
    """
    ids = sorted(set(case_ids))
    if not ids:
        return []
    random.Random(f"frames-batches:{seed}:{round_no}").shuffle(ids)
    size = len(ids) if batch_size == "all" else min(int(batch_size), len(ids))
    batches = [ids[i : i + size] for i in range(0, len(ids), size)][:diagnosers]
    taken = {frozenset(b) for b in batches}
    for i in range(len(batches), diagnosers):
        rng = random.Random(f"frames-resample:{seed}:{round_no}:{i}")
        batch = _fresh_subset(ids, size, taken, rng)
        if batch is None:
            break
        taken.add(frozenset(batch))
        batches.append(batch)
    return batches


def _fresh_subset(ids: list[str], size: int, taken: set[frozenset[str]], rng: random.Random) -> list[str] | None:
    """A random subset of `ids` not in `taken`, of the largest size ≤ `size` that has one; None when none is left."""
    for k in range(size, 0, -1):
        if sum(1 for t in taken if len(t) == k) >= math.comb(len(ids), k):
            continue
        if math.comb(len(ids), k) <= 4096:
            free = [list(c) for c in itertools.combinations(ids, k) if frozenset(c) not in taken]
            return rng.choice(free)
        while True:  # so many subsets that a draw is almost never taken
            pick = rng.sample(ids, k)
            if frozenset(pick) not in taken:
                return pick
    return None


def batching_note(
    failures: int, batches: Sequence[Sequence[str]], batch_size: int | str, diagnosers: int, threshold: int
) -> str:
    """How a round's batches were formed, in one line for the run state and the progress output.

    Says "disjoint" when every diagnoser got a disjoint batch; names the resampled diagnosers
    otherwise; and says when fewer distinct batches than q exist, so no change can reach the vote.
    """
    size = failures if batch_size == "all" else min(int(batch_size), failures)
    disjoint = -(-failures // size) if size else 0
    if len(batches) >= diagnosers and disjoint >= diagnosers:
        note = f"disjoint: {diagnosers} batches of up to {size} of {failures} failures"
    else:
        shown = min(disjoint, len(batches))
        note = f"{shown} disjoint batch(es) of {failures} failure(s) for {diagnosers} diagnosers"
        if len(batches) > shown:
            note += (
                f"; diagnosers {shown}–{len(batches) - 1} got resampled batches (distinct random subsets, seeded by "
                "seed, round and diagnoser)"
            )
        if len(batches) < diagnosers:
            note += f"; {diagnosers - len(batches)} diagnoser(s) not asked: every distinct batch is taken"
    if len(batches) < threshold:
        note += f"; only {len(batches)} distinct batch(es) for q = {threshold}: no change can pass the vote this round"
    return note


def diagnose(
    client: ModelClient,
    skills: SkillSet,
    failures: Sequence[Failure],
    batches: Sequence[Sequence[str]],
    *,
    round_no: int,
    index: PassageIndex | None = None,
    tried: str = "",
    amendments: str = "",
) -> list[DiagnoserResult]:
    """Run one diagnoser per batch concurrently (one `ModelClient.gather`) and validate the answers.

    Each diagnoser sees the whole parent skill set and its own batch with diagnosis records, and,
    with an `index`, the policy passages and past changes retrieved for its batch
    (`retrieval.batch_hits`; recorded in the result's `retrieved`), and `tried`: the block of
    changes this run already tried and saw fail (`lessons.tried_section`; "" for none). Diagnoser i asks with
    `sample=i`, so diagnosers sharing a batch are independent draws (and cached separately).
    `amendments` (workspace/amendments.diagnoser_notice: the policy lines that changed under the
    skills since they were written) goes into every prompt; "" leaves the prompt as it was.
    Propose only: nothing is written here.

    Returns:
        One result per batch, in order. A failed call is a result with `error` and no proposals.
    """
    from frames_cli.evolution.propose.retrieval import batch_hits
    from frames_cli.llm.client.client import ChatRequest
    from frames_cli.llm.messages.prompts import Block, render
    from frames_cli.llm.messages.schemas import DIAGNOSIS

    by_id = {f.case.id: f for f in failures}
    system = render("diagnoser_system")
    requests: list[ChatRequest] = []
    retrieved: list[list[dict]] = []
    for i, batch in enumerate(batches):
        records = [by_id[c].to_prompt() for c in batch]
        hits = batch_hits(index, records)
        retrieved.append([h.to_json() for h in hits])
        user = render(
            "diagnoser_user",
            skills=skill_blocks(skills.values()),
            skill_names=", ".join(skills),
            retrieved=Block(tried + retrieved_section(hits)),
            amended=f"{amendments}\n\n" if amendments else "",
            failures=json_block(records),
            answer_format=DIAGNOSIS_FORMAT,
        )
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        requests.append(
            ChatRequest(
                role="diagnoser", messages=messages, schema=DIAGNOSIS, sample=i, tag=f"round{round_no}/diagnoser{i}"
            )
        )
    replies = client.gather(client.achat, requests)
    existing = set(skills)
    results = [
        validate_answer(i, list(batch), reply, existing) for i, (batch, reply) in enumerate(zip(batches, replies))
    ]
    for result, recorded in zip(results, retrieved):
        result.retrieved = recorded
    return results


def validate_answer(index: int, batch: list[str], reply: ChatReply, existing: set[str]) -> DiagnoserResult:
    """Turn one diagnoser reply into a result: the proposals that count as votes, and why others do not.

    A proposal counts when it names a skill of the parent, or a new skill with a valid Agent Skills
    name (so it cannot escape skills/), and cites at least one case of the diagnoser's own batch
    (citations of other cases, and of cases the same answer disputes, are removed). Disputes name
    cases of the batch. A failed call counts as no proposals.

    Args:
        index: the diagnoser's index. batch: its case ids. existing: the parent's skill names.
    """
    result = DiagnoserResult(index, batch)
    if not reply.ok:
        result.error = reply.error
        return result
    allowed = set(batch)
    for raw in reply.data.get("disputes", []):
        cid = raw["case_id"].strip()
        if cid not in allowed:
            result.dropped.append(f"dispute of `{cid}`: not a case of its batch")
        elif cid not in {d["case_id"] for d in result.disputes}:
            result.disputes.append({"case_id": cid, "passage": raw["passage"], "reason": raw.get("reason", "")})
    # A case this diagnoser says is mislabelled motivates none of its rules.
    allowed -= {d["case_id"] for d in result.disputes}
    for pos, raw in enumerate(reply.data["proposals"]):
        skill = raw["skill"].strip()
        new = skill not in existing
        if new and not SKILL_NAME.match(skill):
            result.dropped.append(
                f"proposal {pos}: `{skill}` is neither a skill of the parent nor a valid new skill name"
            )
            continue
        cited = tuple(sorted({c for c in raw["case_ids"] if c in allowed}))
        if not cited:
            result.dropped.append(f"proposal {pos} for `{skill}`: cites no case of its batch")
            continue
        result.proposals.append(
            Proposal(
                index, pos, skill, raw["change"], raw.get("rationale", ""), cited, new,
                raw.get("description", "") if new else "",
                tuple(dict.fromkeys(r.strip() for r in raw["rules"] if r.strip())),
            )
        )
    return result
