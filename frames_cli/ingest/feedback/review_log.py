"""`frames ingest review-log`: reviewer logs (CSV or JSON Lines) → failing cases, passing cases and priors.

One row is one reviewed interaction: the case input, what the agent did, the reviewer's verdict
and/or the correct answer, an optional comment and category. Columns are found by name (aliases
below, close spellings with a warning) or named with ``--map FIELD=COLUMN``.

How a row is classified:

- **Verdict.** Words like approved/ok/pass/lgtm/yes/true/1 and rejected/fail/wrong/no/false/0 are
  recognised (a JSON or YAML boolean too, so a column ``approved: false`` is a rejection),
  misspellings too (``rejcted``), with a warning. With no verdict, a correct answer that differs
  from the agent's output means rejected, an equal one approved.
- **Rejected, with a correct answer** → a failing case: expected = the correct answer; diagnosis
  symptom = the mismatch (agent said X, reviewer expected Y), notes = the comment (and reviewer),
  evidence = the requirements the comment states (see below).
- **Rejected, no correct answer, the comment states requirements** → a case checked by the
  ``rubric`` judge against them ("The answer must follow: …"): the answer key is the reviewer's
  own sentences. A quoted wrong answer ('The agent wrote "X" which is false') adds "The answer
  must not claim: "X"".
- **Rejected, the comment states no requirement** → only a link, only "be careful", only tone: a
  prior, and the account says why; a story with no requirement in it: a case graded by the whole
  comment as a rubric, marked ``review: needed`` (a person writes the requirement or confirms).
- Expected text is checked by `dedup.default_check`: a short verdict ("refuse") with ``contains``,
  a longer free-text answer with the ``rubric`` judge (a reworded reply must still pass).
- **Approved** → a passing case (expected = the correct answer, else the agent's output), marked
  for the regression pool by its source kind ``review-log-approved``: a reviewer, not an evaluation
  run, judged it, so `pipeline.seed_regression_pool` adds it to the pool at import.
- **Advice only** (verdict like note/advice/fyi) → a prior attached to the matching skills by BM25
  (`ingest.cases.priors`), never a case.
- Anything else (no input, unknown verdict, a rejected row with neither correct answer nor
  comment) is a bad row: reported with file and line, skipped.

The answer key (`ingest.keys.answer_key`): every requirement the comment states (rules, correct figures,
required steps), each a whole sentence as the reviewer wrote it; never a fragment, never policy
text the reviewer did not write, never a link target; the story, tone and names are notes. Read by
the rules of `answer_key.extract_key`, or by the model of ``models.keys`` held to the same contract
(`answer_key_model`). A key the reader is unsure of marks its case ``review: needed``: it counts in
no evaluation until a person writes ``review: confirmed``. Evidence for diagnosis is the key's
sentences, and the policy sentence each paraphrases when one is a whole sentence.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frames_cli.errors import Location
from frames_cli.formats.case import Case, Check, Diagnosis, Source
from frames_cli.formats.problems import Problem
from frames_cli.ingest.cases.dedup import make_case
from frames_cli.ingest.cases.priors import Prior
from frames_cli.ingest.keys.answer_key import NONE_REASONS, AnswerKey
from frames_cli.ingest.keys.answer_key_model import Pair, rule_reader
from frames_cli.ingest.rows.account import Account, AsPrior
from frames_cli.ingest.rows.records import FieldResolver, Record, convert_records, iter_prefixed, read_records
from frames_cli.words import best_sentence

KIND = "review-log"
#: Source kind of approved rows: passing cases a reviewer vouched for (regression-pool seeds).
APPROVED_KIND = "review-log-approved"

ALIASES: dict[str, tuple[str, ...]] = {
    "input": ("input", "question", "request", "customer_message", "user_message", "message", "prompt", "query", "case"),
    "output": (
        "output", "agent_output", "agent_answer", "agent_response", "agent_decision", "agent_reply", "response",
        "answer", "agent_action", "action", "model_output", "completion",
    ),
    "verdict": (
        "verdict", "status", "decision", "review", "outcome", "result", "approved", "accepted", "passed", "is_correct",
        "label", "judgement", "judgment", "rating",
    ),
    "correct": ("correct", "correct_answer", "expected", "expected_output", "should_be", "gold", "correction"),
    "comment": (
        "comment", "comments", "reviewer_comment", "notes", "note", "feedback", "remarks", "qa_notes", "qa_comment",
        "review_notes", "reviewer_notes", "review_comment",
    ),
    "category": ("category", "topic", "type", "queue"),
    "reviewer": ("reviewer", "reviewed_by", "agent_reviewer"),
    "skill": ("skill",),
    "id": ("id", "review_id", "row_id", "ticket", "ticket_id", "case_id", "record_id", "item_id", "ref", "reference"),
}
#: Fields `--map` accepts; ``fields.NAME`` adds a structured input field from a column.
FIELDS = (*ALIASES, "fields.")

_VERDICTS = {
    "approved": (
        "approved", "approve", "accepted", "accept", "ok", "okay", "pass", "passed", "success", "succeeded", "correct",
        "good", "lgtm", "fine", "yes", "y", "true", "t", "1", "👍", "✓", "✔",
    ),
    "rejected": (
        "rejected", "reject", "fail", "failed", "failure", "wrong", "incorrect", "bad", "no", "n", "denied",
        "needs fix", "false", "f", "0", "👎", "✗", "x",
    ),
    "advice": ("advice", "note", "comment", "suggestion", "fyi", "info", "n/a", "na"),
}
_VERDICT_OF = {word: verdict for verdict, words in _VERDICTS.items() for word in words}
# Spelling tolerance for verdicts: "rejcted" (0.92) and "aproved" (0.93) pass, "not sure" does not.
_CLOSE_VERDICT = 0.8


def parse_verdict(raw: str | None, location: Location, problems: list[Problem]) -> str | None:
    """Normalise a reviewer's verdict word: 'approved' | 'rejected' | 'advice', or None when absent.

    A close misspelling is accepted and a warning appended to `problems` (at `location`).

    Raises:
        ValueError: a word that is no known verdict nor close to one.
    """
    if raw is None:
        return None
    word = re.sub(r"[\s_\-.!]+", " ", raw.casefold()).strip()
    if re.fullmatch(r"[01](?: 0+)?", word):
        word = word[0]  # a spreadsheet's 1.0 / 0.0
    if word in _VERDICT_OF:
        return _VERDICT_OF[word]
    close = difflib.get_close_matches(word, list(_VERDICT_OF), n=1, cutoff=_CLOSE_VERDICT)
    if not close:
        raise ValueError(
            f"unknown verdict {raw!r} (use approved/rejected, yes/no, true/false, 1/0, pass/fail or advice)"
        )
    problems.append(Problem(location, f"verdict {raw!r} read as {_VERDICT_OF[close[0]]!r}", "warning"))
    return _VERDICT_OF[close[0]]


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and " ".join(a.casefold().split()) == " ".join(b.casefold().split())


#: The rubric of a rejected row whose comment states no requirement: the whole comment.
WHOLE_COMMENT = "The answer must satisfy this reviewer's comment: "
# A policy sentence is evidence only when it is a whole sentence of prose, not a cut or markup.
_WHOLE_POLICY = re.compile(r"^[A-Z0-9\"“(].*[.!?:)\"”]$")


def policy_evidence(
    requirements: Sequence[str], claims: Sequence[str], policy: Sequence[str], threshold: float
) -> list[str]:
    """Diagnosis evidence: the requirements, then for each requirement and each quoted wrong claim
    the policy sentence it paraphrases (`text.best_sentence` at `threshold`), when that sentence is
    whole prose (capitalised, closed by punctuation, no link or template markup)."""
    out = list(requirements)
    for text in (*requirements, *claims):
        match = best_sentence(text, policy, threshold)
        sentence = match[0] if match else ""
        if (
            sentence and sentence not in out and _WHOLE_POLICY.match(sentence)
            and not re.search(r"\]\(|\{%|https?://", sentence)
        ):
            out.append(sentence)
    return out


def rubric_check(rules: Sequence[str], rejected: Sequence[str] = ()) -> tuple[str, Check]:
    """(expected text, rubric check) for a failure known only by the rules it broke and the wrong
    claims a reviewer quoted.

    The judge grades the answer against the rules; the same text is the case's `expected`, so two
    sources reporting the same input and rules are one case (`dedup`).
    """
    parts = (["The answer must follow: " + " ".join(rules)] if rules else []) + [
        f'The answer must not claim: "{c}".' for c in rejected
    ]
    return " ".join(parts), Check("rubric")


@dataclass
class ReviewLogConverter:
    """Turns review-log rows into cases and priors (a `Converter`; rules in the module docstring).

    Args:
        path: the log (CSV, TSV, JSON Lines or YAML).
        mapping: canonical field → column (`--map`), over the aliases in `ALIASES`.
        fmt: format overriding the suffix.
        policy: sentences of the workspace's policies, for grounding rules in policy text.
        evidence_match: `ingest.evidence_match`.
        category: category for rows that name none (`ingest.category`).
        shown: the file's name in locations and case references (relative to the workspace).
        read_keys: reads the answer keys of (comment, request) pairs in one batch
            (`answer_key_model.rule_reader`, or `workspace_reader` for `models.keys`).

    After `convert`: `problems` holds bad rows (errors, skipped) and fall-backs (warnings), each
    with file and line; `priors` holds (advice, skill the row named or None) for advice-only rows;
    `account` the mapping and every row's fate, with each rejected row's comment and key.
    """

    path: Path
    mapping: dict[str, str] = field(default_factory=dict)
    fmt: str | None = None
    policy: Sequence[str] = ()
    evidence_match: float = 0.6
    category: str = "uncategorized"
    shown: str | None = None
    kind: str = KIND
    read_keys: Callable[[Sequence[Pair]], list[AnswerKey]] = rule_reader
    problems: list[Problem] = field(default_factory=list, init=False)
    priors: list[tuple[Prior, str | None]] = field(default_factory=list, init=False)
    account: Account = field(default_factory=Account, init=False)
    _keys: dict[int, AnswerKey] = field(default_factory=dict, init=False, repr=False)

    def convert(self) -> list[Case]:
        """Read the log and classify every row; the cases in file order.

        Raises:
            InputError: the file cannot be read at all (see `records.read_records`).
            BudgetExceeded: `models.keys` spent the budget.
        """
        read = read_records(Path(self.path), FieldResolver(self.mapping, ALIASES), self.fmt, shown=self.shown)
        self.priors, self.problems, self.account = [], [], Account()
        # Every comment is read in one batch (one model call each, concurrently, when a model reads).
        commented = [r for r in read.records if r.text("comment")]
        keys = self.read_keys([(r.text("comment"), r.text("input")) for r in commented])
        self._keys = {id(r): k for r, k in zip(commented, keys)}
        cases = convert_records(
            read, self._row, self.problems, account=self.account, passing=lambda c: c.source.kind == APPROVED_KIND
        )
        for record in commented:
            self.account.annotate(record.location, record.text("comment"), self._keys[id(record)])
        return cases

    def _row(self, record: Record) -> Case | AsPrior:
        """The case of one row, or AsPrior when the row was advice (then added to `priors`)."""
        ref = record.ref()
        comment = record.text("comment")
        verdict = parse_verdict(record.text("verdict"), record.location, self.problems)
        output, correct = record.text("output"), record.text("correct")
        if verdict is None and correct is not None and output is not None:
            verdict = "approved" if _same(output, correct) else "rejected"
        text = record.text("input")
        if verdict == "advice" or (verdict is None and correct is None):
            if comment is None:
                raise ValueError("no verdict, correct answer or comment: nothing to learn from")
            why = "the verdict says advice" if verdict == "advice" else "no verdict and no correct answer"
            return self._advice(comment, ref, record, why)
        if text is None:
            raise ValueError("no case input (map the column with --map input=COLUMN)")
        fields = dict(iter_prefixed(record, "fields."))
        category = record.text("category") or self.category
        notes = " — ".join(
            filter(None, (comment, f"reviewer: {record.text('reviewer')}" if record.text("reviewer") else None))
        )
        if verdict == "approved":
            # The reviewer's correction wins; else the approved output itself is the expected answer.
            answer = "correct" if correct is not None else "output" if output is not None else None
            if answer is None:
                if comment is None:
                    raise ValueError(
                        "approved, but neither the agent's output nor a correct answer is given (map the column with "
                        "--map output=COLUMN)"
                    )
                return self._advice(
                    comment, ref, record,
                    "approved, but neither the agent's output nor a correct answer is given (--map output=COLUMN)",
                )
            return make_case(APPROVED_KIND, ref, text=text, fields=fields, expected=record.values[answer],
                             category=category, diagnosis=Diagnosis(notes=notes))
        made = functools.partial(make_case, text=text, fields=fields, category=category)
        return self._rejected(record, ref, comment, output, correct, notes, made)

    def _rejected(
        self, record: Record, ref: str, comment: str | None, output: str | None, correct: str | None, notes: str,
        made: Callable[..., Case],
    ) -> Case | AsPrior:
        """The case of a rejected row (`made` makes it, given its kind, expected answer and more), or AsPrior
        when its comment states nothing a right answer can be graded on."""
        key = self._keys.get(id(record)) or AnswerKey([], none="empty")
        evidence = policy_evidence(key.requirements, key.rejected, self.policy, self.evidence_match)
        if correct is not None:
            symptom = (
                f"agent answered {output!r}; reviewer expected {correct!r}"
                if output
                else f"agent gave no answer; reviewer expected {correct!r}"
            )
            return made(
                KIND, ref, expected=record.values["correct"],
                diagnosis=Diagnosis(symptom=symptom, notes=notes, evidence=evidence),
            )
        symptom = f"reviewer rejected {output!r}" if output else "reviewer rejected the answer"
        if key.requirements or key.rejected:
            rubric, check = rubric_check(key.requirements, key.rejected)
            case = made(
                KIND, ref, expected=rubric, check=check,
                diagnosis=Diagnosis(symptom=symptom, notes=notes, evidence=evidence),
            )
            case.review = "needed" if key.unsure else None
            return case
        if comment is None:
            raise ValueError("rejected, but neither a correct answer nor a comment says what was wrong")
        if key.none != "narrative":
            # Only a link, a warning or tone: nothing a right answer can be graded on.
            return self._advice(
                comment, ref, record, f"rejected, but {NONE_REASONS[key.none]}; no correct answer is given"
            )
        # A story with no requirement in it: the whole comment is the rubric, until a person writes the requirement.
        case = made(
            KIND, ref, expected=WHOLE_COMMENT + " ".join(comment.split()), check=Check("rubric"),
            diagnosis=Diagnosis(symptom=symptom, notes=notes, evidence=evidence),
        )
        case.review = "needed"
        return case

    def _advice(self, comment: str, ref: str, record: Record, why: str) -> AsPrior:
        self.priors.append((Prior(comment, Source(KIND, ref)), record.text("skill")))
        return AsPrior(why)
