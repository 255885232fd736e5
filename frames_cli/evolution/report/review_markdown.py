"""`frames review` as Markdown: one candidate's motivating failures, blueprint, results, gate verdict with
its sequential looks and attribution, policy amendments and diff, from the `Review` review.py gathers."""

from __future__ import annotations

import re

from frames_cli.evolution.propose.consensus import Change
from frames_cli.formatting import markdown_table, md_text, pct, plural, sample_size, tokens, with_n
from frames_cli.evolution.compare.verdict import gate_detail, sampled_further
from frames_cli.evolution.state.records import Candidate
from frames_cli.evolution.report.review import Review, SkillContext


def _results_cells(review: Review) -> tuple[list[str], list[list[str]]]:
    """Per-category results: S0, parent, candidate, the gate floor and verdict; then overall and tokens."""
    cand, parent, base = review.candidate, review.parent, review.base
    checks = {c["category"]: c for c in cand.gate_details.get("checks", [])}
    header = [
        "category", "S0", f"parent {parent.id}" if parent else "parent", cand.id, "floor (1−ε)·S0", "gate",
        "cases worse / better of n (p)",
    ]
    rows = []
    counts, k = base.case_counts, base.samples
    for cat in sorted(set(base.per_category) | set(cand.per_category)):
        check = checks.get(cat)
        verdict = "—" if check is None else ("pass" if check["passed"] else "**FAIL**")
        if check is not None and check["passed"] and cand.per_category.get(cat) is None:
            # Rejected early elsewhere: a floor of 0 is met by any rate, so the gate passed a
            # category the child never ran; say so rather than a bare "pass" beside "—".
            verdict = "pass (not evaluated)"
        parent_rate = pct(parent.per_category.get(cat)) if parent else "—"
        floor = pct(check["floor"]) if check else "—"
        rows.append([with_n(md_text(cat), counts.get(cat), k), pct(base.per_category.get(cat)), parent_rate,
                     pct(cand.per_category.get(cat)), floor, verdict, _flips(check, k)])
    parent_overall = pct(parent.pass_rate) if parent else "—"
    # An early-rejected child's overall rate is over the cases it ran: its own n beside it.
    own = cand.n_cases if cand.n_cases not in (None, base.n_cases) else None
    rows.append(
        [with_n("**overall**", base.n_cases, k), pct(base.pass_rate), parent_overall,
         with_n(pct(cand.pass_rate), own, k), "", "", ""]
    )
    parent_tokens = tokens(parent.mean_tokens) if parent else "—"
    rows.append(["tokens/case", tokens(base.mean_tokens), parent_tokens, tokens(cand.mean_tokens), "", "", ""])
    return header, rows


def _flips(check: dict | None, k: int) -> str:
    """A category's case-level comparison, `2 / 1 of 5 (p 0.31)`, with the cases whose one-case test
    showed they broke, and the samples per case when the sequential gate compared more than the
    run's `k`; "—" for checks of older runs."""
    if not check or "pass_to_fail" not in check:
        return "—"
    small = ", too few cases" if check.get("too_small") else ""
    broke = f", broke: {', '.join(md_text(cid) for cid in check['broken'])}" if check.get("broken") else ""
    more = f", at k = {check['samples']}" if check.get("samples", k) != k else ""
    return (
        f"{len(check['pass_to_fail'])} / {len(check['fail_to_pass'])} of {check['n']} (p "
        f"{check['p_value']:.2g}{more}{broke}{small})"
    )


def _changed_case_lines(gate: dict) -> list[str]:
    """The cases the gate compared that went from pass to fail and from fail to pass against S0, per
    category (a case passed in fewer / more of its samples than S0 passed it); [] when none or for
    verdicts of older runs."""
    checks = [c for c in gate.get("checks", []) if c.get("pass_to_fail") or c.get("fail_to_pass")]
    if not checks:
        return []
    out = [
        "",
        "Cases the gate compared that changed against S0 (pass → fail: the child passed it in fewer samples than S0):",
        "",
    ]
    for c in checks:
        worse = ", ".join(f"`{md_text(cid)}`" for cid in c.get("pass_to_fail", [])) or "none"
        better = ", ".join(f"`{md_text(cid)}`" for cid in c.get("fail_to_pass", [])) or "none"
        out.append(f"- {md_text(c['category'])}: pass → fail {worse}; fail → pass {better}")
    return out


