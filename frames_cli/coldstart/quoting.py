"""Which sentence of a section a verbatim description quotes: the document's term weights
(`TermWeights`), the ways a sentence may be quoted, and the section's sentences ranked by how well
each says what the section decides (`ranked`, used by `coldstart.describe`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from frames_cli.coldstart.lint import defects
from frames_cli.coldstart.naming import strip_numbering
from frames_cli.coldstart.prose import Sentence, sentences
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.policy import PolicyDocument, Section
from frames_cli.words import tokens, word_count

# Fewest words of a sentence quoted.
_MIN_WORDS = 5
# A leading "Note:", "A:" or "Rental Cars:" (one to three words) is a label, not part of the sentence quoted.
_LABEL_LEAD = re.compile(r"^(?:[A-Za-z][\w/&'’-]*(?: [A-Za-z][\w/&'’-]*){0,2})\s*:\s+(?=\S)")
# A sentence that leans on the one before it ("Otherwise, carry on", "If yes, STOP", "It is not
# possible ...") says little alone.
_ANAPHORA = re.compile(
    r"^(?:otherwise|if (?:yes|no|not|so)|then|also|however|but|and|or|so|this|that|these|those|it|they|there|here|"
    r"in addition|additionally|alternatively|for example|instead|again|once done|in that case|such|continue)\b"
    r"|\b(?:in the meantime|at this point|as above|as well)\b",
    re.IGNORECASE,
)
# An aside in parentheses of two words or more ("(e.g., fees are charged for using the card)"),
# left out of a quoted sentence that would not fit with it; "(877)" and "(OLU)" stay.
_ASIDE = re.compile(r"\s*\((?=[^()]*[A-Za-z]{2,}[^()]*\s[^()]*[A-Za-z])[^()]*\)")
# A placeholder to fill in ("[dates]", "[ home_location ]"): template text, not a rule.
_PLACEHOLDER = re.compile(r"\[[^\]]*\]")


@dataclass(frozen=True)
class TermWeights:
    """Inverse document frequency of words over one document's sections (its own text only),
    and the sentences it writes in more than one section (lower case, spaces collapsed).

    idf(w) = ln((N + 1) / (df(w) + 1)) + 1, N sections, df(w) sections holding w (the smoothed
    form scikit-learn uses).
    """

    idf: dict[str, float]
    default: float
    repeated: frozenset[str] = frozenset()

    @classmethod
    def of(cls, doc: PolicyDocument) -> TermWeights:
        """The weights of `doc`: each heading section's own lines count as one section."""
        texts: list[tuple[str, int]] = []

        def walk(section: Section) -> None:
            texts.append(("\n".join(doc.view[section.start - 1 : section.own_end]), section.start))
            for child in section.children:
                walk(child)

        walk(doc.root)
        df: Counter[str] = Counter()
        seen: Counter[str] = Counter()
        for text, first in texts:
            df.update(set(tokens(text)))
            found = sentences(list(enumerate(text.split("\n"), first)))
            seen.update({_said(s.text) for s in found if s.words >= _MIN_WORDS})
        n = len(texts)
        repeated = frozenset(s for s, c in seen.items() if c > 1)
        return cls({w: math.log((n + 1) / (c + 1)) + 1 for w, c in df.items()}, math.log(n + 1) + 1, repeated)

    def weight(self, stem: str) -> float:
        """idf of a stem (`words.tokens`); an unseen one weighs as a word in no section."""
        return self.idf.get(stem, self.default)


def _said(text: str) -> str:
    """A sentence as compared with the document's other sentences: lower case, spaces collapsed."""
    return " ".join(text.split()).lower()


