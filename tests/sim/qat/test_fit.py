"""The fit of the three unsourced QAT values: it gives back the figures it was fitted to."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cryptoffload.sim.qat.fit import FIT_TARGETS, fit_unsourced, with_latency
from cryptoffload.sim.qat.params import load_qat_params


def test_with_latency_keeps_the_cards_rate():
    p = load_qat_params()
    for lat in (0.5e-3, 2e-3):
        q = with_latency(p, lat)
        assert q.engines / q.modexp_s == pytest.approx(p.card_modexp_per_s, rel=0.05)


def test_fit_check_refitting_from_far_off_values_recovers_the_figures():
    """Fit check: start from values far from the profile's and the fit lands on the targets."""
    p = replace(with_latency(load_qat_params(), 0.4e-3), request_s=3e-6, qhcs_coroutines=50)
    fit = fit_unsourced(p, n=2500, rounds=1)
    for k, target in FIT_TARGETS.items():
        assert fit.achieved[k] == pytest.approx(target, rel=0.04), k
