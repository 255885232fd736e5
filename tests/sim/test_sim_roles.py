"""frames-sim behaviours, each asked through ModelClient → litellm → the simulator (DESIGN §8).

Invariants:
1. The executor loads the skills most relevant to its case and sees evidence only inside blocks.
2. P(correct) runs from `floor` (no evidence in the blocks) to `ceiling` (all of it).
3. A wrong answer has the expected answer's shape but differs from it.
4. The diagnoser's insightful proposal quotes the case's rules for the best-matching skill; without
   insight it copies the evidence (p_literal) or proposes a spurious rule.
5. The rewriter adds quoted rules, never touches protected regions, forgets less with anchors.
6. The same seed gives the same answers; another seed gives others.
"""

from __future__ import annotations

import json
import random

from frames_cli.llm.store.audit import read_exchanges
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.prompts import Block, render
from frames_cli.llm.messages.schemas import DIAGNOSIS, EXECUTOR_STEP, GENERATED_CASES, REWRITE, RUBRIC_VERDICT
from frames_cli.sim.diagnoser import SPURIOUS_RULES
from frames_cli.sim.executor import wrong_answer
from frames_cli.sim.rewriter import RESTATE

BAGS_RULE = "Silver members get 2 free checked bags per passenger in economy."
CATALOG = (
    "3 skills available:\n- s1: cancel-flight — Cancel reservations and refunds\n- s2: baggage-allowance — Free "
    "checked bags by membership and cabin\n- s3: delay-compensation — Delays and compensation"
)


def ask(ws, role, prompt, schema, config=None, samples=1, run_dir=None):
    with ModelClient(ws.workspace, config or ws.config, use_cache=False, run_dir=run_dir) as client:
        replies = client.chat_many([ChatRequest(role, [{"role": "user", "content": prompt}], schema, sample=i)
                                    for i in range(samples)])
    assert all(r.ok for r in replies), [r.error for r in replies]
    return [r.data for r in replies]


def executor_answer_prompt(case_id: str, body: str, request: str = "Help me.") -> str:
    first = render("executor_catalog", case_id=case_id, given="", catalog=CATALOG, request=request,
                   answer_format="JSON", max_loads=3)
    blocks = f'<skill id="s2" name="baggage-allowance">\n{body}\n</skill>'
    return first + "\n\n" + render("executor_answer", case_id=case_id, skills=Block(blocks))


def test_executor_loads_the_best_matching_skill(sim_workspace):
    prompt = render("executor_catalog", case_id="bags-1", given="", catalog=CATALOG, request="bags?",
                    answer_format="a number", max_loads=3)
    (data,) = ask(sim_workspace, "executor", prompt, EXECUTOR_STEP)
    assert data["load"][0] == "s2"


def test_executor_correctness_follows_evidence_in_blocks_only(sim_workspace):
    certain = sim_workspace.configured(simulator={"floor": 0.0, "ceiling": 1.0})
    with_rule = executor_answer_prompt("bags-1", f"# Bags\n\n- {BAGS_RULE}")
    # The rule outside the blocks (in the request text) must not count.
    without = executor_answer_prompt("bags-1", "# Bags\n\n- Bags are weighed at the desk.", request=BAGS_RULE)
    assert [d["answer"]
            for d in ask(sim_workspace, "executor", with_rule, EXECUTOR_STEP, certain, samples=8)] == ["4"] * 8
    wrong = ask(sim_workspace, "executor", without, EXECUTOR_STEP, certain, samples=8)
    assert all(d["answer"] != "4" for d in wrong) and wrong[0]["skills_used"] == ["baggage-allowance"]


def test_executor_reads_a_given_block_but_still_loads_on_its_first_turn(sim_workspace):
    """A `general-rules` skill given on the first turn (decision 0099) is knowledge, not a second turn."""
    certain = sim_workspace.configured(simulator={"floor": 0.0, "ceiling": 1.0})
    given = Block(f'Rules for every task of their policy, loaded already (do not ask for them):\n\n'
                  f'<skill id="s9" name="general-rules">\n- {BAGS_RULE}\n</skill>\n\n')
    first = render("executor_catalog", case_id="bags-1", given=given, catalog=CATALOG, request="bags?",
                   answer_format="a number", max_loads=3)
    (turn1,) = ask(sim_workspace, "executor", first, EXECUTOR_STEP, certain)
    assert turn1["load"][0] == "s2"
    blocks = '<skill id="s2" name="baggage-allowance">\n- Bags are weighed at the desk.\n</skill>'
    second = first + "\n\n" + render("executor_answer", case_id="bags-1", skills=Block(blocks))
    answers = ask(sim_workspace, "executor", second, EXECUTOR_STEP, certain, samples=8)
    assert [d["answer"] for d in answers] == ["4"] * 8
    assert answers[0]["skills_used"] == ["general-rules", "baggage-allowance"]


