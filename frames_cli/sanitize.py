"""Text from models, cases, reviewers and policies is data: the
one place that decides which characters and tags it may carry.

Three kinds of character are never wanted in text frames commits, shows or sends to a model,
each defined by its Unicode general category (`unicodedata`, so the sets follow the Unicode
version of the running Python, not a list of our own):
- control characters (Cc: C0 except tab, line feed, carriage return and form feed; DEL; C1) and
  lone surrogates (Cs, which a JSON `\\ud800` escape makes and no UTF-8 file can hold), which a
  terminal obeys (ESC starts title, clear-screen and colour sequences; BEL, BS, CR overwrite; CSI
  U+009B is ESC [ in one byte); NUL above all, which git refuses in a commit message and which
  turns a file "binary" in a diff;
- format characters (Cf): bidirectional controls (U+202A–U+202E, U+2066–U+2069, LRM, RLM, ALM),
  which reorder what a reviewer sees against what the bytes say ("Trojan Source", CVE-2021-42574);
  zero-width and invisible ones (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E, the soft hyphen)
  and the tag characters (U+E0000–U+E007F), which hide text from a reviewer, carry hidden
  instructions to a model, and split words a keyword check would find;
The second kind is "invisible". The line and paragraph separators (U+2028, U+2029) are neither:
a policy may hold them (they are line breaks to some readers and not to others, so a value that
must stay on one line refuses them, `unsafe_value(one_line=True)`, and so does a skill's front
matter, formats/skill_file.py). User files holding any of them are refused with their
line (`find_unsafe`, used by formats/text.py); values read from YAML or JSON escapes (`"\\e"`,
`"\\u202e"`) are checked once parsed (`unsafe_value`); model text has them removed (`clean`)
before it becomes a commit or a skill body; terminal output shows them as visible escapes
(`for_terminal`); prompt structure tags inside data are escaped (`escape_tags`); model text in
commit messages is one line behind a prefix (`one_line`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: Tab, line feed, carriage return and form feed: layout a text file may hold.
_LAYOUT = frozenset("\t\n\r\x0c")
#: What breaks a line to some reader besides line feed and carriage return.
LINE_BREAKS = frozenset("\t\n\r\x0b\x0c\x85\u2028\u2029")
_CONTROL_CATEGORIES = frozenset({"Cc", "Cs"})
_INVISIBLE_CATEGORIES = frozenset({"Cf"})
# The ASCII controls (the only unsafe ASCII characters) and every non-ASCII character: a text
# without any (most text) needs no further look; otherwise its distinct characters are judged by
# category, each once.
_SUSPECT = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\U0010ffff]")


@lru_cache(maxsize=65536)
def char_kind(char: str) -> str:
    """"control", "invisible" or "" (allowed) for one character, by its Unicode general category:
    Cc and Cs are control, Cf invisible; tab, line feed, carriage return and form feed are allowed."""
    if char in _LAYOUT:
        return ""
    category = unicodedata.category(char)
    return "control" if category in _CONTROL_CATEGORIES else "invisible" if category in _INVISIBLE_CATEGORIES else ""


def _unsafe_set(text: str, invisible: bool = True, extra: str = "") -> set[str]:
    """The distinct characters of `text` that are control (and,
    when `invisible`, invisible) characters, or in `extra`."""
    if _SUSPECT.search(text) is None and not any(c in text for c in extra):
        return set()
    wanted = ("control", "invisible") if invisible else ("control",)
    return {c for c in set(text) if c in extra or char_kind(c) in wanted}


def _class(chars: set[str]) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]")


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
        name = _NAMES.get(self.char) or unicodedata.name(self.char, "")
        return f"U+{ord(self.char):04X}" + (f" ({name})" if name else "")


_NAMES = {"\x00": "NUL", "\x1b": "ESC", "\x07": "BEL", "\x08": "BACKSPACE", "\x7f": "DEL", "\x9b": "CSI"}


def find_unsafe(text: str, *, invisible: bool = True) -> UnsafeChar | None:
    """The first control character in `text` (and, when `invisible`, the first invisible one:
    format, bidirectional, zero-width, tag), or None. Tab, line feed, carriage return and form
    feed are allowed."""
    bad = _unsafe_set(text, invisible)
    if not bad:
        return None
    start = _class(bad).search(text).start()  # type: ignore[union-attr]
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return UnsafeChar(line, column, text[start])


def unsafe_value(
    value: Any, *, invisible: bool = True, one_line: bool = False, _path: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], UnsafeChar] | None:
    """The first string inside parsed data (YAML or JSON: strings, lists, mappings and their keys)
    holding a character `find_unsafe` refuses, as (key path, character); None when there is none.

    What a file's raw text cannot show is found here: `"\\e]0;x\\a"` in YAML and `"\\u001b"` in
    JSON are plain escapes in the file and an ESC and a BEL once read. `one_line` also refuses
    line breaks of any reader, tabs and form feeds (`LINE_BREAKS`: ids, names, categories, one
    line of a table or a message).
    """
    stack: list[tuple[tuple[str, ...], Any]] = [(_path, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            bad = find_unsafe(item, invisible=invisible)
            if bad is None and one_line:
                at = next((i for i, c in enumerate(item) if c in LINE_BREAKS), None)
                bad = None if at is None else UnsafeChar(1, at + 1, item[at])
            if bad is not None:
                return path, bad
        elif isinstance(item, dict):
            for key, sub in reversed(list(item.items())):
                stack.append(((*path, str(key)), sub))
                if isinstance(key, str):
                    stack.append(((*path, key), key))
        elif isinstance(item, (list, tuple)):
            stack.extend(((*path, str(i)), sub) for i, sub in reversed(list(enumerate(item))))
    return None


def clean(text: str) -> str:
    """`text` without control and invisible characters; CRLF, lone CR and the line and paragraph
    separators (U+2028, U+2029) become LF, so every reader sees the same lines.

    For model text on its way into a commit or a skill body (tab, line feed and form feed stay).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
    bad = _unsafe_set(text)
    return _class(bad).sub("", text) if bad else text


