"""Tests of the QAT DH8970 / Paillier offload model (Zhou and Hua, QHCS).

Closed forms first: with CPU costs made negligible the card alone sets the pace, so a single
synchronous caller gets 1/(2 x service) encryptions per second, a saturated card
engines/(2 x service), and a ring of capacity K with ample engines K/(2 x service). Then the
card's two rules (in-order responses, bounded ring); then the paper's Table 1 with the built-in
profile, on 6,000 encryptions instead of 30,000 to stay fast: fit checks for the three fitted
values, prediction checks for the rest, and perturbations that make the predictions fail.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.sim.qat.model import (
    QAT_DESIGNS,
    PAPER_TARGETS,
    QatParams,
    QatRunResult,
    load_qat_params,
    simulate_mode,
    simulate_modexp_offload,
)

TINY = 1e-12  # a CPU cost that is not zero (costs must be positive) but negligible
SERVICE = 1e-3


def _card_only(**overrides: object) -> QatParams:
    """The built-in profile with every CPU cost negligible and a 1 ms modexp."""
    p = load_qat_params()
    cpu = {
        name: TINY
        for name in (
            "request_s",
            "poll_s",
            "callback_s",
            "thread_switch_s",
            "coroutine_switch_s",
            "paillier_pre_s",
            "paillier_post_s",
        )
    }
    return replace(p, modexp_s=SERVICE, **cpu, **overrides)  # type: ignore[arg-type]


# -- closed forms -----------------------------------------------------------------------------
def test_one_engine_one_synchronous_caller_gets_one_over_two_services():
    r = simulate_mode("qat-s1", _card_only(engines=1), n_encryptions=200, random_exponents=False)
    assert r.throughput_ops == pytest.approx(1 / (2 * SERVICE), rel=1e-6)
    assert r.mean_latency_s == pytest.approx(2 * SERVICE, rel=1e-6)
    assert r.engine_utilisation == pytest.approx(1.0, rel=1e-6)
    assert r.modexps == 400 and r.max_outstanding == 1


@pytest.mark.parametrize("mode", ["qat-s2", "qhcs1", "qhcs2"])
def test_saturated_card_gives_engines_over_two_services(mode: str):
    engines = 8
    r = simulate_mode(mode, _card_only(engines=engines), n_encryptions=2000, concurrency=64, random_exponents=False)
    assert r.throughput_ops == pytest.approx(engines / (2 * SERVICE), rel=0.02)
    assert r.engine_utilisation > 0.98


def test_software_mode_is_the_sum_of_its_cpu_work():
    p = load_qat_params()
    r = simulate_mode("sw", p, n_encryptions=100, random_exponents=False)
    per_enc = p.paillier_pre_s + 2 * p.sw_modexp_s + p.paillier_post_s
    assert r.throughput_ops == pytest.approx(1 / per_enc, rel=1e-9)
    assert r.cpu_utilisation == pytest.approx(1.0) and r.engine_utilisation == 0.0


def test_generic_modexp_offload_saturates_the_card():
    r = simulate_modexp_offload(_card_only(engines=4), n_requests=2000, in_flight=32)
    assert r.mode == "modexp-offload"
    assert r.throughput_ops == pytest.approx(4 / SERVICE, rel=0.02)


@pytest.mark.parametrize("mode", ["qat-s2", "qhcs1", "qhcs2"])
def test_bounded_ring_back_pressures_the_submitters(mode: str):
    ring = 4
    p = _card_only(ring_capacity=ring)
    r = simulate_mode(mode, p, n_encryptions=300, concurrency=32, random_exponents=False)
    assert r.max_outstanding == ring
    assert r.ring_refusals > 0 and r.cpu_time["refused_submit"] > 0
    # With ample engines the ring is the bottleneck: K requests in flight, two per encryption.
    assert r.throughput_ops == pytest.approx(ring / (2 * SERVICE), rel=0.03)


def test_refused_submissions_cost_cpu_time():
    p = replace(load_qat_params(), ring_capacity=8)
    r = simulate_mode("qhcs1", p, n_encryptions=500, concurrency=64)
    assert r.max_outstanding == 8
    assert r.cpu_time["refused_submit"] > 0.1 * r.span_s  # spinning on a full ring


# -- the paper's Table 1 (built-in profile) ----------------------------------------------------
@pytest.fixture(scope="module")
def paper() -> dict[str, QatRunResult]:
    return {m: simulate_mode(m, n_encryptions=6000, seed=0) for m in QAT_DESIGNS}


def test_fit_check_the_three_fitted_values_reproduce_their_figures(paper):
    """Fit check: card latency, driver cost and coroutine count were fitted to S1 throughput,
    S2 throughput and QHCS1 latency (sim/qat/fit.py); the model must give those back."""
    assert paper["qat-s1"].throughput_ops == pytest.approx(PAPER_TARGETS["qat-s1"]["throughput_ops"], rel=0.02)
    assert paper["qat-s2"].throughput_ops == pytest.approx(PAPER_TARGETS["qat-s2"]["throughput_ops"], rel=0.02)
    assert paper["qhcs1"].mean_latency_s == pytest.approx(PAPER_TARGETS["qhcs1"]["mean_latency_s"], rel=0.03)


def test_fit_check_software_is_the_papers_sw_figure(paper):
    """Fit check by construction: CPU costs are scaled to the paper's SW encryption time."""
    assert paper["sw"].throughput_ops == pytest.approx(PAPER_TARGETS["sw"]["throughput_ops"], rel=0.01)


