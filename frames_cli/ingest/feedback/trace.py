"""`frames ingest trace`: agent traces (JSON Lines or a JSON array) → cases whose diagnosis holds a trajectory excerpt.

One line (or array item, or a file that is one JSON object) is one trace, in either shape (a
Claude Code session file, one event per line, is one trace per session: `ingest/feedback/sessions.py`):

- **steps**: ``{"steps": [{"state": …, "action": …, "result": …}, …], "outcome": "failure", …}``;
  SWE-agent's ``trajectory`` steps carry their result as ``observation``.
- **messages**: ``{"messages": [...]}`` in the OpenAI chat format (assistant ``tool_calls``, ``tool``
  messages answering them by ``tool_call_id``) or the Anthropic one (assistant content blocks
  ``tool_use``, answered by user content blocks ``tool_result`` with the ``tool_use_id``). Each
  tool call becomes a step (state = the user/tool text since the previous step, action = the
  call, result = the tool's answer) and a final assistant message without tool calls becomes an
  ``{"answer": …}`` step.

Beside it: ``outcome`` (success/failure/pass/fail, or ``reward`` 1/0), a reviewer ``label`` (a verdict
word, or an object with ``verdict``, ``note``, ``correct``, ``cause_step``), ``expected``,
``output``, ``category``, ``id``, ``input``. Column names are matched like review-log columns.

The case input is what the agent saw at the start: ``input`` when given, else the first step's
``state`` (for messages: the customer's messages, every user turn in order, as later turns carry
the ids and confirmations the request needs; the system prompt is the agent's own instruction,
which frames' skills replace). Expected: the label's ``correct``/``expected`` (a list of actions
``{name, arguments | kwargs}``, as τ-bench's ``info.task.actions``, becomes ``{"actions": [...]}``
checked as a set); for a successful trace without one, the agent's final answer, but only when
the trace called no tool: a reply that reports what tools returned cannot be given from the input
alone, so such a trace is skipped with a message naming the field to map. A failed trace with
neither gets a ``rubric`` check when the reviewer's note states a rule, and is a bad row otherwise.

Trajectory excerpt (DESIGN §9), decided per failed trace:

1. The *cause step* is the label's ``cause_step`` (1-based), else a step the note names
   ("step 3"), else the first step whose result reads as an error (error, failed, denied, not
   found, invalid, exception, ...).
2. When a cause step exists and the failure shows `ingest.delayed_failure_steps` or more steps
   after it (the failure shows at the last step), the **whole trajectory** is kept, so the
   diagnoser can find the early wrong step.
3. Otherwise (no earlier cause, or the cause is the last step or next to it) the failure is
   simple and **only the last step** is kept.
Successful traces become passing cases without a trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.formats.case import Case, Check, Diagnosis
from frames_cli.formats.problems import Problem
from frames_cli.ingest.rows.account import Account
from frames_cli.ingest.cases.dedup import make_case
from frames_cli.ingest.rows.nested import split_path
from frames_cli.ingest.rows.records import FieldResolver, Record, convert_records, read_records
from frames_cli.ingest.keys.answer_key import AnswerKey
from frames_cli.ingest.keys.answer_key_model import Pair, rule_reader
from frames_cli.ingest.feedback.review_log import parse_verdict, policy_evidence, rubric_check
from frames_cli.ingest.feedback.messages import message_text, steps_from_messages
from frames_cli.ingest.feedback.sessions import group_sessions

KIND = "trace"

ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "trace_id", "task_id", "conversation_id"),
    "input": ("input", "task", "question"),
    "steps": ("steps", "trajectory", "traj_steps"),
    "messages": ("messages", "conversation", "traj", "history", "chat"),
    "outcome": ("outcome", "status", "result", "verdict"),
    "reward": ("reward", "score"),
    "label": ("label", "review", "reviewer_label"),
    "expected": ("expected", "correct", "gold"),
    "output": ("output", "final_answer", "answer"),
    "category": ("category", "topic"),
}

_ERROR = re.compile(
    r"\b(error|exception|traceback|failed|failure|denied|not found|invalid|unauthori[sz]ed|forbidden|refused|cannot)\b",
    re.IGNORECASE,
)
_STEP_REF = re.compile(r"\bstep\s+#?(\d+)\b", re.IGNORECASE)


@dataclass
class Trace:
    """A trace in the common shape: steps ``{"state", "action", "result"}``, the final answer, the label."""

    steps: list[dict[str, Any]]
    start: Any
    output: Any
    verdict: str | None
    note: str | None
    expected: Any
    cause_step: int | None


def _label(record: Record) -> tuple[str | None, str | None, Any, int | None]:
    """(verdict word, note, correct answer, cause step) from `label`, which may be a word or an object."""
    label = record.values.get("label")
    if isinstance(label, dict):
        note = label.get("note") or label.get("comment") or label.get("reason")
        correct = label.get("correct", label.get("expected"))
        cause = label.get("cause_step")
        if cause is not None and (not isinstance(cause, int) or isinstance(cause, bool) or cause < 1):
            raise ValueError(f"label.cause_step must be a step number from 1, got {cause!r}")
        return label.get("verdict") or label.get("outcome"), note, correct, cause
    return (label if isinstance(label, str) else None), None, None, None


def _trace(record: Record, problems: list[Problem], actions_column: bool = False) -> Trace:
    word, note, correct, cause = _label(record)
    raw_outcome = record.text("outcome")
    reward = record.values.get("reward")
    verdict = parse_verdict(word or raw_outcome, record.location, problems)
    if verdict is None and isinstance(reward, (int, float)) and not isinstance(reward, bool):
        verdict = "approved" if reward >= 1 else "rejected"
    messages, steps_raw = record.values.get("messages"), record.values.get("steps")
    if messages is not None:
        if not isinstance(messages, list):
            raise ValueError("`messages` must be a list")
        steps, start, answer = steps_from_messages(messages)
    elif steps_raw is not None:
        if not isinstance(steps_raw, list) or not all(isinstance(s, dict) for s in steps_raw):
            raise ValueError("`steps` must be a list of objects with state, action and result")
        # SWE-agent steps hold the environment's answer as `observation`.
        steps = [
            {"state": s.get("state"), "action": s.get("action"), "result": s.get("result", s.get("observation"))}
            for s in steps_raw
        ]
        start = steps[0]["state"] if steps else None
        last_action = steps[-1]["action"] if steps else None
        answer = last_action.get("answer") if isinstance(last_action, dict) else None
    else:
        raise ValueError("neither `steps` nor `messages`")
    if not steps:
        raise ValueError("the trace has no steps")
    if note and cause is None:
        named = _STEP_REF.search(note)
        cause = int(named.group(1)) if named and 1 <= int(named.group(1)) <= len(steps) else None
    if cause is not None and cause > len(steps):
        raise ValueError(f"label.cause_step {cause} is past the last step ({len(steps)})")
    if cause is None:
        cause = next((i for i, s in enumerate(steps, start=1)
                      if s["result"] is not None and _ERROR.search(message_text(s["result"]))), None)
    expected = correct if correct is not None else record.values.get("expected")
    output = record.values.get("output", answer)
    return Trace(
        steps, record.values.get("input", start), output, verdict, note, _actions(expected, actions_column), cause
    )


def _note(record: Record) -> str | None:
    """The reviewer's note of a trace's label, or None (a malformed label is reported by `_trace`)."""
    try:
        return _label(record)[1]
    except ValueError:
        return None


def _tool_said(sentence: str, steps: list[dict[str, Any]]) -> bool:
    """Whether `sentence` is in what a step's tool returned (case and spacing aside)."""
    plain = " ".join(sentence.casefold().split()).strip(" .")
    return any(plain and plain in " ".join(message_text(s["result"]).casefold().split())
               for s in steps if s.get("result") is not None)


