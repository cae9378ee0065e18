"""The ridge study's bands on made-up chunk times: a t-interval (95 %) of the per-ciphertext rate
over the chunks, none claimed from fewer than five, the accuracy band in z, and the tables."""

from __future__ import annotations

import math
import statistics

import pytest

from cryptoffload.apps.ridge.bulk import ChunkTiming
from cryptoffload.studies.ridge import bands as rb

# per-ciphertext encryption (encode + encrypt) 1.0, 1.2, 1.1, 1.3, 1.2 ms; the fourth chunk is half
# size, so a band from the folded sums (not the rates) would differ
CHUNKS = [ChunkTiming(0, 100, 0.01, 0.09, 0.002), ChunkTiming(100, 100, 0.02, 0.10, 0.002),
          ChunkTiming(200, 100, 0.01, 0.10, 0.003), ChunkTiming(300, 50, 0.005, 0.06, 0.001),
          ChunkTiming(350, 100, 0.02, 0.10, 0.002)]
T4 = 2.7764451051977934  # Student's t, 97.5 %, four degrees of freedom: five chunks


def _rel_se(rates: list[float]) -> float:
    return statistics.stdev(rates) / math.sqrt(len(rates)) / statistics.fmean(rates)


def test_a_phase_band_is_a_t_interval_of_the_chunk_rates() -> None:
    noise = rb.chunk_noise(CHUNKS)
    enc_se = _rel_se([1.0, 1.2, 1.1, 1.3, 1.2])
    assert noise["encryption"].samples == 5 and noise["encryption"].rel_se == pytest.approx(enc_se, rel=1e-12)
    bands = rb.phase_bands(rb.PhaseFigures(1000.0, 50.0, 1050.0, 9.0), noise, {"encryption": 636.0})
    enc = bands["encryption"]
    assert (enc.band.nominal, enc.band.low, enc.band.high) == pytest.approx(
        (1000.0, 1000 * (1 - T4 * enc_se), 1000 * (1 + T4 * enc_se)), rel=1e-12)
    assert enc.paper == 636.0 and bands["aggregation"].paper is None
    assert rb.most_sensitive(enc) == "run-to-run noise of the encryption chunk times (5 chunks)"
    assert enc.band.method.startswith("t-interval, 95 %, 4 degrees of freedom (t = 2.78) x the relative standard "
                                      "error of the per-ciphertext encryption time over this run's 5 chunks")
    agg_se = _rel_se([0.02, 0.02, 0.03, 0.02, 0.02])
    assert (bands["aggregation"].band.low, bands["aggregation"].band.high) == pytest.approx(
        (50 * (1 - T4 * agg_se), 50 * (1 + T4 * agg_se)), rel=1e-9)


def test_the_total_carries_the_pipelines_noise_and_the_solve_none() -> None:
    noise = rb.chunk_noise(CHUNKS)
    se = _rel_se([1.02, 1.22, 1.13, 1.32, 1.22])
    bands = rb.phase_bands(rb.PhaseFigures(1000.0, 50.0, 1050.0, 9.0), noise, {})
    total = bands["total"]
    assert (total.band.nominal, total.band.low, total.band.high) == pytest.approx(
        (1059.0, 1050 * (1 - T4 * se) + 9.0, 1050 * (1 + T4 * se) + 9.0), rel=1e-9)
    assert rb.most_sensitive(total) == "run-to-run noise of the encryption + aggregation chunk times (5 chunks)"
    solve = bands["solve"]
    assert (solve.band.low, solve.band.high) == (9.0, 9.0)
    assert rb.most_sensitive(solve) == "run-to-run noise of the solve (one per run: not estimated)"
    assert solve.band.method == "one solve per run: its noise cannot be estimated from one measurement: no noise band"


def test_fewer_chunks_than_a_t_interval_needs_claim_no_noise() -> None:
    b = rb.phase_bands(rb.PhaseFigures(1000.0, 50.0, 1050.0, 9.0), rb.chunk_noise(CHUNKS[:4]), {})["encryption"].band
    assert (b.low, b.high) == (1000.0, 1000.0) and "fewer than the 5" in b.method


