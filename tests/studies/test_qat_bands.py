"""paillier-offload's bands: computed from qat_dh8970.toml's ranges (the three fitted values,
the unverified 8950 rates, the derived SW figure), and the claims judged by them."""

from __future__ import annotations

import pytest

from cryptoffload.profiles import load_profile
from cryptoffload.profiles.sensitivity import with_values
from cryptoffload.report.result import StudyResult
from cryptoffload.sim import qat
from cryptoffload.sim.qat_params import load_qat_params
from cryptoffload.studies import _qat_bands as qb
from cryptoffload.studies import _qat_model as qm


@pytest.fixture(scope="module")
def banded():
    res = StudyResult("paillier-offload", "test", "quick", 1, "test", {})
    m = qm.run_model(res, qat.PROFILE_NAME, "qat-measured", 600, 1, [], None)
    ours, paper = qm.model_figures(m)
    bands = {b.figure: b for b in qb.qat_bands(qat.PROFILE_NAME, "qat-measured", 1, ours, paper)}
    return res, m, ours, bands


def test_each_band_moves_its_inputs_over_the_profile_ranges(banded) -> None:
    _, m, ours, bands = banded
    prof = load_profile(qat.PROFILE_NAME)
    for b in bands.values():
        assert b.band.nominal == ours[b.figure]
        for s in b.band.tornado:
            assert (s.low_input, s.high_input) == prof.range(s.input), s
    assert [i.name for i in bands[qb.LATENCY_RATIO].inputs] == list(qb.FITTED)
    assert [i.name for i in bands[qb.CEILING_OVER_SW].inputs] == list(qb.CARD + qb.SW)
    # the ceiling is closed form: the corner with the 8950's 1K rate low and 2K rate high is its top
    top = load_qat_params(with_values(prof, {"card.reference_rsa1k_private_per_s": 185000,
                                             "card.reference_rsa2k_private_per_s": 40500}))
    assert bands[qb.CEILING_OPS].band.high == pytest.approx(top.card_modexp_per_s / 2, rel=1e-12)
    assert bands[qb.CEILING_OVER_SW].band.most_sensitive == "cpu.paper_sw_encryption_s"
    assert bands[qb.LATENCY_RATIO].band.most_sensitive == "workload.qhcs_coroutines"


def test_the_claims_follow_the_band_rule(banded) -> None:
    res, m, _, bands = banded
    qm.claims(res, m, bands)
    latency, ceiling = res.claims
    for c in res.claims:
        assert c.band is not None and c.kind == ("agreement" if c.band[0] <= c.paper_value <= c.band[1] else "divergence")
    # the card's ceiling is short of 27,400 enc/s over every reading of the 8950 rates
    assert ceiling.kind == "divergence" and ceiling.paper_value == 27_400 and ceiling.band[1] < 27_400
    assert ceiling.closes == "card.reference_rsa1k_private_per_s"
    assert "110 x our ceiling / 27,400, not an independent ratio" in ceiling.why
    assert latency.paper_value == 0.5 and latency.band == [bands[qb.LATENCY_RATIO].band.low,
                                                           bands[qb.LATENCY_RATIO].band.high]
