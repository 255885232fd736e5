"""Token estimates of text in any script (issue 29: CJK text was sized at characters / 4, about a
quarter of its tokens, so a 31-article regulation became one skill)."""

from __future__ import annotations

from frames_cli.tokens import approx_tokens

ARTICLE = ("第{n}条 为了规范个人信息处理活动，保护个人信息权益，促进个人信息合理利用，根据宪法，制定本法。"
           "任何组织、个人不得侵害自然人的个人信息权益。")


def test_english_keeps_the_rule_of_thumb_and_other_scripts_cost_more():
    assert approx_tokens("a" * 400) == 100
    zh = ARTICLE.format(n=1)
    # cl100k_base gives 1.07 tokens per character on such text (tokens.py).
    assert len(zh) * 0.9 <= approx_tokens(zh) <= len(zh) * 1.1
    assert approx_tokens("Настоящий закон регулирует отношения") > len("Настоящий закон регулирует отношения") / 4


def test_a_31_article_regulation_is_cut_into_several_skills(policy_workspace):
    from frames_cli.coldstart.sectioning import cut_document
    from frames_cli.formats.policy import read_policies
    from frames_cli.workspace.config import ColdstartConfig

    root = policy_workspace()
    text = "# 个人信息保护法\n\n" + "\n\n".join(ARTICLE.format(n=n) for n in range(1, 32)) + "\n"
    (root / "policies" / "pipl.md").write_text(text, encoding="utf-8")
    [doc] = read_policies(root, root / "policies")
    assert len(cut_document(doc, ColdstartConfig())) >= 2
