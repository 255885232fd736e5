"""Credential shapes in text: detect-secrets' maintained rule set (Yelp) plus the shapes it lacks.

The rules are the regular expressions of detect-secrets' pattern plugins (AWS, Azure, Discord,
GitHub, GitLab, JWT, Mailchimp, npm, OpenAI, private keys, PyPI, SendGrid, Slack, Square, Stripe,
Telegram, Twilio, credentials in URLs), read from the installed package, so its releases update
them. Its entropy and keyword plugins are left out: they flag ordinary policy text (long words,
"password must be reset"). Added here: Google API keys (`AIza…`), OpenAI/Anthropic keys in their
current forms (`sk-proj-…`, `sk-ant-…`, which detect-secrets 1.5 matches only in the legacy
`T3BlbkFJ` form), AWS secret keys written without quotes, bearer tokens and `api_key=` values.
A rule whose matches all start with a literal runs only on texts that hold it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

#: What a credential is replaced with wherever frames writes text.
REDACTED = "[REDACTED]"

#: detect-secrets plugins whose patterns are used (module, class).
PLUGINS = (
    ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)

#: Shapes detect-secrets does not cover (name, pattern).
EXTRA_RULES = (
    ("Google API key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("OpenAI or Anthropic key", r"(?<![A-Za-z0-9])sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("AWS secret access key", r"(?i:aws[^\"\n]{0,20}?secret[^\"\n]{0,20}?[=:]\s*'?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+]))"),
    ("bearer token", r"(?<=Bearer )[A-Za-z0-9_\-\.=]{8,}"),
    ("api_key value", r"(?<=api_key=)[^\s&\"']{8,}"),
)


@dataclass(frozen=True)
class SecretHit:
    """One credential found: the rule's `kind`, 1-based `line`, and the span [start, end) in the text."""

    kind: str
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    #: A literal every match contains (lower case when the rule ignores case), or None. A text
    #: without it cannot match, so the regex is skipped: most prompts hold no `gh`, `xox`, `AIza`,
    #: `k_live_`, ..., and a scan costs a few substring searches instead of 40 regex passes.
    required: str | None
    ignore_case: bool


def _required(pattern: re.Pattern[str]) -> str | None:
    """The longest literal text every match of `pattern` contains (lower case when it ignores case),
    or None when there is none of two characters or more (see `_Rule.required`).

    Read from the parsed pattern: runs of literals in its top-level sequence, in a positive
    lookbehind, or in a group that is itself in that sequence, are in every match.
    """
    # typeshed stubs only the deprecated alias sre_parse, not re._parser (its name since 3.11).
    import re._parser as sre_parse  # type: ignore[import-not-found]

    runs: list[str] = []

    def walk(items: list) -> None:
        run = ""
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                run += chr(arg)
                continue
            runs.append(run)
            run = ""
            if name == "SUBPATTERN":
                walk(list(arg[-1]))
            elif name == "ASSERT" and arg[0] == -1:
                walk(list(arg[1]))
        runs.append(run)

    walk(list(sre_parse.parse(pattern.pattern, pattern.flags)))
    best = max(runs, key=len, default="")
    if len(best) < 2:
        return None
    return best.lower() if pattern.flags & re.IGNORECASE else best


@functools.lru_cache(maxsize=1)
def _rules() -> tuple[_Rule, ...]:
    """Every rule: detect-secrets' pattern plugins, then EXTRA_RULES."""
    import importlib

    rules = []
    for module, name in PLUGINS:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        rules += [
            _Rule(plugin.secret_type, pattern, _required(pattern), bool(pattern.flags & re.IGNORECASE))
            for pattern in plugin.denylist
        ]
    for kind, body in EXTRA_RULES:
        pattern = re.compile(body)
        rules.append(_Rule(kind, pattern, _required(pattern), bool(pattern.flags & re.IGNORECASE)))
    return tuple(rules)


def find_secrets(text: str) -> list[SecretHit]:
    """Every credential-shaped span of `text`, in order; overlapping spans are merged into the first."""
    lowered: str | None = None
    spans: list[tuple[int, int, str]] = []
    for rule in _rules():
        if rule.required is not None:
            haystack = text
            if rule.ignore_case:
                lowered = text.lower() if lowered is None else lowered
                haystack = lowered
            if rule.required not in haystack:
                continue
        spans += [(m.start(), m.end(), rule.kind) for m in rule.pattern.finditer(text) if m.end() > m.start()]
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), merged[-1][2])
        else:
            merged.append((start, end, kind))
    return [SecretHit(kind, text.count("\n", 0, start) + 1, start, end) for start, end, kind in merged]


def redact_secrets(text: str, replacement: str) -> str:
    """`text` with every credential-shaped span (`find_secrets`) replaced by `replacement`."""
    hits = find_secrets(text)
    if not hits:
        return text
    out, last = [], 0
    for hit in hits:
        out += [text[last : hit.start], replacement]
        last = hit.end
    return "".join(out) + text[last:]


def redact_data(obj: Any) -> Any:
    """`obj` (plain JSON data) with credentials in every string, keys included, replaced by REDACTED:
    value by value, so the JSON stays valid."""
    if isinstance(obj, str):
        return redact_secrets(obj, REDACTED)
    if isinstance(obj, (list, tuple)):
        return [redact_data(v) for v in obj]
    if isinstance(obj, dict):
        return {redact_data(k): redact_data(v) for k, v in obj.items()}
    return obj