def _actions(expected: Any, of_actions: bool = False) -> Any:
    """A list of actions (``{name, arguments}`` or τ-bench's ``{name, kwargs}``) as ``{"actions": [...]}``,
    and an empty list too when `of_actions` (the field was mapped from an ``actions`` key: no write
    action is the right outcome); anything else as it is."""
    if isinstance(expected, list) and not expected and of_actions:
        return {"actions": []}
    if isinstance(expected, list) and expected and all(isinstance(a, dict) and "name" in a for a in expected):
        return {
            "actions": [{"name": a["name"], "arguments": a.get("arguments", a.get("kwargs", {}))} for a in expected]
        }
    return expected


#: What an agent is told to answer when a trace's reference is a list of actions: without it no agent
#: could know the case wants {"actions": [...]} rather than a reply (a case its input cannot pass).
ACTIONS_FORMAT = (
    'A JSON object {"actions": [{"name": TOOL, "arguments": {...}}, ...], "reply": TEXT}: "actions" lists every '
    "write action you take for this request, in any order ([] when the right response is to refuse or only to "
    'inform); "reply" is what you tell the customer.'
)


def _format(expected: Any) -> str:
    """`ACTIONS_FORMAT` for an action-list reference, else "" (the answer is free text)."""
    return ACTIONS_FORMAT if _check(expected) is not None else ""