def sequential_lines(sequential: dict | None) -> list[str]:
    """What the sequential gate drew and why: per category sampled beyond the first look, the
    samples per case it was decided at; and the samples drawn for this gate per side."""
    if not sequential:
        return []
    # Runs before early acceptance had no β; runs before decision 0094 spent it per look.
    betas = sequential.get("betas") or [None] * len(sequential["looks"])
    looks = ", ".join(f"{k} (α {a:.2g}" + (f", β {b:.2g})" if b is not None and j < len(betas) - 1 else ")")
                      for j, (k, a, b) in enumerate(zip(sequential["looks"], sequential["alphas"], betas)))
    steps = sequential.get("acceptance")
    if steps:
        looks += "; early acceptance on " + ", ".join(
            f"{n} (β {b:.2g})" for n, b in zip(steps["baseline_samples"], steps["betas"])
        ) + " samples of S0"
    further = sampled_further(sequential)
    drawn = sequential.get("drawn") or {}
    head = f"**Sequential gate:** looks at {looks} samples per case"
    if not further:
        return [head + f"; every category was decided at the first look ({sequential['looks'][0]} samples).", ""]
    out = [
        head
        + (
            f"; {drawn.get('child', 0)} more case-samples of this candidate and {drawn.get('baseline', 0)} of S0 were "
            "drawn for it:"
        ),
        "",
    ]
    out += [f"- {md_text(cat)}: {s['samples']} samples per case — {md_text(s['why'])}" for cat, s in further.items()]
    stopped = sequential.get("stopped")
    if stopped:
        skipped = ", ".join(f"`{md_text(c)}`" for c in stopped["skipped"])
        out += [
            "",
            f"Rejected early at k = {stopped['look']}: the rejection was certain whatever their samples gave, so these"
            f" {len(stopped['skipped'])} case(s) were not sampled to it: {skipped}",
        ]
    return [*out, ""]


def label(cand: Candidate) -> str:
    """The candidate id, marked "(S0)" for the base (the candidate without a parent)."""
    return f"{cand.id} (S0)" if cand.parent_id is None else cand.id


def gate_line(cand: Candidate) -> str:
    """One line: the gate verdict with ε, and what decided it (failing categories, must-pass cases, noise)."""
    if cand.parent_id is None:
        return "S0 is the baseline; it is not gated"
    if not cand.gate_details and cand.gate_passed is None:
        return "not gated yet"
    eps = cand.gate_details.get("tolerance")
    rule = f"PR_c(child) ≥ (1 − ε)·PR_c(S0), ε = {eps:g}" if eps is not None else "PR_c(child) ≥ (1 − ε)·PR_c(S0)"
    if cand.gate_details.get("rule") == "noise-aware":
        rule += (
            f"; noise-aware: a drop rejects only when significant, α = {cand.gate_details.get('alpha', 0.05):g} over "
            "all categories"
        )
    detail = md_text(gate_detail(cand.gate_details)) if cand.gate_details else "no details recorded"
    return f"**{'pass' if cand.gate_passed else 'FAIL'}** — {detail} ({rule})"


