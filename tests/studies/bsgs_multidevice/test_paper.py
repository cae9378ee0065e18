"""The paper's setup in bsgs-multidevice, from hand-made configurations (the simulation itself:
test_bsgs_multidevice.py): Table 1's records and the claims pair our N with the paper's N --
never by position -- and every table lays out its typed rows in the published columns."""

from __future__ import annotations

import pytest

from cryptoffload.policies.bsgs_tuner import Config
from cryptoffload.profiles.loader import load_profile
from cryptoffload.studies.bsgs_multidevice import paper as st


def ms(value: float, rel: float = 1e-9) -> object:
    """A value carried through seconds and back (ms / 1e3 * 1e3 need not be bit-exact)."""
    return pytest.approx(value, rel=rel)


def cfg(n: int, ms: float, baby: int = 8, strategy: str = "replicate") -> Config:
    return Config(n, strategy, baby, 4, ms / 1e3, 0, 0, 0.0)


def run_of(devices: list[int], naive_ms: list[float], tuned_ms: list[float]) -> st.PaperRun:
    naive = [cfg(n, t, 256) for n, t in zip(devices, naive_ms)]
    tuned = [cfg(n, t, 64) for n, t in zip(devices, tuned_ms)]
    return st.PaperRun(devices, naive, tuned, tuned, tuned,
                       {s: [cfg(n, t + i, 2 + i, s) for n, t in zip(devices, tuned_ms)]
                        for i, s in enumerate(st.STRATEGIES)})


def test_table1_pairs_by_devices_not_position() -> None:
    # N = 3 is not in the paper: zipped by position it would meet the paper's N = 4
    t1 = st.table1(run_of([1, 3, 4, 16], [14.0, 6.0, 5.0, 2.8], [14.0, 5.0, 4.0, 1.6]))
    assert [p.devices for p in t1.paper] == [1, 4, 16]
    assert [(o.devices, p.devices) for o, p in t1.pairs()] == [(1, 1), (4, 4), (16, 16)]
    assert t1.ours[1] == st.Table1Point(3, 6.0, 5.0, pytest.approx(1.2), "replicate bs=64")
    assert t1.paper_at(4) == st.Table1Point(4, pytest.approx(4.975), pytest.approx(4.072), 1.22, None)
    judged = _judged(t1)
    speedup, tuned, fit = st.table1_claims(t1, True, judged, {})
    # the paper's headline at its largest N, the speedup then the tuned time: no band here, inconclusive
    assert speedup.key == [16] and speedup.paper == "tuning bs per N: up to 1.84x at N = 16"
    assert speedup.ours == "predicted 1.75x at N = 16" and speedup.kind == "inconclusive"
    assert tuned.key == [16] and tuned.paper == "tuned at N = 16: 1.522 ms" and "(+5.1%" in tuned.ours
    assert fit.paper == "naive row 14.30 ms (N = 1) ... 2.80 ms (N = 16)" and fit.provenance == "fitted"
    assert fit.ours == "naive row within 2.08 %, fitted (op costs fitted to this row)"   # N = 1: 14.0 vs 14.297


def test_claims_on_table1_need_the_papers_largest_n() -> None:
    t1 = st.table1(run_of([2, 3], [8.0, 6.0], [7.0, 5.0]))
    (fit,) = st.table1_claims(t1, False, _judged(t1), {})         # N = 3 is not the paper's: no tuned claims
    assert fit.paper == "naive row 8.05 ms (N = 2) ... 8.05 ms (N = 2)" and fit.key == [2]
    assert fit.provenance == "simulated"
    assert st.table1_claims(st.table1(run_of([3], [6.0], [5.0])), True, [], {}) == []


def _judged(t1: st.Table1) -> list:
    from cryptoffload.studies.bsgs_multidevice.paper import table1_verdicts
    from cryptoffload.studies.verdicts import Judging

    setup = st.paper_inputs(load_profile("bsgs_u280"), [o.devices for o in t1.ours])
    tables = {t.id: t for t in (st.table1_naive_table(t1, setup, fitted=True), st.table1_tuned_table(t1, setup))}
    return table1_verdicts(tables, {}, Judging(False, "full", "cmd"))


def test_tables_lay_out_the_records() -> None:
    sim = run_of([1, 2], [14.0, 8.0], [14.0, 7.0])
    t1 = st.table1(sim)
    setup = st.paper_inputs(load_profile("bsgs_u280"), [2, 1, 2])
    assert setup.devices == [1, 2] and (setup.diagonals, setup.naive_baby) == (32768, 256)
    naive = st.table1_naive_table(t1, setup, fitted=True)
    assert naive.columns == ["devices", "naive_ms"] and naive.rows == [[1, ms(14.0)], [2, ms(8.0)]]
    assert naive.paper == [[1, pytest.approx(14.297)], [2, pytest.approx(8.049)]] and naive.provenance == "fitted"
    tuned = st.table1_tuned_table(t1, setup)
    # one device: nothing to tune, so the tuned row is the naive row's fit, and says so (issue 35)
    assert tuned.rows == [[1, "fitted", ms(14.0), 1.0, "replicate bs=64"],
                          [2, "simulated", ms(7.0), ms(8 / 7), "replicate bs=64"]]
    assert tuned.paper == [[1, None, pytest.approx(14.297), 1.0, None], [2, None, pytest.approx(7.447), 1.08, None]]
    assert st.table1_tuned_table(t1, setup, fitted=False).rows[0][1] == "simulated"
    strategies = st.strategies_rows(sim)
    table = st.strategies_table(strategies)
    assert table.columns == ["devices", "replicate_ms", "broadcast_ms", "split-giant_ms", "replicate_bs",
                             "broadcast_bs", "split-giant_bs"]
    assert table.rows[1] == [2, ms(7.0), ms(8.0), ms(9.0), "bs=2", "bs=3", "bs=4"]
    assert [r.ms_of("split-giant") for r in strategies] == [ms(16.0), ms(9.0)]
    rows = st.tuner_rows(sim)
    assert rows[1] == st.TunerRow(2, "replicate", 64, ms(7.0), ms(8 / 7), "replicate", 64, ms(7.0), 0.0)
    assert st.tuner_headline(rows) == "tuner within 0.00 % of exhaustive search (simulated)"


def test_closed_form_rows_against_the_paper() -> None:
    cf = st.ClosedForm(1e-6, 2e-6, 3e-6, [0.010, 0.004])
    rows = st.closed_form_rows(cf, run_of([1, 3], [14.0, 6.0], [14.0, 5.0]))
    assert rows[0] == st.ClosedFormRow(1, ms(10.0), ms(14.0), ms(14.297), ms((0.010 / 0.014297 - 1) * 100),
                                       ms((0.014 / 0.014297 - 1) * 100))
    assert rows[1] == st.ClosedFormRow(3, ms(4.0), ms(5.0), None, None, None)      # the paper has no N = 3


def test_closed_form_fit_reproduces_its_inputs() -> None:
    cf = st.closed_form(256, 32768, [1, 16])     # the values the study's closed_form table shows
    assert [t * 1e3 for t in cf.tuned_s] == [ms(9.548820833333364), ms(2.7883552083333325)]
    assert (cf.x * 1e6, cf.y * 1e6, cf.c * 1e6) == (ms(6.25, 3e-3), ms(99.2, 3e-3), ms(100, 3e-3))
    assert st.paper_point(16) == st.PaperPoint(16, 0.002795, 0.001522, 1.84) and st.paper_point(3) is None