def _check(expected: Any) -> Check | None:
    """A set check over `actions` for an action list; None (the default check) otherwise."""
    return Check("set", {"field": "actions"}) if isinstance(expected, dict) and set(expected) == {"actions"} else None


def excerpt(steps: list[dict[str, Any]], cause_step: int | None, delayed: int) -> list[dict[str, Any]]:
    """The trajectory excerpt for a failure: all steps when it shows `delayed`+ steps after its cause, else the last.

    Each kept step carries its 1-based ``step`` number, so the diagnoser can cite it.
    """
    numbered = [{"step": i, **s} for i, s in enumerate(steps, start=1)]
    if cause_step is not None and len(steps) - cause_step >= delayed:
        return numbered
    return numbered[-1:]


def _start_input(start: Any) -> tuple[str, dict[str, Any]]:
    """(text, fields) of what the agent saw first; an object's text-like key is the text, the rest fields."""
    if isinstance(start, dict):
        rest = dict(start)
        text = next((rest.pop(k) for k in ("text", "message", "user", "content") if isinstance(rest.get(k), str)), "")
        return text, rest
    return message_text(start), {}


@dataclass
class TraceConverter:
    """Agent traces → cases (a `Converter`; shapes and the excerpt rule in the module docstring).

    Args:
        path: the JSON Lines file.
        mapping: canonical field → key (`--map`), over `ALIASES`.
        policy: policy sentences the note's requirements may paraphrase (`review_log.policy_evidence`).
        evidence_match: `ingest.evidence_match`.
        delayed: `ingest.delayed_failure_steps`.
        category: category of traces that name none (`ingest.category`).
        shown: the file's name in locations and case references (relative to the workspace).
        read_keys: reads the answer keys of the reviewers' notes (`answer_key_model.rule_reader`,
            or `workspace_reader` for `models.keys`).

    After `convert`, `problems` holds the bad lines (skipped) and warnings, with file and line,
    and `account` the mapping and every trace's fate.
    """

    path: Path
    mapping: dict[str, str] = field(default_factory=dict)
    policy: Sequence[str] = ()
    evidence_match: float = 0.6
    delayed: int = 2
    category: str = "uncategorized"
    shown: str | None = None
    kind: str = KIND
    read_keys: Callable[[Sequence[Pair]], list[AnswerKey]] = rule_reader
    problems: list[Problem] = field(default_factory=list, init=False)
    account: Account = field(default_factory=Account, init=False)
    _keys: dict[int, AnswerKey] = field(default_factory=dict, init=False, repr=False)

    def convert(self) -> list[Case]:
        """Read every trace; one case per good trace, in file order.

        Raises:
            InputError: the file cannot be read at all.
        """
        read = read_records(
            Path(self.path), FieldResolver(self.mapping, ALIASES), "jsonl", shown=self.shown, regroup=group_sessions
        )
        self.problems, self.account = [], Account()
        noted = [(r, note) for r in read.records if (note := _note(r))]
        keys = self.read_keys([(note, None) for _, note in noted])
        self._keys = {id(r): k for (r, _), k in zip(noted, keys)}
        cases = convert_records(
            read, self._case, self.problems, "trace", self.account, passing=lambda c: not c.diagnosis.symptom
        )
        for (record, note), key in zip(noted, keys):
            self.account.annotate(record.location, note, key)
        return cases

    def _case(self, record: Record) -> Case:
        # τ-bench's `--map expected=info.task.actions`: an empty list there is "write nothing".
        column = self.mapping.get("expected") or ""
        trace = _trace(record, self.problems, actions_column=bool(column) and split_path(column)[-1:] == ["actions"])
        ref = record.ref()
        text, fields = _start_input(trace.start)
        if not text and not fields:
            raise ValueError(
                "the trace does not show what the agent saw at the start (no `input`, state or user message)"
            )
        category = record.text("category") or self.category
        if trace.verdict == "approved":
            expected = trace.expected if trace.expected is not None else trace.output
            if expected is None:
                raise ValueError(
                    "successful trace without a final answer or `expected` (map the reference answer with --map "
                    "expected=KEY)"
                )
            tools = sum(1 for s in trace.steps if isinstance(s["action"], dict) and "tool" in s["action"])
            if trace.expected is None and tools:
                raise ValueError(
                    f"the agent's final reply reports what {tools} tool call(s) returned, which the case input does "
                    "not hold, so it cannot be the expected answer: map the reference answer with --map expected=KEY "
                    "(a τ-bench trajectory holds it in info.task.actions)"
                )
            return make_case(
                KIND, ref, text=text, fields=fields, expected=expected, category=category, check=_check(expected),
                answer_format=_format(expected), diagnosis=Diagnosis(notes=trace.note or ""),
            )
        if trace.verdict != "rejected":
            raise ValueError("no outcome: give `outcome`, `reward` or a reviewer `label` with a verdict")
        steps = excerpt(trace.steps, trace.cause_step, self.delayed)
        key = self._keys.get(id(record)) or AnswerKey([])
        # A sentence a tool returned is the tool's error, not the reviewer's requirement (pasted into the note).
        requirements = [r for r in key.requirements if not _tool_said(r, trace.steps)]
        evidence = policy_evidence(requirements, key.rejected, self.policy, self.evidence_match)
        last = len(trace.steps)
        symptom = f"failed at step {last}" + (
            f"; agent answered {message_text(trace.output)!r}" if trace.output is not None else ""
        )
        cause = ""
        if trace.cause_step is not None and trace.cause_step < last:
            cause = f"step {trace.cause_step}: {message_text(trace.steps[trace.cause_step - 1]['action'])}"
        diagnosis = Diagnosis(symptom=symptom, cause=cause, notes=trace.note or "", trajectory=steps, evidence=evidence)
        if trace.expected is not None:
            return make_case(
                KIND, ref, text=text, fields=fields, expected=trace.expected, category=category,
                check=_check(trace.expected), answer_format=_format(trace.expected), diagnosis=diagnosis,
            )
        if requirements or key.rejected:
            rubric, check = rubric_check(requirements, key.rejected)
            case = make_case(
                KIND, ref, text=text, fields=fields, expected=rubric, category=category, check=check,
                diagnosis=diagnosis,
            )
            case.review = "needed" if key.unsure or len(requirements) < len(key.requirements) else None
            return case
        raise ValueError(
            "failed trace without `expected`, a label's `correct`, or a rule in the reviewer's note "
            "(map the reference answer with --map expected=KEY, e.g. info.task.actions in a τ-bench trajectory)"
        )