def test_executor_pass_rate_lies_between_floor_and_ceiling(sim_workspace):
    config = sim_workspace.configured(simulator={"floor": 0.2, "ceiling": 0.8})
    half = executor_answer_prompt("bags-1", "- Bags are weighed at the desk.")
    answers = ask(sim_workspace, "executor", half, EXECUTOR_STEP, config, samples=200)
    rate = sum(d["answer"] == "4" for d in answers) / 200
    assert 0.1 < rate < 0.32  # floor 0.2 with no evidence; binomial spread for 200 draws


def test_executor_wrong_action_list_is_plausible(sim_workspace):
    config = sim_workspace.configured(simulator={"floor": 0.0, "ceiling": 0.0})
    answers = ask(sim_workspace, "executor", executor_answer_prompt("cancel-1", "- Nothing relevant."), EXECUTOR_STEP,
                  config, samples=10)
    expected = [{"name": "get_reservation_details", "arguments": {"reservation_id": "ABC123"}}]
    for data in answers:
        actions = data["answer"]["actions"]
        assert actions != expected and isinstance(actions, list)
        assert len(actions) <= 2 and all("name" in a for a in actions)


def test_wrong_answer_shapes():
    rng = random.Random(1)
    assert wrong_answer("yes", rng) == "no" and wrong_answer(True, rng) is False and wrong_answer(3, rng) == 4
    assert wrong_answer("Refund to the original card.", rng) != "Refund to the original card."
    reads = [{"name": "get_user_details", "arguments": {"user_id": "u1"}}]
    outs = [wrong_answer(reads, random.Random(seed)) for seed in range(20)]
    assert all(o != reads for o in outs)
    assert any(any(a["name"] == "cancel_reservation" for a in o) for o in outs)  # a write where none is expected
    assert any(o == [] for o in outs)  # a dropped action


def test_unknown_case_gets_a_null_answer(sim_workspace):
    (data,) = ask(sim_workspace, "executor", executor_answer_prompt("no-such-case", "- x"), EXECUTOR_STEP)
    assert data == {"answer": None, "skills_used": []}


def test_same_seed_same_answers_other_seed_other_answers(sim_workspace):
    prompt = executor_answer_prompt("bags-1", "- Bags are weighed at the desk.")
    first = ask(sim_workspace, "executor", prompt, EXECUTOR_STEP, samples=30)
    assert ask(sim_workspace, "executor", prompt, EXECUTOR_STEP, samples=30) == first
    other = ask(sim_workspace, "executor", prompt, EXECUTOR_STEP, sim_workspace.configured(simulator={"seed": 7}),
                samples=30)
    assert other != first


def diagnoser_prompt() -> str:
    """The prompt conventions of docs/ARCHITECTURE.md, written out (evolution/ renders the real one)."""
    skills = "\n\n".join(
        f'<skill name="{name}">\n{body}\n</skill>'
        for name, body in [("cancel-flight", "- Cancel on request."), ("baggage-allowance", "- Bags are weighed."),
                           ("greeting", "- Say hello.")]
    )
    failures = [{"case_id": "bags-1", "category": "baggage", "input": {"text": "How many free checked bags?"},
                 "expected": "4", "got": "2", "reason": "wrong", "diagnosis": {"evidence": [BAGS_RULE]}}]
    return f"Skills:\n\n{skills}\n\nFailures:\n```json\n{json.dumps(failures, indent=2)}\n```\n"


def test_diagnoser_with_insight_quotes_the_evidence_for_the_best_skill(sim_workspace):
    config = sim_workspace.configured(simulator={"p_insight": 1.0})
    (data,) = ask(sim_workspace, "diagnoser", diagnoser_prompt(), DIAGNOSIS, config)
    assert data["proposals"] == [
        {
            "skill": "baggage-allowance", "change": f'Add the rule: "{BAGS_RULE}"', "rules": [BAGS_RULE],
            "rationale": data["proposals"][0]["rationale"], "case_ids": ["bags-1"],
        }
    ]


def test_diagnoser_without_insight_copies_the_evidence_or_proposes_a_spurious_rule(sim_workspace):
    config = sim_workspace.configured(simulator={"p_insight": 0.0, "p_literal": 1.0})
    for data in ask(sim_workspace, "diagnoser", diagnoser_prompt(), DIAGNOSIS, config, samples=3):
        assert [p["rules"] for p in data["proposals"]] == [[BAGS_RULE]]
    config = sim_workspace.configured(simulator={"p_insight": 0.0, "p_literal": 0.0})
    for data in ask(sim_workspace, "diagnoser", diagnoser_prompt(), DIAGNOSIS, config, samples=5):
        (proposal,) = data["proposals"]
        assert proposal["skill"] in {"cancel-flight", "baggage-allowance", "greeting"}
        assert len(proposal["rules"]) == 1 and proposal["rules"][0] in SPURIOUS_RULES


