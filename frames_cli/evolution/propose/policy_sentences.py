"""The policy's own sentences, by section: what the rewrite's duplicate check never counts as a
rule stated twice.

A policy often puts near-alike rules side by side ("1 free checked bag for each economy
passenger" / "... each basic economy passenger"; "If the price ... is higher ..., the user is
required to pay for the difference." / "... lower ..., refunded the difference."). Written into
one skill they are two rules, and a check that asks the rewriter to state them once asks it to
lose one. The same policy can also repeat one rule in two sections ("All payment methods must
already be in user profile ..." under Book flight, "The payment method must already be in user
profile ..." under Modify flight): in one skill that is a repeat. So two policy sentences are
kept apart only when one section of one document holds both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from frames_cli.evolution.propose.rules import rule_sentences, sentence_key

# A line that opens a block of its own: a list item (bullet, number, task box), a blockquote, a table row.
_BLOCK_START = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s|\d+[.)]\s|\|)")


def _blocks(lines: list[str]) -> list[str]:
    """The text blocks of some reading-view lines: a paragraph's lines (a hard-wrapped sentence)
    joined into one; each list item, with the lines that continue it, one block; table rows left
    out (they are not rules to `duplicate_pairs` either)."""
    blocks: list[list[str]] = []
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            blocks.append([])
            continue
        if _BLOCK_START.match(line) or not blocks or not blocks[-1]:
            blocks.append([line.strip()])
        else:
            blocks[-1].append(line.strip())
    return [" ".join(b) for b in blocks if b and not b[0].startswith("|")]


def policy_sections(files: Mapping[str, bytes]) -> dict[str, frozenset[str]]:
    """`rules.sentence_key` of every policy sentence → the sections that hold it ("file:line" of
    the section's heading).

    Args:
        files: workspace-relative path → bytes, as `GitStore.read_files(base, "policies/")` gives.
            Read as coldstart reads them (`formats.policy.parse_policy`: front matter, template tags
            and comments left out, the text a skill body is made of); companion files (LICENSE,
            README, ...), hidden files and files that are not readable policy are skipped.
    """
    from frames_cli.formats.policy import parse_policy_files

    found: dict[str, set[str]] = {}
    # Unreadable policy is named by retrieval (`policy_passages`); here it only exempts nothing.
    for doc in parse_policy_files(files)[0]:
        stack = [doc.root]
        while stack:
            section = stack.pop()
            stack.extend(section.children)
            where = f"{doc.file}:{section.start}"
            for block in _blocks(doc.view[section.start - 1 : section.own_end]):
                for sentence in rule_sentences(block):
                    found.setdefault(sentence_key(sentence), set()).add(where)
    return {key: frozenset(places) for key, places in found.items()}
