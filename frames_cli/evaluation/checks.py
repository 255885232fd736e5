"""Check kinds: how an agent's output is compared with a case's expected answer (exact, set, contains, rubric).

Options shared by the local kinds (in `task.check` next to `kind`):
    field: compare `output[field]` and `expected[field]` when they are mappings (e.g. "actions").
    ignore_case: compare strings case-insensitively and trimmed (default true).
`set` also takes `allow_extra` (default false: an output item nobody expected fails the case) and
`args` ("subset", the default: output mappings may carry keys the expected one leaves out, since
converters keep only the arguments that decide a case; "exact": the keys must be the same).
`set` also takes `mentions` (a key, e.g. "reply"): every string in `expected[mentions]` must also
occur in the text of `output[mentions]`, for facts a case requires the agent to tell (tau2's
`communicate_info`), read as τ² reads them: case-folded, commas between words ignored.

Every local kind reads numbers by value (`evaluation.normalise`): "5,244", "$5,244.00" and "5244"
are the same amount, "52,44" and "15244" are not; strings are whitespace-collapsed and, with
`ignore_case`, case-folded.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from frames_cli.evaluation.normalise import amount, holds
from frames_cli.executor.base import request_text
from frames_cli.llm.messages.types import ChatReply, ChatRequest, Usage

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.llm.client.client import ModelClient

_MISSING = object()


@dataclass
class Verdict:
    """A check's result: passed or not, a one-line reason, and what grading cost (judge tokens).

    `lost`: the judge's answer was lost (`ChatReply.lost`), so the case has no verdict at all.
    """

    passed: bool
    reason: str
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    lost: bool = False


class OutputCheck(Protocol):
    """One check kind. `check` never raises on a bad output: a wrong shape is a failed verdict."""

    def check(self, case: Case, output: Any) -> Verdict:
        """Compare `output` with `case.task.expected` under `case.task.check.options`."""
        ...


def _pick(value: Any, options: dict[str, Any]) -> Any:
    name = options.get("field")
    if name is None:
        return value
    if isinstance(value, dict):
        return value.get(name, _MISSING)
    return value  # an agent that answers with the list itself still gets compared


def _scalar(value: Any, ignore_case: bool) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        text = " ".join(value.split())
        value_of = amount(text)  # "348", "$348.00" and 348 are the same amount
        if value_of is not None:
            return value_of
        try:
            return float(text)  # "1e3", "-4"
        except ValueError:
            return text.casefold() if ignore_case else text
    if isinstance(value, (int, float)):
        return float(value)
    return value


def same(expected: Any, got: Any, *, ignore_case: bool = True, subset: bool = False) -> bool:
    """Deep equality of JSON values, lists compared as multisets.

    Strings are whitespace-normalised (and case-folded with `ignore_case`); numbers and numeric
    strings (thousands separators and a currency sign allowed: `normalise.amount`) compare as
    floats (relative tolerance 1e-9). With `subset`, a mapping in `got` may have
    keys that the expected mapping lacks.
    """
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return False
        if not subset and set(expected) != set(got):
            return False
        return all(k in got and same(v, got[k], ignore_case=ignore_case, subset=subset) for k, v in expected.items())
    if isinstance(expected, list):
        return (
            isinstance(got, list) and len(expected) == len(got)
            and _assign(expected, got, ignore_case, subset) == ([], [])
        )
    a, b = _scalar(expected, ignore_case), _scalar(got, ignore_case)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return type(a) is type(b) and a == b


def _assign(expected: list[Any], got: list[Any], ignore_case: bool, subset: bool) -> tuple[list[Any], list[Any]]:
    """Match expected items to distinct output items; returns (unmatched expected, unmatched output).

    A maximum bipartite matching (Kuhn's augmenting paths), so the result does not depend on the
    order of either list.
    """
    fits = [
        [j for j, item in enumerate(got) if same(want, item, ignore_case=ignore_case, subset=subset)]
        for want in expected
    ]
    owner: dict[int, int] = {}  # output index -> expected index

    def augment(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(expected)):
        augment(i, set())
    matched = set(owner.values())
    return [w for i, w in enumerate(expected) if i not in matched], [g for j, g in enumerate(got) if j not in owner]


def describe(item: Any) -> str:
    """A short, stable rendering of one expected/output item for failure reasons."""
    if isinstance(item, dict) and "name" in item and isinstance(item.get("arguments"), dict):
        # Sorted: a cached answer's keys come back sorted, a fresh one's in the model's order.
        args = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in sorted(item["arguments"].items())
        )
        return f"{item['name']}({args})"
    return json.dumps(item, ensure_ascii=False, sort_keys=True)


def clip(text: str, limit: int = 600) -> str:
    """`text` cut to at most `limit` characters, a cut one ending in "…" (so a reader sees it was cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ExactCheck:
    """The output (or its `field`) equals the expected value (see `same`)."""

    def check(self, case: Case, output: Any) -> Verdict:
        """Pass when `output` (or `output[field]`) and `expected` are `same`; the reason quotes both
        (cut to 600 characters). Never raises; no judge, so usage is zero."""
        options = case.task.check.options
        want, got = _pick(case.task.expected, options), _pick(output, options)
        if got is _MISSING:
            return Verdict(False, f"answer has no `{options['field']}`")
        if same(want, got, ignore_case=options.get("ignore_case", True)):
            return Verdict(True, "equal")
        return Verdict(False, clip(f"expected {describe(want)}, got {describe(got)}"))


class SetCheck:
    """The output items (or `output[field]`) match the expected items one to one, in any order.

    Items match with `same` (arguments compared as a subset by default); the reason lists what is
    missing and what is unexpected.
    """

    def check(self, case: Case, output: Any) -> Verdict:
        """Pass when the lists match one to one (a maximum bipartite matching under `same`); fails,
        without raising, when either side is not a list. Never raises; usage is zero."""
        options = case.task.check.options
        want, got = _pick(case.task.expected, options), _pick(output, options)
        if got is _MISSING:
            return Verdict(False, f"answer has no `{options['field']}`")
        if not isinstance(want, list):
            return Verdict(False, "the case's expected value is not a list (a `set` check needs one)")
        if not isinstance(got, list):
            return Verdict(False, f"expected a list, got {type(got).__name__}")
        missing, extra = _assign(want, got, options.get("ignore_case", True), options.get("args", "subset") == "subset")
        if options.get("allow_extra", False):
            extra = []
        untold = _untold(case.task.expected, output, options.get("mentions"))
        if not missing and not extra and not untold:
            return Verdict(True, f"all {len(want)} expected items, nothing else")
        parts = []
        if untold:
            parts.append(f"`{options['mentions']}` does not mention " + "; ".join(repr(u) for u in untold))
        if missing:
            parts.append("missing " + "; ".join(describe(m) for m in missing))
        if extra:
            parts.append("unexpected " + "; ".join(describe(e) for e in extra))
        return Verdict(False, clip(", ".join(parts)))


def _untold(expected: Any, output: Any, key: str | None) -> list[str]:
    """The strings of `expected[key]` absent from the text of `output[key]` (none when `key` is None),
    read as τ²'s communicate check reads them (commas between words ignored) and numbers by value."""
    if key is None or not isinstance(expected, dict):
        return []
    wanted = expected.get(key) or []
    said = output.get(key) if isinstance(output, dict) else None
    text = said if isinstance(said, str) else json.dumps(said, ensure_ascii=False) if said is not None else ""
    return [str(w) for w in (wanted if isinstance(wanted, list) else [wanted]) if not holds(text, str(w), commas=True)]


class ContainsCheck:
    """The output's text (JSON for non-strings) contains the expected string, or every one of a list."""

    def check(self, case: Case, output: Any) -> Verdict:
        """Pass when every expected string occurs in the output's text (both with whitespace
        collapsed, numbers read by value, and case folded unless `ignore_case` is false); the
        reason names the absent ones. Never raises; usage is zero."""
        options = case.task.check.options
        got = _pick(output, options)
        if got is _MISSING or got is None:
            return Verdict(False, "no answer")
        text = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)
        wanted = case.task.expected if isinstance(case.task.expected, list) else [case.task.expected]
        fold = options.get("ignore_case", True)
        absent = [str(w) for w in wanted if not holds(text, str(w), fold=fold)]
        if absent:
            return Verdict(False, clip("does not contain " + "; ".join(repr(a) for a in absent)))
        return Verdict(True, f"contains all {len(wanted)}")


class RubricCheck:
    """An LLM judge (role `judge`) grades the output against the rubric in `expected` (text or list).

    The judge sees the request (the agent's view), the rubric and the answer; never the diagnosis.
    A judge failure (after the model layer's retries and repair turn) fails the case with the
    judge's error recorded.
    """

    def __init__(self, judge: ModelClient):
        self.judge = judge

    def request(self, case: Case, output: Any, sample: int = 0, retry: int = 0) -> ChatRequest:
        """The judge's ChatRequest for `output` on `case` (prompt `judge`, schema RUBRIC_VERDICT)."""
        from frames_cli.llm.messages.prompts import render
        from frames_cli.llm.messages.schemas import RUBRIC_VERDICT

        view = case.agent_view()
        rubric = case.task.expected
        prompt = render(
            "judge",
            case_id=case.id,
            request=request_text(view.input),
            rubric="\n".join(f"- {r}" for r in rubric) if isinstance(rubric, list) else str(rubric),
            answer=json.dumps(output, ensure_ascii=False, indent=1),
        )
        return ChatRequest(
            "judge", [{"role": "user", "content": prompt}], RUBRIC_VERDICT, sample=sample, tag=case.id, retry=retry
        )

    @staticmethod
    def verdict(reply: ChatReply) -> Verdict:
        """Turn the judge's ChatReply into a Verdict."""
        if not reply.ok:
            return Verdict(
                False, f"judge failed: {reply.error}", reply.usage, error=f"judge: {reply.error}", lost=reply.lost
            )
        return Verdict(bool(reply.data["pass"]), clip(str(reply.data.get("reason", ""))), reply.usage)

    def check(self, case: Case, output: Any) -> Verdict:
        """Ask the judge (one model call) and turn its reply into a Verdict carrying the judge's
        token usage; a failed judge call is a failed verdict with `error` set.

        Raises:
            BudgetExceeded: the judge call hit the run's budget (from the ModelClient).
        """
        return self.verdict(self.judge.chat(self.request(case, output)))


LOCAL_CHECKS: dict[str, OutputCheck] = {"exact": ExactCheck(), "set": SetCheck(), "contains": ContainsCheck()}