def review_markdown(review: Review) -> str:
    """The review as Markdown: usable as a pull-request description, and what the terminal shows."""
    cand, parent = review.candidate, review.parent
    size = sample_size(cand.n_cases, cand.samples)
    size = f"; {size}" if size else ""
    out = [
        f"## frames candidate {label(cand)} — run {review.run_id}",
        "",
        f"Commit `{cand.commit[:12]}`"
        + (f", child of {parent.id} (`{parent.commit[:12]}`)" if parent else "")
        + f", round {cand.round}. Pass rate {pct(parent.pass_rate if parent else None)} → {pct(cand.pass_rate)}"
        f" (S0 {pct(review.base.pass_rate)}{size}); diff +{review.stat.insertions} −{review.stat.deletions} lines"
        f" in {plural(len(review.skills), 'skill')}.",
        "",
        *([f"> {md_text(review.simulator_notice)}", ""] if review.simulator_notice else []),
        f"**Gate:** {gate_line(cand)}",
        "",
        *([f"**Gain over S0:** {md_text(review.recommendation)}", ""] if review.recommendation else []),
    ]
    early = cand.gate_details.get("early_stop")
    if early:
        skipped = ", ".join(f"`{md_text(c)}`" for c in early["skipped"])
        out += [
            f"**Rejected early:** the gate was certain after {early['evaluated']} of "
            f"{early['evaluated'] + len(early['skipped'])} cases ({md_text(early['reason'])}), so these "
            f"{len(early['skipped'])} were not evaluated and its rates cover the evaluated cases only: {skipped}"
            + (
                f". {len(early['settled'])} more were evaluated after the stop, as attribution needs them to analyse "
                "the child as the full evaluation would"
                if early.get("settled")
                else ""
            ),
            "",
        ]
    out += sequential_lines(cand.gate_details.get("sequential"))
    out += _attribution_lines(cand)
    for o in review.gate_overrides:
        out += [
            f"**Gate overridden** by {md_text(o['by'])} at {o['at']} (branch `{o['branch']}`, failed: "
            f"{', '.join(o['failed'])}): {md_text(o['reason'])}",
            "",
        ]
    if "Frames-Models" in review.trailers:
        out += [f"Models: {review.trailers['Frames-Models']}", ""]
    out += [
        "### Results per category",
        "",
        markdown_table(*_results_cells(review)),
    ]
    out += _changed_case_lines(cand.gate_details)
    out += ["", "### Failures that motivated it", ""]
    notes = {f.case_id: f for f in cand.failures}
    ids = cand.motivating_case_ids or sorted(notes)
    for case_id in ids:
        note = notes.get(case_id)
        if note is None:
            out.append(f"- `{case_id}`")
            continue
        symptom = f" — {md_text(note.symptom)}" if note.symptom else ""
        out.append(f"- `{case_id}` ({note.category}): {md_text(note.reason)}{symptom}")
    if not ids:
        out.append("- none recorded" + (" (S0 is the baseline)" if parent is None else ""))
    if review.disputed:
        out += [
            "", "### Disputed labels", "",
            "A diagnoser said these cases' expected results contradict the policy. They count in no gate, front or "
            "diagnosis until a person sets `label: confirmed` or `label: disputed` in the case file, and no rule was "
            "made from them.",
            "",
        ]
        out += [
            f"- `{d['case_id']}` (round {d['round']}, diagnoser {d['diagnoser']}): contradicts "
            f"“{md_text(d['passage'])}”"
            + (f" — {md_text(d['reason'])}" if d.get("reason") else "")
            for d in review.disputed
        ]
    out += [
        "", "### Blueprint", "",
        "What the diagnosers proposed and the rewriter was asked to do; the diff below is what it wrote.", "",
    ]
    out += _blueprint_lines(cand, {s.name: s for s in review.skills})
    out += ["", "### Policy sentences removed or changed", ""]
    out += _policy_change_lines(cand)
    if cand.dropped_proposals:
        out += ["", "### Proposals dropped before the vote", ""]
        out += [f"- {md_text(line)}" for line in cand.dropped_proposals]
    out += ["", "### Diff", ""]
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", review.diff)), default=0))
    out += [f"{fence}diff", review.diff, fence] if review.diff else ["No change under skills/."]
    out += ["", f"To make a branch of it: `{review.promote}`", ""]
    return "\n".join(out)


