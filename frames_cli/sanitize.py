"""Text from models, cases, reviewers and policies is data: the one place that decides which characters and tags it may carry.

Three kinds of character are never wanted in text frames commits, shows or sends to a model:
- control characters (C0 except tab, line feed, carriage return and form feed; DEL; C1), which a
  terminal obeys (ESC starts title, clear-screen and colour sequences; BEL, BS, CR overwrite);
  NUL above all, which git refuses in a commit message and which turns a file "binary" in a diff;
- bidirectional controls (U+202A–U+202E, U+2066–U+2069, LRM, RLM, ALM), which reorder what a
  reviewer sees against what the bytes say ("Trojan Source", CVE-2021-42574);
- zero-width and invisible formatting characters (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E),
  which hide text from a reviewer and split words a keyword check would find.

User files holding them are refused with their line (`find_unsafe`, used by formats/text.py);
model text has them removed (`clean`) before it becomes a commit or a skill body; terminal output
shows them as visible escapes (`for_terminal`); prompt structure tags inside data are escaped
(`escape_tags`); model text in commit messages is one line behind a prefix (`one_line`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONTROL_CLASS = r"\x00-\x08\x0b\x0e-\x1f\x7f-\x9f"
_INVISIBLE_CLASS = r"\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_CONTROL = re.compile(f"[{_CONTROL_CLASS}]")
_UNSAFE = re.compile(f"[{_CONTROL_CLASS}{_INVISIBLE_CLASS}]")
# A terminal also obeys a lone CR (back to column 1, over what was printed) and FF.
_TERMINAL = re.compile(f"[{_CONTROL_CLASS}{_INVISIBLE_CLASS}\r\x0c]")

#: The tags frames' prompts are built from (ARCHITECTURE, prompt conventions). Inside data they are
#: escaped, so text can neither close the block it sits in nor open a block of its own.
STRUCTURE_TAGS = ("skill", "policy", "change", "retrieved", "tried")
_STRUCTURE_TAG = re.compile(rf"<(/?\s*)({'|'.join(STRUCTURE_TAGS)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class UnsafeChar:
    """One unwanted character found in a text: 1-based `line` and `column`, and the character."""

    line: int
    column: int
    char: str

    def describe(self) -> str:
        """`U+202E (RIGHT-TO-LEFT OVERRIDE)`-style name of the character."""
        import unicodedata

        name = _NAMES.get(self.char) or unicodedata.name(self.char, "")
        return f"U+{ord(self.char):04X}" + (f" ({name})" if name else "")


_NAMES = {"\x00": "NUL", "\x1b": "ESC", "\x07": "BEL", "\x08": "BACKSPACE", "\x7f": "DEL", "\x9b": "CSI"}


def find_unsafe(text: str, *, invisible: bool = True) -> UnsafeChar | None:
    """The first control character in `text` (and, when `invisible`, the first bidirectional or
    zero-width one), or None. Tab, line feed, carriage return and form feed are allowed."""
    match = (_UNSAFE if invisible else _CONTROL).search(text)
    if match is None:
        return None
    start = match.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return UnsafeChar(line, column, match.group())


def clean(text: str) -> str:
    """`text` without control, bidirectional and zero-width characters; CRLF and lone CR become LF.

    For model text on its way into a commit or a skill body (tab, line feed and form feed stay).
    """
    return _UNSAFE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def one_line(text: str) -> str:
    """`clean(text)` with every run of whitespace (line breaks included) made one space.

    Model text placed after a prefix on a commit-message line stays on that line, so it can never
    start a line of its own: no forged trailer (`Frames-Run:`, `Signed-off-by:`), no `#` comment
    line that `git commit --amend` or a rebase would drop, no paragraph break.
    """
    return " ".join(clean(text).split())


def for_terminal(text: str) -> str:
    """`text` with every control, bidirectional and zero-width character shown as a visible escape
    (`\\x1b`, `\\u202e`, `\\x0d` for a lone CR), so nothing printed can move the cursor, retitle or clear
    the terminal, or reorder what the reader sees. Line feeds and tabs stay; a CRLF becomes LF."""

    def visible(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _TERMINAL.sub(visible, text.replace("\r\n", "\n"))


def escape_tags(text: str) -> str:
    """`text` with every prompt structure tag (`<skill`, `</skill`, `<policy`, `<change`, `<retrieved`, `<tried`,
    any case) escaped as `&lt;skill`..., so data pasted into a prompt stays inside its block."""
    return _STRUCTURE_TAG.sub(r"&lt;\1\2", text)


def structure_tags(text: str) -> list[str]:
    """The prompt structure tags in `text` as written (`</skill`, `<Skill`...), in order."""
    return [m.group() for m in _STRUCTURE_TAG.finditer(text)]


def json_escape_unsafe(encoded: str) -> str:
    """JSON text (`json.dumps` output) with every remaining control, bidirectional and zero-width
    character written as a `\\uXXXX` escape: the same JSON value, nothing a terminal obeys."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