BODY = ("# Bags\n\n- Bags are weighed at the desk.\n- Oversize bags cost extra.\n\n<!-- frames:protected -->\n- Never "
        "waive fees for staff.\n<!-- /frames:protected -->")


def rewriter_prompt(anchors: list) -> str:
    change = {"change": f'Add the rule: "{BAGS_RULE}"', "rules": [BAGS_RULE]}
    blueprint = {"skill": "baggage-allowance", "changes": [change]}
    return (
        f'<skill name="baggage-allowance" target="true">\n{BODY}\n</skill>\n\nOther skills:\n- cancel-flight — Cancel '
        f'reservations\n\n'
        f"Blueprint:\n```json\n{json.dumps(blueprint)}\n```\n\nAnchor cases:\n```json\n{json.dumps(anchors)}\n```\n"
    )


def test_rewriter_applies_the_blueprint_and_keeps_protected_text(sim_workspace):
    config = sim_workspace.configured(simulator={"p_forget": 0.0, "p_verbose": 0.0})
    (data,) = ask(sim_workspace, "rewriter", rewriter_prompt([]), REWRITE, config)
    assert data["body"] == BODY + f"\n- {BAGS_RULE}\n"


def test_rewriter_forgets_a_rule_unless_anchored_and_restates_one(sim_workspace):
    forgetful = sim_workspace.configured(simulator={"p_forget": 1.0, "p_forget_anchored": 0.0, "p_verbose": 1.0})
    (data,) = ask(sim_workspace, "rewriter", rewriter_prompt([]), REWRITE, forgetful)
    body = data["body"]
    kept = [line for line in ("- Bags are weighed at the desk.", "- Oversize bags cost extra.") if line in body]
    assert len(kept) == 1 and "- Never waive fees for staff." in body and BAGS_RULE in body
    assert body.rstrip().endswith("- " + RESTATE.format(rule=BAGS_RULE[0].lower() + BAGS_RULE[1:]))
    (anchored,) = ask(sim_workspace, "rewriter", rewriter_prompt([{"case_id": "bags-1"}]), REWRITE, forgetful)
    assert "- Bags are weighed at the desk." in anchored["body"] and "- Oversize bags cost extra." in anchored["body"]


SECTION = ("## Checked bags\n\nSilver members get 2 free checked bags per passenger in economy.\nEach bag must weigh "
           "at most 23 kg.\nStaff must never waive fees.")


def test_generator_writes_cases_quoting_the_section(sim_workspace):
    prompt = (
        "Write up to 2 cases that each decide one rule.\n\nCategory: baggage\n\n"
        f'<policy file="policies/airline.md" lines="1-5" heading="Airline > Checked bags">\n{SECTION}\n</policy>\n'
    )
    (data,) = ask(sim_workspace, "generator", prompt, GENERATED_CASES)
    assert len(data["cases"]) == 2
    for case in data["cases"]:
        assert (
            case["category"] == "baggage"
            and case["evidence"][0] in SECTION
            and str(case["expected"]) in case["evidence"][0]
        )


def test_judge_grades_against_the_expected_answer(sim_workspace):
    def verdict(answer):
        prompt = render("judge", case_id="refund-1", request="delay", rubric="Refuse compensation.",
                        answer=json.dumps(answer))
        return ask(sim_workspace, "judge", prompt, RUBRIC_VERDICT)[0]

    assert verdict("no")["pass"] is True and verdict("yes")["pass"] is False



def test_judge_grades_a_rubric_list_by_its_words(sim_workspace):
    from frames_cli.formats.case import Case, Check, Source, Task
    from frames_cli.sim.world import SimWorld

    rubric = ["Refuses compensation for a one-hour delay.", "Explains the three-hour threshold."]
    world = SimWorld.from_cases([Case("r1", "refund", Source("manual"), "2026-11-29",
                                      Task({"text": "delay"}, rubric, Check("rubric")))])

    def verdict(answer):
        prompt = render("judge", case_id="r1", request="delay", rubric="\n".join(rubric), answer=json.dumps(answer))
        with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False, sim_world=world) as client:
            return client.chat(ChatRequest("judge", [{"role": "user", "content": prompt}], RUBRIC_VERDICT)).data["pass"]

    assert verdict("I must refuse compensation: a one-hour delay is below the three-hour threshold, as I explain.")
    assert not verdict("Here is a voucher for the one-hour delay.")


