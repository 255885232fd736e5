"""Fault draws: four independent draws per call at the configured rates, none when no rate is set."""

from __future__ import annotations

import random
from functools import partial

import pytest

from frames_cli.sim.faults import FaultDraw, draw
from frames_cli.workspace.config import FaultsConfig


@pytest.mark.parametrize("rates", [(0.0, 0.3, 0.0, 1.0), (0.5, 0.5, 0.5, 0.5), (1.0, 0.0, 0.0, 0.0)])
def test_each_fault_is_one_draw_of_the_stream_in_a_fixed_order(rates):
    config = FaultsConfig(*rates)
    for seed in range(50):
        reference = random.Random(seed)
        expected = FaultDraw(*(reference.random() < rate for rate in rates))
        assert draw(config, partial(random.Random, seed)) == expected


def test_no_rate_set_means_no_fault_and_no_stream():
    def stream() -> random.Random:
        raise AssertionError("the fault stream was made although no fault can hit")

    assert draw(FaultsConfig(), stream) == FaultDraw()
