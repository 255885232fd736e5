"""`frames coldstart` end to end in real git repositories: reference validation, coverage,
idempotence, staleness, edited skills and --force, removals, and the model path via frames-sim."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import agentskills_command
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.formats.skill_set import SkillSet

runner = CliRunner()
TIGHT = "coldstart:\n  max_tokens: 120\n  min_tokens: 10\n"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def _coldstart(root: Path, *args: str) -> dict:
    done = runner.invoke(app, ["coldstart", "--repo", str(root), "--json", *args])
    assert done.exit_code == 0, done.output + str(done.exception)
    return json.loads(done.stdout)


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted((root / "skills").rglob("*")) if p.is_file()}


def test_bundled_airline_policy_passes_agentskills_validate(policy_workspace) -> None:
    root = policy_workspace("airline.md")
    out = _coldstart(root)
    assert len(out["created"]) == 6
    assert out["coverage"] == [{"file": "policies/airline.md", "content_lines": 120, "covered_once": 120,
                                "uncovered": [], "overlaps": []}]
    tool = agentskills_command()
    assert tool, "skills-ref (test extra) provides the `agentskills` command"
    for folder in sorted((root / "skills").iterdir()):
        done = subprocess.run([tool, "validate", str(folder)], capture_output=True, text=True)
        assert done.returncode == 0, f"{folder.name}: {done.stdout}{done.stderr}"
    # One commit, with only the skill files, naming them and the policy file.
    assert _git(root, "log", "--format=%s") == "frames coldstart: 6 skills from policies/airline.md"
    assert _git(root, "show", "--name-only", "--format=", "HEAD").splitlines() == [
        f"skills/{n}/SKILL.md" for n in sorted(out["created"])
    ]
    assert "- cancel-flight (policies/airline.md, create)" in _git(root, "log", "-1", "--format=%B")


@pytest.mark.parametrize("config_text", ["version: 1\n", TIGHT], ids=["default", "tight"])
def test_other_policy_shapes_pass_the_reference_validator(policy_workspace, config_text: str) -> None:
    from skills_ref.validator import validate  # the function behind `agentskills validate`

    root = policy_workspace("loan-review.md", "data-retention.txt", "expenses.md", config_text=config_text)
    out = _coldstart(root)
    assert all(c["uncovered"] == [] and c["overlaps"] == [] and c["covered_once"] == c["content_lines"]
               for c in out["coverage"])
    folders = sorted((root / "skills").iterdir())
    assert len(folders) == len(out["created"]) >= 8
    for folder in folders:
        assert validate(folder) == [], folder.name
    names = {f.name for f in folders}
    if config_text == TIGHT:
        # Split at sub-headings, then paragraphs (a later part named after its own words, no
        # number); the bare "2. Assessment" and "2.1 Income verification" headings fold into
        # their first child instead of standing alone.
        assert {"salaried-applicants", "affordability", "data-retention", "data-retention-kept-months",
                "travel"} <= names
        assert "assessment" not in names and "income-verification" not in names and len(names) == 20
    else:
        assert names == {
            "data-retention", "expenses", "travel", "meals", "claims", "consumer-loan-review-policy",
            "eligibility", "assessment", "pricing", "decisions-and-communication",
        }


def test_second_run_writes_nothing_and_commits_nothing(policy_workspace) -> None:
    root = policy_workspace("airline.md", "expenses.md")
    _coldstart(root)
    before, head = _snapshot(root), _git(root, "rev-parse", "HEAD")
    out = _coldstart(root)
    assert out["created"] == out["updated"] == [] and out["commit"] is None and len(out["unchanged"]) == 10
    assert _snapshot(root) == before and _git(root, "rev-parse", "HEAD") == head


def test_changed_policy_stale_edited_skipped_force(policy_workspace, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Messages show paths relative to the current folder when inside it; from a folder that does
    # not hold the workspace they are absolute, whatever folder pytest started in.
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    root = policy_workspace("airline.md")
    _coldstart(root)
    policy = root / "policies" / "airline.md"
    policy.write_text(
        policy.read_text()
        .replace("within 5 to 7 business days", "within 7 to 10 business days")
        .replace("at most five passengers", "at most six passengers")
    )
    book = root / "skills" / "book-flight" / "SKILL.md"
    book.write_text(book.read_text() + "\nAsk for the passenger count first.\n")
    edited = book.read_bytes()

    done = runner.invoke(app, ["validate", "--repo", str(root)])
    assert done.exit_code == 0
    assert done.stdout.splitlines()[:2] == [
        f"{book}:1: warning: stale back-link: policies/airline.md:63-101 (Airline Agent Policy > Book flight) changed "
        f"since this skill was made (`frames coldstart --force` regenerates it, losing the edits)",
        f"{root / 'skills' / 'cancel-flight' / 'SKILL.md'}:1: warning: stale back-link: policies/airline.md:133-152 "
        f"(Airline Agent Policy > Cancel flight) changed since this skill was made (run `frames coldstart`)",
    ]
    assert runner.invoke(app, ["validate", "--repo", str(root), "--strict"]).exit_code == 2
    status = json.loads(runner.invoke(app, ["status", "--repo", str(root), "--json"]).stdout)
    assert status["stale"] == ["book-flight", "cancel-flight"] and status["edited_since_coldstart"] == ["book-flight"]

    out = _coldstart(root)
    assert out["updated"] == ["cancel-flight"] and out["skipped_edited"] == ["book-flight"]
    assert book.read_bytes() == edited
    assert "within 7 to 10 business days" in (root / "skills" / "cancel-flight" / "SKILL.md").read_text()
    text = runner.invoke(app, ["coldstart", "--repo", str(root)]).stdout
    assert "skipped, edited since generation or not made by coldstart (use --force to overwrite): book-flight" in text

    out = _coldstart(root, "--force")
    assert out["updated"] == ["book-flight"] and "at most six passengers" in book.read_text()
    assert runner.invoke(app, ["validate", "--repo", str(root), "--strict"]).exit_code == 0


def test_a_tag_a_person_removed_stays_removed(policy_workspace) -> None:
    """Removing `general-rules` has the agent choose the skill instead of being given it (decision
    0099): coldstart keeps that edit as it keeps an edited text, and --force overwrites it."""
    root = policy_workspace("airline.md")
    _coldstart(root)
    rules = root / "skills" / "airline-agent-policy" / "SKILL.md"
    text = rules.read_text()
    assert "frames-tags: airline, general-rules\n" in text
    rules.write_text(text.replace("frames-tags: airline, general-rules\n", "frames-tags: airline\n"))
    listed = rules.read_bytes()
    out = _coldstart(root)
    assert rules.read_bytes() == listed and "airline-agent-policy" in out["unchanged"] and out["updated"] == []
    out = _coldstart(root, "--force")
    assert out["updated"] == ["airline-agent-policy"] and "general-rules" in rules.read_text()


def test_removed_section_removes_its_unedited_skill(policy_workspace) -> None:
    root = policy_workspace("expenses.md")
    _coldstart(root)
    policy = root / "policies" / "expenses.md"
    policy.write_text(policy.read_text().split("Meals\n=====")[0] + "Claims\n======\n\nSubmit claims within 60 days.\n"
                                                                    "Late claims are rejected.\nKeep receipts.\n")
    out = _coldstart(root)
    assert out["removed"] == ["meals"] and not (root / "skills" / "meals").exists()
    assert "Removed (their policy section is gone):\n- meals" in _git(root, "log", "-1", "--format=%B")
    assert _git(root, "status", "--porcelain", "--", "skills") == ""


def test_model_rewrite_through_the_simulator(policy_workspace) -> None:
    root = policy_workspace("airline.md", config_text="models:\n  coldstart: frames-sim/coldstart\n")
    out = _coldstart(root)
    assert out["rewrite_failures"] == [] and len(out["created"]) == 6
    assert out["model_spend"]["roles"]["coldstart"]["calls"] == 6
    skills = SkillSet.from_dir(root / "skills")
    cancel = skills["cancel-flight"]
    assert cancel.metadata["frames-coldstart"] == "model frames-sim/coldstart"
    assert cancel.body.startswith("1. First, the agent must obtain the user id and reservation id.")
    # The simulator's text says so, in the output and in the commit.
    assert out["simulator_notice"].startswith("Simulated: the bodies and descriptions of these skills were written by "
                                              "frames-sim/coldstart")
    message = _git(root, "log", "-1", "--format=%B")
    assert message.startswith("frames coldstart: 6 skills from policies/airline.md (simulated text)\n\nSimulated: ")
    assert "Frames-Models: coldstart=frames-sim/coldstart" in message
    assert "within 5 to 7 business days" in cancel.body
    # Back-links come from the policy, never from the model.
    assert [(b.start, b.end) for b in cancel.backlinks] == [(133, 152)]
    runs_before = sorted((root / ".frames" / "coldstart").iterdir())
    assert _coldstart(root)["commit"] is None
    assert sorted((root / ".frames" / "coldstart").iterdir()) == runs_before
    # --no-llm switches the mode, so every skill is regenerated verbatim.
    out = _coldstart(root, "--no-llm")
    assert len(out["updated"]) == 6 and SkillSet.from_dir(root / "skills")["cancel-flight"].body.startswith(
        "## Cancel flight\n"
    )
    assert out["simulator_notice"] is None and "imulated" not in _git(root, "log", "-1", "--format=%B")


def _new_coldstart_log(root: Path, *args: str) -> tuple[dict, list[str]]:
    """Coldstart (--json) once more; its model spend and the lines of the audit log it wrote."""
    logs = root / ".frames" / "coldstart"
    before = set(logs.iterdir()) if logs.is_dir() else set()
    spend = _coldstart(root, *args)["model_spend"]["roles"]["coldstart"]
    (new,) = set(logs.iterdir()) - before
    audit = new / "exchanges.jsonl"
    return spend, audit.read_text().splitlines() if audit.exists() else []


def test_model_answers_come_from_the_cache_unless_no_cache(policy_workspace) -> None:
    root = policy_workspace("airline.md", config_text="models:\n  coldstart: frames-sim/coldstart\n")
    spend, audit = _new_coldstart_log(root)
    assert (spend["calls"], spend["cached"], len(audit)) == (6, 0, 6)
    # Skills gone from the working tree: coldstart makes them again from the same policy text.
    shutil.rmtree(root / "skills")
    spend, audit = _new_coldstart_log(root)
    assert (spend["calls"], spend["cached"], audit) == (0, 6, [])
    shutil.rmtree(root / "skills")
    spend, audit = _new_coldstart_log(root, "--no-cache")
    assert (spend["calls"], spend["cached"], len(audit)) == (6, 0, 6)
    assert _git(root, "status", "--porcelain", "--", "skills") == ""


def test_rewrite_progress_on_a_terminal_only(policy_workspace) -> None:
    root = policy_workspace("expenses.md", config_text="models:\n  coldstart: frames-sim/coldstart\n")
    bar = "rewriting policy sections with frames-sim/coldstart"
    for env, args, shown in (
        ({"TTY_COMPATIBLE": "1"}, [], True),
        ({"TTY_COMPATIBLE": "1"}, ["--json"], False),
        ({"TTY_COMPATIBLE": None, "FORCE_COLOR": None}, [], False),  # stderr is no terminal here
    ):
        shutil.rmtree(root / "skills", ignore_errors=True)
        done = runner.invoke(app, ["coldstart", "--repo", str(root), "--no-cache", *args], env=env)
        assert done.exit_code == 0, done.output
        assert (bar in done.stderr, "100%" in done.stderr) == (shown, shown), (env, args, done.stderr)


def test_failed_rewrites_fall_back_to_verbatim(policy_workspace) -> None:
    from frames_cli.coldstart.rewrite import check_rewrite

    answer = {"body": "Refund within 5 days.",
              "description": "Decides refunds: a refund is paid within days of the request."}
    assert check_rewrite("Refund within 5 to 7 days, 24 hrs.", answer, 500) == [
        "the body drops these numbers of the policy text: 7, 24"
    ]
    root = policy_workspace(
        "expenses.md",
        config_text="models:\n  coldstart: frames-sim/coldstart\nllm:\n  max_retries: 0\n  repair_turns: 0\n"
        "coldstart:\n  rewrite_retries: 1\nsimulator:\n  faults:\n    malformed_json: 1.0\n",
    )
    out = _coldstart(root)
    assert sorted(f["skill"] for f in out["rewrite_failures"]) == sorted(out["created"])
    assert out["model_spend"]["roles"]["coldstart"]["calls"] == 2 * len(out["created"])
    meals = SkillSet.from_dir(root / "skills")["meals"]
    assert meals.metadata["frames-coldstart"] == "verbatim" and meals.body.startswith("Meals\n=====\n")
    # The retry showed the model why its first answer was rejected.
    (log,) = (root / ".frames" / "coldstart").glob("*/exchanges.jsonl")
    prompts = [json.loads(line)["messages"][0]["content"] for line in log.read_text().splitlines()]
    meal_prompts = [p for p in prompts if "Skill: meals\n" in p]
    assert len(meal_prompts) == 2 and "Your previous answer was rejected:\n- the model call failed:" in meal_prompts[1]
    assert "rejected" not in meal_prompts[0]


def test_the_number_check_reads_the_text_the_model_was_shown() -> None:
    from frames_cli.coldstart.rewrite import check_rewrite, rule_text
    from frames_cli.coldstart.sectioning import cut_document
    from frames_cli.coldstart.writer import verbatim_body
    from frames_cli.formats.policy import parse_policy
    from frames_cli.workspace.config import ColdstartConfig

    # 18F's "Book lodging": the image tag's path holds an 11 the prompt never shows.
    lines = ["# Book lodging", "", "Book the hotel within 2 days of approval.", "",
             '{% image "_img/travel/11-book-hotel-now.png" "selecting hotel" %}', "", "Pay with the travel card."]
    (chunk,) = cut_document(parse_policy(lines, "policies/faq.md"), ColdstartConfig())
    shown = verbatim_body(chunk)  # what the prompt shows
    assert "11" not in rule_text(shown) and "2 days" in rule_text(shown)
    answer = {"body": "1. Book the hotel within 2 days of approval.\n2. Pay with the travel card.\n",
              "description": "Decides how and when to book the hotel: within days of approval, paid with the travel "
                             "card."}
    assert check_rewrite(rule_text(shown), answer, 500) == []


def _write(root: Path, name: str, text: str) -> None:
    (root / "policies" / name).write_text(text)


def test_adding_a_document_never_renames_removes_or_repoints_another_documents_skills(policy_workspace) -> None:
    root = policy_workspace()
    _write(root, "kyc.md",
           "# KYC policy\n\n## Scope\n\nThis policy covers every retail customer of the bank.\n\n## Screening\n\n"
           "Screen every customer against sanctions lists.\n")
    first = _coldstart(root)
    assert first["created"] == ["scope", "screening"]
    before = (root / "skills" / "scope" / "SKILL.md").read_bytes()
    # A second policy with its own "Scope": the first policy's skills stay as they are.
    _write(root, "aml.md", "# AML policy\n\n## Scope\n\nThis policy covers every wire transfer over 10,000 USD.\n")
    second = _coldstart(root)
    assert second["created"] == ["aml-policy-scope"] and second["removed"] == [] and second["orphaned_edited"] == []
    assert sorted(second["unchanged"]) == ["scope", "screening"]
    assert (root / "skills" / "scope" / "SKILL.md").read_bytes() == before
    assert all(c["overlaps"] == [] and c["uncovered"] == [] for c in second["coverage"])
    # Renaming a document keeps its sections' names, now linked to the new file.
    (root / "policies" / "kyc.md").rename(root / "policies" / "customer-kyc.md")
    third = _coldstart(root)
    assert sorted(third["updated"]) == ["scope", "screening"] and third["removed"] == [] and third["created"] == []
    assert "policies/customer-kyc.md#L3-" in (root / "skills" / "scope" / "SKILL.md").read_text()


def test_two_documents_with_the_same_headings_keep_their_own_text(policy_workspace) -> None:
    root = policy_workspace()
    _write(root, "law-a.md", "# 银行业监督管理法\n\n## 第一章 总则\n\n第一条 为了加强对银行业的监督管理。\n")
    _coldstart(root)
    _write(root, "law-b.md", "# 商业银行法\n\n## 第一章 总则\n\n第一条 为了保护商业银行的合法权益。\n")
    out = _coldstart(root)
    assert out["unchanged"] == ["zongze"] and len(out["created"]) == 1 and not out["created"][0][-1].isdigit()
    assert "policies/law-a.md" in (root / "skills" / "zongze" / "SKILL.md").read_text()


def test_skipped_files_are_named_and_commit_is_the_users(policy_workspace) -> None:
    root = policy_workspace("expenses.md")
    _write(root, "LICENSE.md", "CC0\n")
    _write(root, "Notice of Privacy Practices.md",
           "# Notice of Privacy Practices\n\nWe must tell you how we use your health data.\n")
    _git(root, "config", "user.name", "Dana Reviewer")
    _git(root, "config", "user.email", "dana@example.com")
    out = _coldstart(root)
    assert out["skipped_files"] == [{"file": "policies/LICENSE.md", "reason": "companion file"}]
    assert "notice-of-privacy-practices" in out["created"]
    assert _git(root, "log", "-1", "--format=%an <%ae>|%cn") == "Dana Reviewer <dana@example.com>|Dana Reviewer"
    done = runner.invoke(app, ["coldstart", "--repo", str(root), "--force"])
    assert "not policy, skipped: policies/LICENSE.md (companion file)" in done.stdout


def test_oversized_skill_is_warned_about(policy_workspace) -> None:
    root = policy_workspace(config_text="coldstart:\n  max_tokens: 60\n")
    _write(root, "one-line.md",
           "# Fares\n\n" + "Every fare change must be approved by the duty manager before ticketing. " * 8 + "\n")
    out = _coldstart(root)
    assert out["oversized"] == ["fares"]
    done = runner.invoke(app, ["coldstart", "--repo", str(root), "--force"])
    assert "over coldstart.max_tokens" in done.stdout and "fares" in done.stdout


def test_model_writes_the_description_and_it_is_checked_like_the_body(policy_workspace) -> None:
    from frames_cli.coldstart.rewrite import check_description

    source = "Refunds go to the original payment method within 5 to 7 business days."
    assert (
        check_description(
            source, "Decides refunds: they go to the original payment method. Use when a user asks for one."
        )
        == []
    )
    bad = {
        "": "missing",
        "Refunds": "at least 6 words",
        '{% include "step.html" %} Refunds go to the original payment method always.': "template tags",
        "| Step | Who | What | refunds payment method original business days": "table rows",
        "See [refunds](https://x.example) for the original payment method rules today.": "links",
        "A skill about the weather and the tides for sailors at sea.": "own terms",
        "Refunds: original, payment, method, business, days, card.": "word list",
        "Refunds go to the original payment method within the.": 'cut word ("within the." ends on "the")',
        "Refunds go to the original payment method within days": "cut word (the last sentence has no end",
        "Refunds go to the original payment method within business days. " * 4: "at most 180",
    }
    for text, reason in bad.items():
        assert any(reason in p for p in check_description(source, text)), text
    root = policy_workspace("airline.md", config_text="models:\n  coldstart: frames-sim/coldstart\n")
    out = _coldstart(root)
    assert out["rewrite_failures"] == []
    cancel = SkillSet.from_dir(root / "skills")["cancel-flight"]
    assert cancel.description.startswith("Decides cancel flight: ") and cancel.description.endswith(
        "Use when a request concerns cancel flight."
    )


def test_the_model_is_shown_the_skills_a_description_must_set_apart(policy_workspace) -> None:
    from frames_cli.coldstart.neighbours import Neighbour, closest

    entries = [(Neighbour(n, "policies/p.md", n), text) for n, text in (
        ("refunds", "refunds paid to the original card within days"),
        ("refund-delays", "refunds late after days: call the card issuer"),
        ("parking", "parking at the office garage"),
    )]
    near = closest(entries)
    assert [n.name for n in near["refunds"]] == ["refund-delays"] and near["parking"] == []
    assert closest(entries[:1]) == {"refunds": []}
    root = policy_workspace("airline.md", config_text="models:\n  coldstart: frames-sim/coldstart\n")
    _write(root, "lounge.md",
           "# Lounge\n\n## Lounge access for a modify flight request\n\nGold members may use the lounge when a flight "
           "is modified.\n")
    _coldstart(root)
    (log,) = (root / ".frames" / "coldstart").glob("*/exchanges.jsonl")
    prompts = {p.split("Skill: ")[1].split("\n")[0]: p
               for p in (json.loads(line)["messages"][0]["content"] for line in log.read_text().splitlines())}
    listed = (
        prompts["modify-flight"]
        .split("Neighbouring skills an agent could take for this one (name, policy file: heading):\n")[1]
        .split("\n\n")[0]
    )
    assert "- book-flight (policies/airline.md: Airline Agent Policy > Book flight)" in listed.split("\n")
    # A look-alike in another document is listed too.
    assert (
        "- lounge-access-for-modify-flight-request (policies/lounge.md: Lounge > Lounge access for a modify flight "
        "request)"
        in listed.split("\n")
    )


TRAVEL = Path(__file__).parents[2] / "bench" / "data" / "catalog_choice" / "18f-travel"


def test_real_travel_policies_read_as_documents(policy_workspace) -> None:
    """The 18F travel policies (front matter, Liquid tags, FAQ headings): no markup in any skill,
    no numbered or cut name, `frames validate --strict` and the reference validator pass."""
    from skills_ref.validator import validate

    from frames_cli.coldstart.naming import words
    from frames_cli.formats.policy import read_policy

    root = policy_workspace()
    for path in TRAVEL.glob("*.md"):
        shutil.copy(path, root / "policies" / path.name)
    out = _coldstart(root)
    assert out["skipped_files"] == [{"file": "policies/LICENSE.md", "reason": "companion file"},
                                    {"file": "policies/SOURCE.md", "reason": "companion file"}]
    skills = SkillSet.from_dir(root / "skills")
    assert len(skills) == len(out["created"]) > 50
    markup = ("{%", "%}", "{{", "<!--", "redirect_from:", "title:", "step_indicator", "]()")
    for skill in skills.values():
        for text in (skill.body, skill.description):
            assert not any(m in text for m in markup), (skill.name, text)
        assert not skill.name[-1].isdigit(), skill.name
        # Every word of the name is a whole word of its headings or its document's title.
        doc = read_policy(root / skill.backlinks[0].file, skill.backlinks[0].file)
        known = {w for b in skill.backlinks for h in b.heading.split(" > ") for w in words(h)} | set(words(doc.title))
        assert set(skill.name.split("-")) <= known | {
            w for b in skill.backlinks for w in words(" ".join(doc.view[b.start - 1 : b.end]))
        }, skill.name
        assert validate(root / "skills" / skill.name) == [], skill.name
    done = runner.invoke(app, ["validate", "--strict", "--repo", str(root)])
    assert done.exit_code == 0, done.output
    # The subject fits 72 characters; the 13 files are in the body.
    subject, body = _git(root, "log", "-1", "--format=%s"), _git(root, "log", "-1", "--format=%b")
    assert subject == f"frames coldstart: {len(skills)} skills from 13 policy files" and len(subject) <= 72
    assert "Policy files:\n- policies/first-time-travel-complete-concur-profile.md\n" in body
    # A link to another policy document is a reference to its skill; the description says where it is from.
    assert "working-while-traveling" in skills["other-necessary-expenses"].references
    assert skills["keep-receipts"].metadata["frames-described-from"] == "heading, policies/travel-guide-3-travel.md#L50"


def test_a_paragraph_too_big_for_any_skill_file_is_refused_and_nothing_written(
    policy_workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 960 KB one-line policy made a skill of 960 KB that every later command refused to read.
    import frames_cli.coldstart.writer as writer

    monkeypatch.setattr(writer, "MAX_SKILL_BYTES", 2_000)
    root = policy_workspace(config_text="coldstart:\n  max_tokens: 60\n")
    _write(
        root,
        "one-line.md",
        "# Fares\n\nShort rule: fares must be approved.\n\n"
        + "Every fare change must be approved by the duty manager. " * 50
        + "\n",
    )
    done = runner.invoke(app, ["coldstart", "--repo", str(root)])
    assert (
        done.exit_code == 2 and "policies/one-line.md:5:" in done.output and "over the 2,000-byte limit" in done.output
    )
    assert not list(root.glob("skills/*/SKILL.md"))


def test_skills_removed_with_git_rm_and_written_again_as_they_were_commit_nothing(policy_workspace) -> None:
    root = policy_workspace("expenses.md")
    first = _coldstart(root)
    _git(root, "rm", "-rq", "skills")
    out = _coldstart(root)
    assert out["commit"] is None and sorted(out["created"]) == sorted(first["created"])
    assert _git(root, "status", "--porcelain", "--", "skills") == ""
