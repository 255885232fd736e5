"""state.json's upgrades: one named step per schema version, each turning a record of that version
into one of the next, so that code reads only today's schema and an old run reads as it did.

A step works on plain JSON (before the record is checked), and is frozen once it has landed: it
writes the values an old record meant, never today's defaults, which may change.
"""

from __future__ import annotations

import re
from typing import Any


def upgrade(data: dict[str, Any], version: int) -> dict[str, Any]:
    """`data` (state.json of any schema up to `version`; one without `schema` is schema 1) upgraded to
    `version`, one step at a time."""
    for schema in range(max(1, data.get("schema", 1)), version):
        data = UPGRADES[schema](dict(data))
    return data


def _upgrade_1(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 → 2: the recommendation becomes a record. A finished schema-1 run recommended the
    front member with the highest pass rate among those whose gain on the unseen selection cases
    had p ≤ α / m (Bonferroni over the m children evaluated); that verdict is kept as it was made."""
    evolution = (data.get("config") or {}).get("evolution") or {}
    alpha = float(evolution.get("recommend_alpha", 1.0))
    data["schema"] = 2
    if (data.get("status") != "finished" and not data.get("branch")) or "recommendation" in data or alpha >= 1:
        return data  # under the paper's rule RunState.best decides live, as before
    children = [c for c in data.get("candidates", []) if isinstance(c, dict) and c.get("parent_id") is not None
                and c.get("pass_rate") is not None]
    bar = alpha / max(1, len(children))
    front = set(data.get("front", []))
    members = [c for c in children
               if c.get("id") in front and isinstance(c.get("gain_p"), (int, float)) and c["gain_p"] <= bar]
    member = max(members, key=lambda c: (c["pass_rate"], -(c.get("mean_tokens") or 0.0)), default=None)
    found = (f"p = {member['gain_p']:.2g} on unseen cases, at most α / m = {bar:.2g}" if member
             else f"no gain on unseen cases reached α / m = {bar:.2g}")
    note = f"recorded before frames kept the evidence: {found}"
    data["recommendation"] = {"member": member["id"] if member else None, "status": "final" if member else "none",
                              "alpha": alpha, "rule": "legacy", "note": note}
    return data




#: The settings a run's record gained after frames began recording runs (settings.Settings), each
#: with the value that gives a run recorded before it its old behaviour. A block (a dict) is
#: completed key by key: `guards.rule_form` came after `guards`.
_SETTINGS_BEFORE_THEY_EXISTED: dict[str, Any] = {
    # No retrieval: the diagnosers saw no policy passage or past change.
    "retrieval": {"enabled": False, "top_k": 5, "min_score": 0.5, "min_shared_terms": 3, "max_changes": 200},
    "gate": "paper",
    "gate_alpha": 0.05,
    # The paper's single evaluation set E: every case diagnosed and gated, none sealed.
    "split": {"selection": 0.0, "test": 0.0, "test_cases": None, "min_cases": 4, "seed": 0},
    # Only identical wording merged, and the duplicate guard nearly off.
    "merge_threshold": None,
    "duplicate_threshold": 1.0,
    "guards": {"case_values": False, "policy_sentences": False, "rule_form": False},
    "early_rejection": True,
    "gate_max_samples": 0,
    "attribution_steps": 0,
    "cost": {"enabled": False, "max_failures": 1, "skills": 2},
    # Read from frames.yaml at every start then; 2 was its default.
    "lost_retries": 2,
    # The paper's rule: the front member of the highest pass rate is the best.
    "recommend_alpha": 1.0,
    # Not fixed at the start: `llm.concurrency` as read at each start (run/snapshot.run_settings).
    "stage_cases": 0,
    "confirm_limit": 3,
    "pending": {"min_new_cases": 10, "max_looks": 3},
}
#: Settings a record may hold that nothing reads any more: dropped.
_DEAD_SETTINGS = ("regression_sample",)


def _upgrade_2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 → 3: the settings are recorded once and complete, and dead fields go.

    - `config.evolution` gets every setting the run lacked, at the value that meant
      (`_SETTINGS_BEFORE_THEY_EXISTED`), and loses `regression_sample`.
    - The checkpoint's copy of the settings and of the models goes: `config` is their one record.
      The copy differed only by a `--max-rounds` given on a resume, which the checkpoint keeps as
      `max_rounds`.
    - `config.guard_rules`, the version of the guards' rules, is 1 where the run predates it.
    - `parent_cursor` goes (nothing read it: parents are picked by `checkpoint.picks`).
    - `fingerprint` becomes None: it was taken over a snapshot that held `regression_sample`, so
      no run started now has it, and it no longer matches the record's `config`.
    """
    data["schema"], data["fingerprint"] = 3, None
    data.pop("parent_cursor", None)
    config, checkpoint = data.get("config"), data.get("checkpoint")
    if not isinstance(config, dict) or not isinstance(checkpoint, dict):
        return data  # damaged: reading it says where
    config, checkpoint = dict(config), dict(checkpoint)
    copy = checkpoint.pop("settings", None)
    checkpoint.pop("models", None)
    if isinstance(config.get("evolution"), dict):
        config["evolution"] = _complete_settings(config["evolution"])
        resumed_to = copy.get("max_rounds") if isinstance(copy, dict) else None
        if resumed_to is not None and resumed_to != config["evolution"].get("max_rounds"):
            checkpoint["max_rounds"] = resumed_to
    if config:
        config.setdefault("guard_rules", 1)
    data["config"], data["checkpoint"] = config, checkpoint
    return data


def _complete_settings(recorded: dict[str, Any]) -> dict[str, Any]:
    """A schema-2 record's settings with the ones it lacked and without the dead ones."""
    settings = {key: value for key, value in recorded.items() if key not in _DEAD_SETTINGS}
    for key, then in _SETTINGS_BEFORE_THEY_EXISTED.items():
        if isinstance(then, dict):
            settings[key] = {**then, **(settings.get(key) or {})}
        else:
            settings.setdefault(key, then)
    return settings


def _upgrade_3(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 3 → 4: `seed` goes; it was `config.evolution.seed`, set from it at the run's start."""
    data["schema"] = 4
    data.pop("seed", None)
    return data


def _upgrade_4(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 4 → 5: a round's `costs` goes. A cost-directed round kept its parent's skills by tokens
    per case there, and nothing read them: the progress line said them as the round ran, and the
    round's blueprints and note say what it condensed."""
    data["schema"] = 5
    checkpoint = data.get("checkpoint")
    if not isinstance(checkpoint, dict):
        return data
    checkpoint = dict(checkpoint)
    rounds = checkpoint.get("rounds")
    if isinstance(rounds, list):
        checkpoint["rounds"] = [_without_costs(r) for r in rounds]
    if isinstance(checkpoint.get("pending"), dict):
        checkpoint["pending"] = _without_costs(checkpoint["pending"])
    data["checkpoint"] = checkpoint
    return data


def _without_costs(record: Any) -> Any:
    """A round record (JSON) without its `costs`; anything else as it is."""
    return {k: v for k, v in record.items() if k != "costs"} if isinstance(record, dict) else record


# The one reading of the old convention, for data written before `rules` existed: a change that
# added rules quoted each as `Add the rule: "<sentence>"` (a real model wrote one per change, the
# simulator several in a row), and a rewording as `Replace "<old>" with "<new>"`.
_ADDED_RULE = re.compile(r'Add the rule:\s*"(.+?)"(?=\s*(?:Add the rule:|$))', re.DOTALL)
_REPLACED = re.compile(r'^\s*Replace\s+"(?:.+?)"\s+with\s+"(.+?)"', re.DOTALL)


def legacy_rules(change: str) -> list[str]:
    """The rules a change written before `rules` existed adds: its `Add the rule: "…"` sentences,
    or the new sentence of a `Replace "…" with "…"`; [] for anything else (a removal).

    Only old data goes through here (state.json below schema 6, recorded diagnoser answers:
    `legacy_proposal`); a live answer carries its rules (docs/decisions/0095-rules-as-data.md).
    """
    added = [r.strip() for r in _ADDED_RULE.findall(change) if r.strip()]
    if added:
        return added
    replaced = _REPLACED.match(change)
    return [replaced.group(1).strip()] if replaced else []


def legacy_proposal(proposal: dict[str, Any]) -> dict[str, Any]:
    """A proposal (or a blueprint's change) recorded before `rules` existed, with `rules` read from
    its change (`legacy_rules`); one that has them is returned as it is. A blueprint change that
    records a contradiction adds none: its wordings are the options."""
    if "rules" in proposal or not isinstance(proposal.get("change"), str):
        return proposal
    rules = [] if proposal.get("conflict") else legacy_rules(proposal["change"])
    return {**proposal, "rules": rules}


def _upgrade_5(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 5 → 6: proposals and blueprint changes carry the rules they add (`legacy_proposal`):
    the diagnoses and blueprints of each finished round and of the round in progress, and each
    candidate's blueprints."""
    data["schema"] = 6
    checkpoint = data.get("checkpoint")
    if isinstance(checkpoint, dict):
        rounds = checkpoint.get("rounds")
        checkpoint = {**checkpoint, "rounds": [_with_rules(r) for r in rounds] if isinstance(rounds, list) else rounds}
        if checkpoint.get("pending"):
            checkpoint["pending"] = _with_rules(checkpoint["pending"])
        data["checkpoint"] = checkpoint
    if isinstance(data.get("candidates"), list):
        data["candidates"] = [_with_rules(c) for c in data["candidates"]]
    return data


def _with_rules(record: Any) -> Any:
    """A round or candidate record whose diagnoses' proposals and blueprints' changes carry rules;
    anything else as it is (a damaged record is reported where it is read)."""
    if not isinstance(record, dict):
        return record
    out = dict(record)
    for key, items_key in (("diagnoses", "proposals"), ("blueprints", "changes")):
        if isinstance(out.get(key), list):
            out[key] = [
                {**item, items_key: [legacy_proposal(x) if isinstance(x, dict) else x for x in item[items_key]]}
                if isinstance(item, dict) and isinstance(item.get(items_key), list) else item
                for item in out[key]
            ]
    return out


#: schema version → the step that upgrades a state of that version to the next.
UPGRADES = {1: _upgrade_1, 2: _upgrade_2, 3: _upgrade_3, 4: _upgrade_4, 5: _upgrade_5}
