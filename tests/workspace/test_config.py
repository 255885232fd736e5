"""frames.yaml: defaults round-trip through the template; bad values name the key and the line."""

from __future__ import annotations

import pytest

from frames_cli.errors import ConfigError
from frames_cli.workspace.config import FramesConfig, with_overrides
from frames_cli.workspace.config_file import RetiredSetting, parse_config, render_config


def test_rendered_template_parses_back_to_the_defaults() -> None:
    assert parse_config(render_config()) == FramesConfig()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("llm:\n  concurency: 3\n", "frames.yaml:2: unknown key `llm.concurency`"),
        ("evolution:\n  vote_threshold: some\n",
         "frames.yaml:2: `evolution.vote_threshold` must be a whole number or `all`, got 'some'"),
        ("evolution:\n  tolerance: 2\n", "frames.yaml:2: `evolution.tolerance` must be at most 1.0, got 2.0"),
        ("models:\n  executor: frames-sim/nonsense\n",
         "frames.yaml:2: `models.executor`: the simulator plays no role 'nonsense'"),
        ("version: 1\nllm:\n  cache: !!bool maybe\n", "frames.yaml:3: `llm.cache`: 'maybe' cannot be read as bool"),
    ],
)
def test_bad_values_name_key_and_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert str(info.value).startswith(message)


def test_a_retired_key_is_ignored_with_a_warning_naming_file_and_line() -> None:
    text = "evolution:\n  max_rounds: 4\n  regression_sample: lots\n"

    with pytest.warns(RetiredSetting) as caught:
        config = parse_config(text, "ws/frames.yaml")

    assert config == with_overrides(FramesConfig(), "evolution", max_rounds=4)
    assert [str(w.message) for w in caught] == [
        "ws/frames.yaml:3: `evolution.regression_sample` is no longer a setting (pool cases are workspace cases, "
        "placed in a set by `evolution.split`): it is ignored; delete the line"
    ]


def test_models_accept_any_provider_string_and_the_simulator_roles() -> None:
    config = parse_config("models:\n  executor: frames-sim/executor\n  rewriter: openai/gpt-4.1-mini\n  judge: "
                          "spool/judge\n")
    assert (config.models.executor, config.models.rewriter, config.models.judge) == (
        "frames-sim/executor",
        "openai/gpt-4.1-mini",
        "spool/judge",
    )
