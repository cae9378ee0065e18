"""isc-he-cnn's bands: keyswitch_s and hidden over their profile ranges and our (L/8)^x rule
between 2 and the paper's 0, reproducing the audit's Table 2 figures at 16 GB/s."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cryptoffload.profiles import load_profile
from cryptoffload.studies.isc_he_cnn import bands as ib
from cryptoffload.studies.isc_he_cnn import tables
from cryptoffload.studies.isc_he_cnn import study as st


@pytest.fixture(scope="module")
def banded():
    cfg = st.IscHeCnnConfig(quick=True, bandwidths=[16.0], decompose=False)
    setting = st._setting(cfg)
    t2 = tables.table2(setting)
    ours = {ib.table2_label(16.0): t2.runs[16.0].mean_latency_s * 1e3}
    return setting, ours, ib.isc_bands(setting, ours, {ib.table2_label(16.0): 1055.0}, cfg.fpga_profile)


def test_the_inputs_move_over_the_profile_ranges_and_the_papers_rule(banded) -> None:
    setting, ours, bands = banded
    b = bands[ib.table2_label(16.0)]
    assert b.band.nominal == ours[ib.table2_label(16.0)] and b.paper == 1055.0
    ends = {s.input: (s.low_input, s.high_input) for s in b.band.tornado}
    assert ends[ib.KEYSWITCH] == load_profile("heax_set_c").range("ops.keyswitch_s") == (6.4e-4, 9.6e-4)
    assert ends[ib.HIDDEN] == load_profile("he_cnn_paper_inputs").range("network.hidden") == (80, 120)
    assert ends[ib.RULE] == (0.0, 2.0)
    assert b.band.method == "tornado ends only (6 runs; corners skipped)"


def test_the_audits_figures_at_16_gbps(banded) -> None:
    """Issue 26: -16.4 % nominal; keyswitch_s +-20 %: -25.9 % / -6.9 %; hidden: -25.4 % / -7.0 %;
    the paper's constant key switching: +20.8 %."""
    _, ours, bands = banded
    b = bands[ib.table2_label(16.0)]
    err = {s.input: (s.at_low / 1055 - 1, s.at_high / 1055 - 1) for s in b.band.tornado}
    assert ours[ib.table2_label(16.0)] / 1055 - 1 == pytest.approx(-0.164, abs=0.001)
    assert err[ib.KEYSWITCH] == (pytest.approx(-0.259, abs=0.001), pytest.approx(-0.069, abs=0.001))
    assert err[ib.HIDDEN] == (pytest.approx(-0.254, abs=0.001), pytest.approx(-0.070, abs=0.001))
    assert err[ib.RULE][0] == pytest.approx(0.208, abs=0.001)
    # the paper's 1,055 ms lies inside only because our rule can be dropped: it is the input that moves most
    assert b.band.contains(1055.0) and b.band.most_sensitive == ib.RULE


def test_a_full_run_takes_the_corners(banded) -> None:
    setting, ours, _ = banded
    full = ib.isc_bands(replace(setting, quick=False), ours, {}, st.FPGA_PROFILE)[ib.table2_label(16.0)]
    assert full.band.method == "8 corners" and full.band.high >= 1274.0 and full.paper is None


def test_table3_and_the_workload_are_banded_as_the_study_simulates_them(banded) -> None:
    """Issue 35: every cell beside a paper value has a band; Table 3's at the nominal inputs is the
    study's own table, the workload's the program's summary."""
    setting, _, _ = banded
    t3 = tables.table3(setting, setting.world.compiled, "t")
    row = next(r for r in t3.rows if r.devices == 16)
    ours = {ib.table3_label(16, "csd_latency_ms"): row.csd_latency_ms,
            ib.workload_label("evaluation keys per client (GB)"): 0.0}
    run = ib._runner(setting, __import__("pathlib").Path("/nonexistent"), set(ours))({})
    assert run[ib.table3_label(16, "csd_latency_ms")] == pytest.approx(row.csd_latency_ms)
    assert run[ib.workload_label("evaluation keys per client (GB)")] == pytest.approx(
        setting.program.summary(setting.world.cost)["key_bytes"] / 1e9)