@pytest.mark.parametrize("chunks", [CHUNKS[:1], []])
def test_one_chunk_claims_no_noise(chunks) -> None:
    noise = rb.chunk_noise(chunks)
    assert noise["encryption"].rel_se is None
    b = rb.phase_bands(rb.PhaseFigures(1000.0, 50.0, 1050.0, 9.0), noise, {})["encryption"].band
    assert (b.low, b.high) == (1000.0, 1000.0)
    k = len(chunks)
    assert b.method == f"the noise cannot be estimated from {k} chunk{'s' if k != 1 else ''}: no noise band"


def test_a_phase_with_no_time_per_chunk_claims_no_noise() -> None:
    """The GPU engine times encryption and aggregation as one: aggregation has no rate of its own."""
    noise = rb.rate_noise("aggregation", [0.0, 0.0, 0.0], [10, 10, 10])
    assert (noise.samples, noise.rel_se, noise.why) == (3, None, "no aggregation time was recorded per chunk")


def test_a_wild_spread_does_not_take_the_band_below_zero() -> None:
    noise = rb.rate_noise("encryption", [1.0, 100.0, 1.0, 100.0, 1.0], [1, 1, 1, 1, 1])
    assert noise.rel_se is not None and noise.rel_se > 0.5 and noise.as_input().low == 0.0


def test_a_run_is_cut_into_enough_chunks_to_estimate_its_noise() -> None:
    assert rb.noise_chunk(10_000, 20_000) == 1_250            # quick: 8 chunks instead of 2
    assert rb.noise_chunk(1_000_000, 20_000) == 20_000        # full: 50 chunks already
    assert rb.noise_chunk(10_001, 20_000) == 1_251 and rb.noise_chunk(5, 20_000) == 1


def test_the_accuracy_band_is_in_z_and_names_the_fixed_point_scale() -> None:
    a = rb.accuracy_band(1.9, 16, 20)
    assert (a.max_z, a.low, a.high) == (1.9, 0.0, 4.0)
    assert a.most_sensitive.startswith("the fixed-point scale 2^-16 (frac_bits = 16): each record's x_j x_k and y x_j")
    assert "sqrt(records) / 2^16" in a.most_sensitive
    assert a.method.endswith("one of d = 20 exceeds 4 with probability below d x 6.3e-5 (0.13%)")


def test_the_band_tables_show_every_phase_and_the_accuracy() -> None:
    bands = rb.phase_bands(rb.PhaseFigures(1000.0, 50.0, 1050.0, 9.0), rb.chunk_noise(CHUNKS),
                           {"encryption": 636.0, "aggregation": 116.0, "solve": 20.0, "total": 772.0})
    table, tornado = rb.band_tables(list(bands.values()), rb.accuracy_band(1.9, 16, 20), "derived")
    col = {c: i for i, c in enumerate(table.columns)}
    rows = {r[0]: r for r in table.rows}
    assert list(rows) == ["encryption at 1,000,000 records (s)", "aggregation at 1,000,000 records (s)", "solve (s)",
                          "total at 1,000,000 records (s)", rb.ACCURACY_FIGURE]
    enc = rows["encryption at 1,000,000 records (s)"]
    assert enc[col["band_low"]] == pytest.approx(1000 * (1 - T4 * _rel_se([1.0, 1.2, 1.1, 1.3, 1.2])))
    assert enc[col["paper_inside"]] is False
    # the solve's row names the noise it rests on, though that noise moves nothing
    assert rows["solve (s)"][col["most_sensitive"]] == "run-to-run noise of the solve (one per run: not estimated)"
    acc = rows[rb.ACCURACY_FIGURE]
    assert (acc[col["ours"]], acc[col["band_low"]], acc[col["band_high"]], acc[col["paper"]]) == (1.9, 0.0, 4.0, None)
    assert table.column_provenance is not None and table.column_provenance["ours"] == "derived"
    assert table.cell_provenance(0, "band_low") == "derived" and table.cell_provenance(0, "paper") == "cited"
    # one tornado row per noise of each phase (the total has two: the pipeline's and the solve's)
    assert [r[0] for r in tornado.rows].count("total at 1,000,000 records (s)") == 2 and len(tornado.rows) == 5