def one_line(text: str) -> str:
    """`clean(text)` with every run of whitespace (line breaks included) made one space.

    Model text placed after a prefix on a commit-message line stays on that line, so it can never
    start a line of its own: no forged trailer (`Frames-Run:`, `Signed-off-by:`), no `#` comment
    line that `git commit --amend` or a rebase would drop, no paragraph break.
    """
    return " ".join(clean(text).split())


def cut_at_word(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a word, with an ellipsis when cut (a progress line's detail)."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def for_terminal(text: str) -> str:
    """`text` with every control and invisible character shown as a visible escape (`\\x1b`,
    `\\u202e`, `\\x0d` for a lone CR, `\\x0c` for FF), so nothing printed can move the cursor,
    retitle or clear the terminal, or reorder what the reader sees. Line feeds and tabs stay; a
    CRLF becomes LF."""
    text = text.replace("\r\n", "\n")
    bad = _unsafe_set(text, extra="\r\x0c")
    if not bad:
        return text

    def visible(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return _class(bad).sub(visible, text)


def escape_tags(text: str) -> str:
    """`text` with every prompt structure tag (`<skill`, `</skill`, `<policy`, `<change`, `<retrieved`, `<tried`,
    any case) escaped as `&lt;skill`..., so data pasted into a prompt stays inside its block."""
    return _STRUCTURE_TAG.sub(r"&lt;\1\2", text)


def structure_tags(text: str) -> list[str]:
    """The prompt structure tags in `text` as written (`</skill`, `<Skill`...), in order."""
    return [m.group() for m in _STRUCTURE_TAG.finditer(text)]


def json_escape_unsafe(encoded: str) -> str:
    """JSON text (`json.dumps` output) with every remaining control and invisible character
    written as a `\\uXXXX` escape (a surrogate pair beyond the BMP): the same JSON value, nothing
    a terminal obeys."""
    bad = _unsafe_set(encoded)
    if not bad:
        return encoded

    def escaped(match: re.Match[str]) -> str:
        code = ord(match.group())
        if code < 0x10000:
            return f"\\u{code:04x}"
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

    return _class(bad).sub(escaped, encoded)
