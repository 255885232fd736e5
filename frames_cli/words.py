"""Word-level text helpers shared by the converters, coldstart, the guards, retrieval and the simulator: tokens,
sentences, rule detection, overlap."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

# Function words carry no topic; without this list BM25 and overlap match on "the" and "to".
# Every question word is one ("how", "why" and "where" too): a user's "How do I ...?" otherwise
# matched each FAQ heading "How to ..." and "How should I ...?" rather than the section it asked about.
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her his i if in into is it its "
    "me my no not of on or our she so than that the their them then there these they this to too up us was we were "
    "what when which who whom whose how why where will with would you your yes also just any all some per please use "
    "new make sure "
    "get got tell say ask next time".split()
)

# Chinese, Japanese and Korean script, written without spaces between words.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORD = re.compile(rf"[a-z0-9]+(?:'[a-z]+)?|[{CJK}]+")
_CJK_RUN = re.compile(rf"[{CJK}]")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")

# A sentence states a rule when it carries a deontic or eligibility marker; "should" alone is
# advice in reviewer speech ("you should be friendlier"), so it only counts in "should not/never".
_RULE = re.compile(
    r"\b(must|never|always|only|not allowed|allowed to|required|requires?|cannot|can't|can not|may not|should not|"
    r"shouldn't|do not|don't|(?:not |in)?eligible|prohibited|forbidden|not permitted|has to|have to|needs? to|"
    r"mandatory|obligatory|compulsory|is (?:not )?permitted|per (?:the )?policy|policy (?:says|states|requires)|"
    r"according to (?:the )?policy|at most|at least|no more than|within \d+|but not)\b"
    # Chinese deontic markers (must, shall, must not, prohibited, only): no word boundaries there.
    r"|必须|应当|不得|禁止|严禁|不准|不应|只能|务必",
    re.IGNORECASE,
)
# A quoted span of at least four words is taken as the reviewer quoting the rule itself...
_QUOTE = re.compile(r"[\"“']([^\"”']{12,})[\"”']")
# ...unless the reviewer is quoting the agent's wrong answer: "the agent wrote/said "..."", or a
# quote followed by "which is false/wrong/incorrect/not true".
_QUOTED_AGENT = re.compile(
    r"\b(?:agent|bot|assistant|model|it|they|he|she)\s+(?:\w+ly\s+)?(?:wrote|said|says|told|replied|answered|"
    r"responded|claimed|claims|stated|states|suggested|promised|offered|asserted)\b[^\"“]{0,40}$",
    re.IGNORECASE,
)
_DENIED_AFTER = re.compile(
    r"^[\s,.;:)-]*(?:which|that|this)?\s*(?:is|was|are|were)\s+(?:false|wrong|incorrect|not true|untrue|a mistake|"
    r"inaccurate|misleading)\b",
    re.IGNORECASE,
)


# Crude suffix stripping (no stemmer library is pinned): "refunded", "refundable" and "refunds" all
# become "refund", which is what matching a reviewer's paraphrase against policy text needs.
_SUFFIXES = ("ations", "ation", "able", "ing", "ed", "es", "s")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 4 and word.endswith(suffix):
            stem = word[: -len(suffix)]
            # "cancelled" → "cancell" → "cancel", to meet "cancel" and "cancels".
            return stem[:-1] if stem[-1] == stem[-2] and stem[-1] not in "aeiousz" else stem
    return word


def tokens(text: str) -> list[str]:
    """Lower-case, crudely stemmed words of `text` without stop words."""
    out: list[str] = []
    for word in _WORD.findall(text.casefold()):
        if _CJK_RUN.match(word):
            # No spaces to cut at: overlapping character bigrams, as Lucene's CJKAnalyzer indexes
            # such text, so a two-character word matches wherever it is written.
            out += [word[i : i + 2] for i in range(len(word) - 1)] or [word]
        elif word not in STOPWORDS:
            out.append(_stem(word))
    return out


def word_count(text: str) -> int:
    """Words of `text` for length limits: space-separated words, each CJK character counted as one
    (Chinese words are one to four characters, so this is lenient, never strict)."""
    return len(_CJK_RUN.sub(" x ", text).split())


@functools.lru_cache(maxsize=4096)
def token_set(text: str) -> frozenset[str]:
    """The distinct `tokens` of `text`, cached: policy sentences are compared with every row."""
    return frozenset(tokens(text))


def sentences(text: str) -> list[str]:
    """`text` split into sentences and list items, stripped, Markdown bullets and emphasis removed."""
    parts = (re.sub(r"^[\s>*#-]+|\*\*", "", p).strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if p]


def _quotes(text: str) -> tuple[list[str], list[str], str]:
    """(quoted rules, quoted wrong answers, `text` with the wrong answers cut out) of a comment."""
    rules: list[str] = []
    wrong: list[str] = []
    rest = text
    for m in _QUOTE.finditer(text):
        quote = m.group(1).strip()
        if len(quote.split()) < 4:
            continue
        if _QUOTED_AGENT.search(text[: m.start()]) or _DENIED_AFTER.match(text[m.end():]):
            wrong.append(quote)
            rest = rest.replace(m.group(0), "…")
        else:
            rules.append(quote)
    return rules, wrong, rest


def rule_sentences(text: str) -> list[str]:
    """The parts of `text` that state a rule: quoted spans of four or more words, else marked sentences.

    Quotes win because a reviewer who quotes the policy names the rule exactly, except a quote of
    the agent's own wrong answer (`rejected_claims`), which is cut out first; otherwise each
    sentence with a rule marker (must, never, only, mandatory, not eligible, at most, per
    policy, ...) counts.
    """
    quotes, _, rest = _quotes(text)
    if quotes:
        return quotes
    return [s for s in sentences(rest) if _RULE.search(s) and s.strip("…. ")]


def overlap(part: str | Iterable[str], whole: str | Iterable[str]) -> float:
    """Share of the distinct content words of `part` that also occur in `whole` (0.0 when `part` has none).

    Asymmetric on purpose: an evidence sentence is "found in" a long section when its words are
    there, however long the section is.
    """
    a = token_set(part) if isinstance(part, str) else set(part)
    if not a:
        return 0.0
    b = token_set(whole) if isinstance(whole, str) else set(whole)
    return len(a & b) / len(a)


def best_sentence(claim: str, candidates: Iterable[str], threshold: float) -> tuple[str, float] | None:
    """The candidate sentence that best covers `claim`'s words, if its overlap is at least `threshold`.

    Overlap is measured both ways and the smaller taken, so a long policy sentence that happens to
    contain a short claim's two words does not win over a sentence that says the same thing.
    """
    claim_tokens = token_set(claim)
    best: tuple[str, float] | None = None
    for candidate in candidates:
        cand_tokens = token_set(candidate)
        score = min(overlap(claim_tokens, cand_tokens), overlap(cand_tokens, claim_tokens))
        if score >= threshold and (best is None or score > best[1]):
            best = (candidate, score)
    return best


def policy_sentences(policies_dir: Path) -> list[str]:
    """Every sentence of every ``*.md`` / ``*.txt`` file under `policies_dir` (empty when it is missing).

    Files that are not UTF-8 are read as Latin-1: this feeds fuzzy matching only, never output.
    """
    out: list[str] = []
    for path in sorted(Path(policies_dir).rglob("*")):
        if path.suffix.lower() in (".md", ".txt", ".markdown") and path.is_file():
            data = path.read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("latin-1")
            out.extend(sentences(text))
    return out
