"""Answer keys read by a model (`models.keys`), held to the rule
reader's contract: whole sentences of the comment, or none.

The model gets `llm/messages/prompts/answer_key.txt` (the request and the comment) and answers in the
`ANSWER_KEY` schema. Its answer is data, checked against the comment before it becomes a key:

- each requirement must be a sentence of the comment as `comment_text.split_sentences` cuts it
  (compared without case, spacing, quote style or closing punctuation); a run of whole sentences
  is those sentences; a part of one sentence becomes that whole sentence (and the key is unsure:
  a person sees what the model cut); words that are in no sentence of the comment (a paraphrase,
  policy text, a link target) are dropped, and the key is unsure;
- each sentence it keeps must state a requirement as the rule reader reads it: one the rules read
  as narrative (a past event, one person, the agent, a judgement), tone or a note goes to the
  diagnosis notes, not the key (a sentence the rules cannot read stays the model's call); a key
  left with no requirement that way is unsure (docs/decisions/0091-model-keys-held-to-the-rules-reading.md);
- a failed call (after the model layer's retries and repair turn) falls back to the rule reader
  (`answer_key.extract_key`), and the key says so.

So a model can choose differently from the rules, never write a key the reviewer did not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from frames_cli.ingest.keys.answer_key import AnswerKey, extract_key, read_comment, wrong_claims
from frames_cli.ingest.keys.sentence_rules import Sentence
from frames_cli.ingest.keys.comment_text import strip_links

if TYPE_CHECKING:
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.llm.messages.types import ChatReply, ChatRequest
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

ROLE = "keys"
PROMPT = "answer_key"
#: Readings of the rule reader that a model's choice does not overrule: a sentence it finds narrative
#: (a past event, a person, the agent), tone or a note states no requirement whoever chose it.
NOT_A_REQUIREMENT = frozenset({"narrative", "tone", "note"})
#: A comment and the request it was written about (either may be None).
Pair = tuple[str | None, str | None]


def _plain(text: str) -> str:
    """`text` for comparison: link words only, case folded, curly
    quotes straight, spacing and closing punctuation gone."""
    text = strip_links(text)[0].casefold().replace("“", '"').replace("”", '"').replace("’", "'")
    return " ".join(text.split()).strip(" .!?;:")


def comment_sentences(comment: str) -> list[str]:
    """The sentences of `comment` a key may hold: the rule reader's units (`answer_key.read_comment`:
    links reduced to their words, verdict words cut, a lead-in before a colon apart)."""
    return [s.text for s in read_comment(strip_links(comment)[0])]


def whole_sentences(items: Sequence[str], comment: str) -> tuple[list[str], str]:
    """(`items` as whole sentences of `comment`, in the comment's order; why the key is unsure, "" if not).

    Rules in the module docstring: an exact sentence is kept, a run of sentences split, a part of a
    sentence widened to it, anything else dropped.
    """
    sentences = comment_sentences(comment)
    plain = [_plain(s) for s in sentences]
    chosen: set[int] = set()
    doubts: list[str] = []
    for item in items:
        want = _plain(item)
        if not want:
            continue
        exact = [i for i, p in enumerate(plain) if p == want]
        if exact:
            chosen.add(exact[0])
            continue
        inside = [i for i, p in enumerate(plain) if p and p in want]
        if inside and sum(len(plain[i]) for i in inside) >= 0.9 * len(re.sub(r"[ .!?;:]", "", want)) - len(inside):
            chosen.update(inside)
            continue
        part = [i for i, p in enumerate(plain) if want in p]
        if part:
            chosen.add(part[0])
            doubts.append(f"the model cut a sentence; the whole sentence is kept: {sentences[part[0]]!r}")
            continue
        doubts.append(f"the model wrote words that are in no sentence of the comment (dropped): {item!r}")
    return [sentences[i] for i in sorted(chosen)], "; ".join(doubts)


def key_from_reply(comment: str | None, data: dict, model: str) -> AnswerKey:
    """The `AnswerKey` of a model's valid `ANSWER_KEY` answer about `comment` (checked as above)."""
    if not comment or not comment.strip():
        return AnswerKey([], none="empty", by=model)
    chosen, doubt = whole_sentences([str(r) for r in data.get("requirements") or []], comment)
    text, links = strip_links(comment)
    read = []
    for rules in read_comment(text):
        if rules.text not in chosen:
            unchosen = Sentence(rules.text, "note", "not chosen by the model")
            read.append(rules if rules.kind != "requirement" else unchosen)
        elif rules.kind in NOT_A_REQUIREMENT:
            read.append(Sentence(rules.text, rules.kind, f"chosen by the model, but {rules.why}"))
        else:
            read.append(Sentence(rules.text, "requirement", "chosen by the model"))
    requirements = [s.text for s in read if s.kind == "requirement"]
    if chosen and not requirements:
        doubt = "; ".join(filter(None, (doubt, f"the model's requirements state none by the rules: {chosen[0]!r}")))
    unsure = "; ".join(filter(None, (doubt, str(data.get("unsure") or "").strip())))
    none = "" if requirements else (str(data.get("none") or "") or extract_key(comment).none or "narrative")
    return AnswerKey(requirements, read, none=none, unsure=unsure, by=model, links=links, rejected=wrong_claims(text))


def key_request(comment: str, request: str | None) -> ChatRequest:
    """The `ChatRequest` asking role `keys` for the answer key of `comment`."""
    from frames_cli.llm.messages.prompts import render
    from frames_cli.llm.messages.schemas import ANSWER_KEY
    from frames_cli.llm.messages.types import ChatRequest

    prompt = render(PROMPT, request=request or "(not recorded)", comment=comment)
    return ChatRequest(ROLE, [{"role": "user", "content": prompt}], ANSWER_KEY)


class ModelKeyReader:
    """Reads answer keys with the model of role `keys` through `client`, one request per comment.

    Args:
        client: an open `ModelClient`.
        model: the model's name, recorded in each key's `by`.
    """

    def __init__(self, client: ModelClient, model: str):
        self.client = client
        self.model = model

    def read_many(self, pairs: Sequence[Pair]) -> list[AnswerKey]:
        """One key per (comment, request), in order; an empty comment asks nothing.

        Raises:
            BudgetExceeded: the budget ran out (from the model layer).
        """
        asked = [i for i, (comment, _) in enumerate(pairs) if comment and comment.strip()]
        replies = self.client.chat_many([key_request(str(pairs[i][0]), pairs[i][1]) for i in asked]) if asked else []
        by_row: dict[int, ChatReply] = dict(zip(asked, replies))
        return [self._key(comment, by_row.get(i)) for i, (comment, _) in enumerate(pairs)]

    def _key(self, comment: str | None, reply: ChatReply | None) -> AnswerKey:
        if reply is None:
            return AnswerKey([], none="empty", by=self.model)
        if not reply.ok:
            rules = extract_key(comment)
            why = f"the model failed ({reply.error}); read by the rules instead"
            return replace(rules, unsure="; ".join(filter(None, (why, rules.unsure))))
        return key_from_reply(comment, reply.data, self.model)


def rule_reader(pairs: Sequence[Pair]) -> list[AnswerKey]:
    """Keys read by the rules alone (the offline default): `extract_key` of each comment."""
    return [extract_key(comment) for comment, _ in pairs]


def workspace_reader(ws: Workspace, config: FramesConfig) -> Callable[[Sequence[Pair]], list[AnswerKey]]:
    """The key reader an ingest uses: the model of `models.keys` when set (a `ModelClient` opened
    for each batch), else `rule_reader`."""
    model = config.models.keys
    if not model:
        return rule_reader

    def read(pairs: Sequence[Pair]) -> list[AnswerKey]:
        from frames_cli.llm.client.client import ModelClient

        with ModelClient(ws, config) as client:
            return ModelKeyReader(client, model).read_many(pairs)

    return read