def _attribution_lines(cand: Candidate) -> list[str]:
    """What attribution (evolution/round/attribution.py) found: for a sub-child, the rewrites it leaves out
    and the broken cases that implicated each; for an analysed child, its finding and the sub-child made."""
    lines = []
    if cand.cut_from:
        lines.append(
            f"**Sub-child** of {cand.cut_from}, which failed the gate or is off the front; it keeps the other rewrites "
            "and leaves out:"
        )
        lines += [
            f"- `{skill}`: implicated by {', '.join(f'`{c}`' for c in cases)} (pass → fail, loaded it)"
            for skill, cases in sorted(cand.left_out.items())
        ]
        lines.append("")
    a = cand.attribution
    if a:
        made = f" Sub-child: {a['sub_child']}." if a.get("sub_child") else " No sub-child was made."
        lines.append(
            f"**Attribution** ({'failed the gate' if a['why'] == 'gate' else 'off the front'}): "
            f"{md_text(a['note'])}.{made}"
        )
        if a.get("unevaluated"):
            lines.append(
                f"({plural(a['unevaluated'], 'case')} of those categories were not evaluated: the child was rejected "
                "early.)"
            )
        lines.append("")
    return lines


def _blueprint_lines(cand: Candidate, skills: dict[str, SkillContext]) -> list[str]:
    """Per blueprint skill: votes, each change with its rationale, cases and diagnosers, back-links."""
    lines: list[str] = []
    votes_of = f" of {cand.diagnosers}" if cand.diagnosers else ""
    needed = f" (needed {cand.votes_needed})" if cand.votes_needed else ""
    for bp in cand.blueprints:
        kind = "new skill" if bp.get("new_skill") else "skill"
        lines.append(f"- **{kind} `{bp['skill']}`** — votes {bp.get('votes', '?')}{votes_of}{needed}")
        for change in (Change.from_json(c) for c in bp.get("changes", [])):
            cases = ", ".join(f"`{c}`" for c in change.case_ids) or "none"
            flag = f"**conflict** ({md_text(change.conflict)}): " if change.conflict else ""
            lines.append(f"  - {flag}{md_text(change.change)} — votes {change.votes}; cases {cases}")
            if len(change.wordings) > 1:
                lines += [f"    - worded as: {md_text(w)}" for w in change.wordings]
            lines += [f"    - why: {md_text(why)}" for why in change.rationales] or ["    - why: no rationale given"]
        ctx = skills.get(bp["skill"])
        if ctx is not None:
            lines += [f"  - policy back-link: {link}" for link in ctx.backlinks] or ["  - policy back-links: none"]
            for where, *changed in ctx.policy_changes:
                lines.append(f"  - the policy changed since this skill was written, at {md_text(where)}:")
                lines += ["", "    ```diff", *(f"    {line}" for line in changed), "    ```", ""]
            if ctx.references:
                lines.append(f"  - refers to: {', '.join(ctx.references)}")
            if ctx.problem:
                lines.append(f"  - note: {md_text(ctx.problem)}")
    lines += [f"- `{skill}`: change dropped ({why})" for skill, why in sorted(cand.dropped.items())]
    return lines or ["- none (no skill changed against the parent)"]


def _policy_change_lines(cand: Candidate) -> list[str]:
    """Each policy sentence the candidate's rewrites removed or changed, with the blueprint line that
    asked and its cases; a rewrite that did so unasked was refused (evolution/propose/guards.py)."""
    if cand.parent_id is None:
        return ["- none (S0 is the baseline)"]
    lines = []
    for c in cand.policy_changes:
        cases = ", ".join(f"`{i}`" for i in c.get("case_ids", [])) or "none"
        lines.append(f"- `{c['skill']}` {c['kind']} \"{md_text(c['sentence'])}\" ({c['source']})")
        lines.append(f"  - asked by the blueprint line: {md_text(c['asked_by'])}; cases {cases}")
    return lines or ["- none"]