def test_coldstart_keeps_every_sentence_as_a_numbered_step(sim_workspace):
    prompt = f'Rewrite it.\n\n<policy file="policies/airline.md" heading="Checked bags">\n{SECTION}\n</policy>'
    (data,) = ask(sim_workspace, "coldstart", prompt, REWRITE)
    assert data["body"] == (
        "1. Silver members get 2 free checked bags per passenger in economy.\n2. Each bag must weigh at most 23 kg.\n"
        "3. Staff must never waive fees.\n"
    )
    # A numbered step wrapped over lines is one step, never cut at the line break (18F's
    # "1. First thing to get is a travel vendor ID, which you can request by" / "   filling out ...").
    wrapped = ("1. First get a travel vendor ID, which you can request by\n   filling out the EFT form.\n2. Forward "
               "the ID to the travel team.")
    prompt = f'Rewrite it.\n\n<policy file="policies/p.md" heading="Get set up">\n{wrapped}\n</policy>'
    (data,) = ask(sim_workspace, "coldstart", prompt, REWRITE)
    assert (
        data["body"]
        == "1. First get a travel vendor ID, which you can request by filling out the EFT form.\n2. Forward the ID to "
           "the travel team.\n"
    )


def test_truncated_replies_end_with_length_and_are_repaired_or_failed(sim_workspace):
    config = sim_workspace.configured(faults={"truncated": 1.0})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        reply = client.chat(ChatRequest("judge", [{"role": "user", "content": "Case id: refund-1\n"}], RUBRIC_VERDICT))
    assert not reply.ok
    log = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    assert [e["finish_reason"] for e in log] == ["length", "length"]
    assert "cut off at the output token limit" in log[1]["messages"][-1]["content"]


def test_an_insightful_fix_reaches_the_executor(sim_workspace):
    """Diagnoser → rewriter → executor, all simulated: the fixed skill is the one the agent loads."""
    config = sim_workspace.configured(simulator={"floor": 0.0, "ceiling": 1.0, "p_insight": 1.0, "p_forget": 0.0,
                                                 "p_verbose": 0.0})
    skills = {
        "cancel-flight": ("Cancel reservations and refunds", "- Cancel on request."),
        "baggage-allowance": ("Free checked bags by membership and cabin", "- Bags are weighed at the desk."),
        "delay-compensation": ("Delays and compensation", "- Apologise for delays."),
    }
    ids = {name: f"s{i}" for i, name in enumerate(skills, 1)}

    def executor_answer() -> str:
        catalog = "3 skills available:\n" + "\n".join(f"- {ids[n]}: {n} — {d}" for n, (d, _) in skills.items())
        first = render("executor_catalog", case_id="bags-1", given="", catalog=catalog, request="bags?",
                       answer_format="a number", max_loads=3)
        (turn1,) = ask(sim_workspace, "executor", first, EXECUTOR_STEP, config)
        by_id = {v: k for k, v in ids.items()}
        blocks = "\n\n".join(f'<skill id="{sid}" name="{by_id[sid]}">\n{skills[by_id[sid]][1]}\n</skill>'
                             for sid in turn1["load"])
        (turn2,) = ask(sim_workspace, "executor",
                       first + "\n\n" + render("executor_answer", case_id="bags-1", skills=Block(blocks)),
                       EXECUTOR_STEP, config)
        return turn2["answer"]

    assert executor_answer() != "4"
    blocks = "\n\n".join(f'<skill name="{n}">\n{body}\n</skill>' for n, (_, body) in skills.items())
    failures = [{"case_id": "bags-1", "input": {"text": "How many free checked bags?"},
                 "diagnosis": {"evidence": [BAGS_RULE]}}]
    (diagnosis,) = ask(sim_workspace, "diagnoser", f"{blocks}\n\nFailures:\n```json\n{json.dumps(failures)}\n```\n",
                       DIAGNOSIS, config)
    (proposal,) = diagnosis["proposals"]
    target = proposal["skill"]
    rewrite_prompt = (
        f'<skill name="{target}" target="true">\n{skills[target][1]}\n</skill>\n\n'
        f"Blueprint:\n```json\n{json.dumps({'skill': target, 'changes': [proposal]})}\n```\n\n"
        "Anchor cases:\n```json\n[]\n```\n"
    )
    (rewrite,) = ask(sim_workspace, "rewriter", rewrite_prompt, REWRITE, config)
    skills[target] = (skills[target][0], rewrite["body"])
    assert executor_answer() == "4"