def prediction_failures(runs: dict[str, QatRunResult]) -> list[str]:
    """Which predictions miss their stated tolerance (empty: none). Predicted, i.e. from the cited
    card rate and the measured CPU costs, with nothing fitted to these figures."""
    q1, q2, s2, sw = runs["qhcs1"], runs["qhcs2"], runs["qat-s2"], runs["sw"]
    checks = {
        "QHCS2 latency half of QHCS1 (within 25 %)": abs(q2.mean_latency_s / q1.mean_latency_s / 0.5 - 1) <= 0.25,
        "QHCS2 throughput slightly below QHCS1 (0.85-1.0x)": 0.85 * q1.throughput_ops <= q2.throughput_ops <= q1.throughput_ops,
        "QHCS1 beats S2": q1.throughput_ops > s2.throughput_ops,
        "QHCS1 within -40 %/+25 % of 27,400 enc/s": 0.6 <= q1.throughput_ops / 27_400 <= 1.25,
        "QHCS1 / SW within -40 %/+25 % of 110": 0.6 <= q1.throughput_ops / sw.throughput_ops / 110 <= 1.25,
    }
    return [name for name, ok in checks.items() if not ok]


def test_predictions_hold_within_their_tolerances(paper):
    assert prediction_failures(paper) == []


def test_prediction_checks_fail_when_the_card_is_half_as_fast():
    # The cited card rate is what bounds QHCS1: halve it and the prediction leaves its tolerance.
    p = load_qat_params()
    slow = replace(p, card_modexp_per_s=p.card_modexp_per_s / 2, engines=max(1, p.engines // 2))
    runs = {m: simulate_mode(m, slow, n_encryptions=4000, seed=0) for m in ("sw", "qat-s2", "qhcs1", "qhcs2")}
    assert "QHCS1 within -40 %/+25 % of 27,400 enc/s" in prediction_failures(runs)


def test_prediction_checks_fail_when_thread_switches_cost_what_coroutine_swaps_do():
    # The advantage of coroutines is that a swap costs far less than a thread switch: make them
    # equal and S2 catches up with QHCS1.
    p = load_qat_params()
    cheap = replace(p, thread_switch_s=p.coroutine_switch_s)
    runs = {m: simulate_mode(m, cheap, n_encryptions=4000, seed=0) for m in ("sw", "qat-s2", "qhcs1", "qhcs2")}
    assert "QHCS1 beats S2" in prediction_failures(runs)


@pytest.mark.parametrize("field", ["request_s", "modexp_s", "qhcs_coroutines"])
@pytest.mark.parametrize("factor", [0.5, 1.5])
def test_predicted_qhcs2_ratios_do_not_move_with_any_fitted_value(field, factor):
    """The study labels QHCS2 / QHCS1 (latency and throughput) predicted: none of the three fitted
    values may move them (each moved by +-50 %)."""
    from cryptoffload.sim.qat.fit import with_latency

    p = load_qat_params()
    if field == "modexp_s":
        q = with_latency(p, p.modexp_s * factor)
    elif field == "qhcs_coroutines":
        q = replace(p, qhcs_coroutines=int(p.qhcs_coroutines * factor))
    else:
        q = replace(p, request_s=p.request_s * factor)
    runs = {m: simulate_mode(m, q, n_encryptions=3000, seed=0) for m in ("qhcs1", "qhcs2")}
    assert runs["qhcs2"].mean_latency_s / runs["qhcs1"].mean_latency_s == pytest.approx(0.51, abs=0.03)
    assert runs["qhcs2"].throughput_ops / runs["qhcs1"].throughput_ops == pytest.approx(1.0, abs=0.02)


def test_the_card_not_the_cpu_limits_qhcs_and_the_cpu_limits_s2(paper):
    assert paper["qhcs1"].engine_utilisation > 0.95
    assert paper["qat-s2"].engine_utilisation < 0.9
    for m in ("qat-s2", "qhcs1", "qhcs2"):
        assert paper[m].encryptions == 6000 and paper[m].modexps == 12000


def test_same_seed_same_result():
    a = simulate_mode("qhcs2", n_encryptions=500, seed=7)
    b = simulate_mode("qhcs2", n_encryptions=500, seed=7)
    assert a.as_dict() == b.as_dict()


@pytest.mark.parametrize(
    ("mode", "concurrency"),
    [("qat-s2", 0), ("qat-s2", -3), ("qhcs1", 2.5), ("qhcs1", True), ("qhcs2", 1), ("qat-s1", 4), ("sw", 2)],
)
def test_nonsense_concurrency_raises_config_error(mode: str, concurrency: object):
    with pytest.raises(ConfigError):
        simulate_mode(mode, n_encryptions=10, concurrency=concurrency)  # type: ignore[arg-type]


def test_unknown_mode_and_bad_sizes_raise_config_error():
    with pytest.raises(ConfigError, match="unknown QAT mode"):
        simulate_mode("qhcs3", n_encryptions=10)
    with pytest.raises(ConfigError):
        simulate_mode("qhcs1", n_encryptions=0)
    with pytest.raises(ConfigError):
        replace(load_qat_params(), poll_s=-1e-6)
    with pytest.raises(ConfigError):
        replace(load_qat_params(), engines=0)
