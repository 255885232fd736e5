"""Claude Code session transcripts read as traces: one JSON Lines file of events, one trace per session.

A Claude Code session file (`~/.claude/projects/<project>/<session>.jsonl`) holds one event per
line: `{"type": "user" | "assistant", "message": {"role", "content": [...]}, "sessionId", "uuid",
"messageId"?, ...}`, besides events that are not messages (`summary`, `system`, snapshots). Read
line by line, each event looked like a trace without `messages`; here the message events of each
session become one `{"id": sessionId, "messages": [...]}` record at the session's first line,
whose Anthropic content blocks (`tool_use` / `tool_result`) `trace.steps_from_messages` reads.

A session records no outcome. To label one, add the trace fields to any of its events, or append
a line of your own such as `{"type": "label", "sessionId": "...", "outcome": "failure", "label":
{"note": "..."}}`: a `TRACE_FIELDS` key on an event of the session is the session's.
"""

from __future__ import annotations

from typing import Any

from frames_cli.errors import Location
from frames_cli.formats.problems import Problem

_MESSAGE_TYPES = ("user", "assistant")
#: Trace fields (`trace.ALIASES` names) an event may carry for its whole session.
TRACE_FIELDS = ("outcome", "reward", "label", "expected", "output", "category", "input")


def _is_message_event(obj: Any) -> bool:
    return (
        isinstance(obj, dict) and obj.get("type") in _MESSAGE_TYPES and isinstance(obj.get("message"), dict)
        and "sessionId" in obj
    )


def is_session(rows: list[tuple[Location, Any]]) -> bool:
    """Whether parsed JSON Lines `rows` are a Claude Code session: every object has a string `type`
    and none has `messages` or `steps` (a trace of its own), and at least one is a message event."""
    objects = [obj for _, obj in rows if isinstance(obj, dict)]
    return (
        bool(objects) and all(isinstance(o.get("type"), str) and not {"messages", "steps"} & set(o) for o in objects)
        and any(_is_message_event(o) for o in objects)
    )


def group_sessions(rows: list[tuple[Location, Any]]) -> tuple[list[tuple[Location, Any]], list[Problem]]:
    """`rows` as one record per session when they are a Claude Code session file (`is_session`),
    else unchanged, with no problem.

    Returns:
        (rows, warnings): a session's record is at the line of its first event kept; rows that
        did not parse are kept as they are (the reader reports them); one warning per session
        names its lines, how many messages it holds and which events were left out (events that
        are not messages, and side-chain messages of sub-agents, which interleave with the main
        conversation), and each event outside any session is named, so no line is dropped silently.
    """
    if not is_session(rows):
        return rows, []
    out: list[tuple[Location, Any]] = []
    sessions: dict[str, dict[str, Any]] = {}
    seen: dict[str, dict[str, Any]] = {}  # per session: first/last line, left-out counts
    warnings: list[Problem] = []
    for location, obj in rows:
        if not isinstance(obj, dict):
            out.append((location, obj))
            continue
        if "sessionId" not in obj:
            warnings.append(
                Problem(
                    location, f"`{obj.get('type')}` event of a Claude Code session file, not a message: left out",
                    "warning",
                )
            )
            continue
        sid = str(obj["sessionId"])
        info = seen.setdefault(sid, {"first": location.line, "last": location.line, "left": {}, "path": location.path})
        info["last"] = location.line
        fields = {k: obj[k] for k in TRACE_FIELDS if k in obj}
        message = _is_message_event(obj) and not obj.get("isSidechain")
        if not (message or fields):
            kind = "side-chain message" if _is_message_event(obj) else f"`{obj.get('type')}` event"
            info["left"][kind] = info["left"].get(kind, 0) + 1
            continue
        if sid not in sessions:
            sessions[sid] = {"id": sid, "messages": []}
            out.append((location, sessions[sid]))
        sessions[sid].update(fields)
        if message:
            sessions[sid]["messages"].append(obj["message"])
    for sid, info in seen.items():
        held = len(sessions[sid]["messages"]) if sid in sessions else 0
        left = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in info["left"].items())
        warnings.append(Problem(
            Location(info["path"], info["first"]),
            f"lines {info['first']}-{info['last']} read as Claude Code session {sid!r}: {held} message(s)"
            + (f"; left out: {left}" if left else ""),
            "warning",
        ))
    return out, warnings