def _quotable(s: Sentence) -> list[str]:
    """The ways the sentence may be quoted, longest first: whole, then without its asides in
    parentheses ("(e.g., vendor does not accept credit cards)"), a leading label ("Note:") and
    enclosing parentheses left out; [] when it must not be quoted: a pointer, filler, a question
    or exclamation, a sentence that trails off ("..."), leans on text elsewhere, or has fewer
    than five words."""
    if s.pointer() or s.filler() or s.deictic() or s.text.rstrip(" )\"'”’").endswith(("?", "!", "...", "…")):
        return []
    text = strip_numbering(s.text).strip()
    if text.startswith("(") and text.endswith((")", ").")):
        text = text.lstrip("(").rstrip(".").rstrip(")")
    text = _LABEL_LEAD.sub("", text).strip()
    if word_count(text) < _MIN_WORDS or text.endswith((":", "：")):
        return []
    out = []
    for form in (text, _ASIDE.sub("", text)):
        form = " ".join(form.split()).replace(" ,", ",").replace(" .", ".").rstrip(";,")
        form = form[:1].upper() + form[1:]
        form = form if form.rstrip("\"'”’)").endswith((".", "。")) else form + "."
        # A sentence the source leaves open ("(this threshold is $25 for local vouchers.") reads
        # as cut in a description: it is not quoted.
        if form not in out and word_count(form) >= _MIN_WORDS and not defects(form):
            out.append(form)
    return out


@dataclass(frozen=True)
class Candidate:
    """A sentence a description may quote: its `score` (see `ranked`), the `sentence` and the
    ways it may be quoted (`forms`, longest first)."""

    score: float
    sentence: Sentence
    forms: list[str]

    def fit(self, room: int) -> str:
        """The longest form within `room` characters, "" when none fits."""
        return next((f for f in self.forms if len(f) <= room), "")


def ranked(chunk: Chunk, weights: TermWeights, before: int | None = None, rules: bool = False) -> list[Candidate]:
    """The chunk's quotable sentences (`_quotable`) on lines before `before` (all when None),
    best first (ties: the earlier one); with `rules` (a preamble, quoted as the rules for every
    task), a sentence that states no rule and gives no instruction scores × 0.3: "As an airline
    agent, you can help users book, modify, or cancel flight reservations" read as the entry to
    every task, and a model chose that skill first for 56 of 61 airline requests.

    Score: the sum, over the quoted sentence's distinct stems, of (1 + ln tf) · idf, tf counted
    over the chunk and idf over the document's sections (`TermWeights`), divided by √(stems), so
    a sentence dense in the section's own terms wins, not a long one; then × 1.5 when it states
    a rule or what is needed, or gives an instruction (`Sentence.normative`, `instruction`);
    × (1 + the share of the heading's stems it holds: it says what the section is about);
    × 0.85 for each quotable sentence before it (a section's opening usually says what it is
    about); × 0.4 for a list item (a detail, often a fragment of a lead-in); × 0.3 when it leans on the sentence before
    ("Otherwise, ...", "It is ...", "in the meantime") or holds a placeholder to fill in
    ("[dates]"). A sentence the document writes in two sections or more (an email template's
    "Please reply with your approval") tells neither apart and is never quoted.
    """
    found = chunk.sentences()
    tf = Counter(t for s in found for t in tokens(s.text))
    heading = set(tokens(chunk.heading[-1] if chunk.heading and chunk.kind != "general" else chunk.doc.title))
    out: list[tuple[float, int, Candidate]] = []
    order = 0
    for s in found:
        forms = _quotable(s) if before is None or s.line < before else []
        stems = set(tokens(forms[0])) if forms else set()
        if not stems or _said(s.text) in weights.repeated:
            continue
        score = sum((1 + math.log(tf[t])) * weights.weight(t) for t in stems if tf[t]) / math.sqrt(len(stems))
        score *= 1.5 if s.normative() or s.instruction() else 0.3 if rules else 1.0
        score *= 1 + (len(heading & stems) / len(heading) if heading else 0)
        score *= 0.85**order * (0.4 if s.item else 1.0)
        score *= 0.3 if _ANAPHORA.search(forms[0]) or _PLACEHOLDER.search(forms[0]) else 1.0
        order += 1
        out.append((-score, s.line, Candidate(score, s, forms)))
    return [c for _, _, c in sorted(out, key=lambda x: (x[0], x[1]))]
