"""The QAT model's inputs: derived from cited card figures and measured CPU costs, three fitted."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest

from cryptoffload.errors import ProfileError
from cryptoffload.profiles.loader import builtin_profile_path, load_profile
from cryptoffload.sim.qat.model import simulate_mode
from cryptoffload.sim.qat.params import REQUIRED_PROFILE_FIELDS, load_qat_params


def test_card_rate_follows_the_cited_rsa_figures():
    p = load_qat_params()
    assert p.card_modexp_per_s == pytest.approx(44_259 / (2 ** (math.log2(190_000 / 40_000) - 1) / 2), rel=1e-9)
    q = load_qat_params(card_scaling="quadratic")
    assert q.card_modexp_per_s == pytest.approx(44_259 / 2, rel=1e-9)
    assert p.engines == round(p.card_modexp_per_s * p.modexp_s)


def test_profile_measured_values_are_the_stored_benchmark_results():
    """The measured CPU costs in the profile are those of benchmarks/results/qat_cpu_costs.json."""
    stored = json.loads((Path(__file__).parents[3] / "benchmarks" / "results" / "qat_cpu_costs.json").read_text())["median"]
    prof = load_profile("qat_dh8970", required=REQUIRED_PROFILE_FIELDS)
    for field, key in (("cpu.measured_gmp_powm_s", "gmp_powm_2048_1024_s"), ("cpu.measured_thread_switch_s", "thread_switch_s_many"),
                       ("cpu.measured_coroutine_run_s", "coroutine_swap_s_many"), ("cpu.measured_paillier_pre_s", "paillier_pre_s"),
                       ("cpu.measured_paillier_post_s", "paillier_post_s")):
        assert prof.value(field) == pytest.approx(stored[key], rel=1e-3), field


# -- the profile and bad input ----------------------------------------------------------------
def test_every_profile_value_says_whether_it_is_cited_measured_or_fitted():
    prof = load_profile("qat_dh8970", required=REQUIRED_PROFILE_FIELDS)
    assert prof.kind == "derived"
    kinds: dict[str, set[str]] = {}
    for dotted, pv in prof.values.items():
        kinds.setdefault(pv.provenance, set()).add(dotted)
        # the source's first words say the same kind (older readers still find it there)
        assert pv.source.startswith(("cited:", "measured", "fitted to Table 1:", "bound:", "derived from")), dotted
    assert kinds["fitted"] == {"card.modexp_latency_s", "cpu.request_s", "workload.qhcs_coroutines"}
    # derived from the paper's QHCS1 figures (1151 / 0.042 / 110), not a figure of its own
    assert kinds["derived"] == {"cpu.paper_sw_encryption_s"}
    assert kinds["assumed"] == {"card.ring_capacity"}


def test_profile_missing_a_field_raises_profile_error(tmp_path):
    text = builtin_profile_path("qat_dh8970").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.startswith("modexp_latency_s")]
    bad = tmp_path / "bad.toml"
    bad.write_text("\n".join(lines), encoding="utf-8")
    tomllib.loads(bad.read_text(encoding="utf-8"))  # still valid TOML: only the field is gone
    with pytest.raises(ProfileError, match=r"card\.modexp_latency_s"):
        simulate_mode("qhcs1", bad, n_encryptions=10)


def test_profile_with_fractional_thread_count_raises_profile_error(tmp_path):
    text = builtin_profile_path("qat_dh8970").read_text(encoding="utf-8")
    bad = tmp_path / "frac.toml"
    bad.write_text(text.replace("s2_threads = { value = 1000,", "s2_threads = { value = 1000.5,"), encoding="utf-8")
    with pytest.raises(ProfileError, match=r"workload\.s2_threads"):
        load_qat_params(bad)


def test_modexp_time_scales_with_exponent_and_square_of_modulus():
    p = load_qat_params()
    assert p.modexp_time(1.0, 2048, 1024) == pytest.approx(1.0)
    assert p.modexp_time(1.0, 2048, 512) == pytest.approx(0.5)
    assert p.modexp_time(1.0, 4096, 1024) == pytest.approx(4.0)
