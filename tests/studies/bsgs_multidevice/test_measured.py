"""The measured half of bsgs-multidevice, without running anything: the two-workers-vs-one rows,
the costs over the rounds, the predictions (with the samples their noise is read from) and the
measured tables (the runs themselves: test_bsgs_multidevice.py; the claims:
test_bsgs_measured_claims.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.profiles.loader import load_profile
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.studies.bsgs_multidevice import measured as st
from cryptoffload.studies.bsgs_multidevice.study import BsgsMultideviceConfig
from cryptoffload.workloads.bsgs import BsgsShape, split


def test_scaling_rows_and_the_parallelism_the_cpu_allowed() -> None:
    rows = [st.MeasuredRow(1, "replicate", 4, 0.10, 0.12, 0.1, 0.0, 0.11, 0.15),
            st.MeasuredRow(2, "replicate", 4, 0.08, 0.06, 0.05, 0.0, 0.05, 0.09),
            st.MeasuredRow(2, "broadcast", 4, 0.09, 0.10, 0.05, 0.0, 0.09, 0.12)]
    shares = [(1.0, 1.0), (0.2, 0.1), (0.5, 0.4)]  # own cores; one core's worth shared; in between
    assert st.parallelism(shares) == pytest.approx(1.6)  # median of 2.0, 1.0, 1.6
    assert st.two_workers_vs_one(rows, shares) == [st.ScalingRow(4, pytest.approx(2.0), pytest.approx(1.25),
                                                                 pytest.approx(1.6))]
    assert rows[0].spread == pytest.approx((0.15 - 0.11) / 0.12)


def test_two_workers_vs_one_records_and_the_benchmarks_lists() -> None:
    rows = [st.MeasuredRow(1, "replicate", 4, 0.10, 0.12, 0.1, 0.0, 0.11, 0.15),
            st.MeasuredRow(1, "replicate", 8, 0.10, 0.12, 0.1, 0.0, 0.11, 0.15),
            st.MeasuredRow(2, "replicate", 4, 0.08, 0.06, 0.05, 0.0, 0.05, 0.09),
            st.MeasuredRow(2, "broadcast", 8, 0.09, 0.10, 0.05, 0.0, 0.09, 0.12)]
    shares = [(1.0, 1.0)]
    assert st.two_workers_vs_one(rows, shares) == [st.ScalingRow(4, pytest.approx(2.0), pytest.approx(1.25), 2.0)]
    assert st.scaling_rows(rows, shares) == [[4, pytest.approx(2.0), pytest.approx(1.25), 2.0]]


def ops(rotate_s: float) -> dict[str, float]:
    return {f: rotate_s for f in st.WINDOW_FIELDS}


def test_costs_over_rounds_summarise_every_retimed_value() -> None:
    base = DagCosts.from_profile(load_profile("bsgs_u280"))
    rounds = [st.RoundCosts(ops(1.0), (1.0, 1.0), 0.8, {"task_s": 0.003, "latency_s": 0.001}),
              st.RoundCosts(ops(3.0), (1.0, 1.0), 0.9, None),
              st.RoundCosts(ops(2.0), (1.0, 1.0), 0.7, {"task_s": 0.005, "latency_s": 0.002,
                                                        "busy_latency_s": 0.004, "busy_bandwidth_Bps": 1e8})]
    got = st.costs_over_rounds(base, rounds, np.median)
    assert all(getattr(got, f) == 2.0 for f in st.WINDOW_FIELDS)
    assert (got.task_s, got.latency_s) == (0.004, 0.0015)                    # medians over the two links
    assert (got.busy_latency_s, got.busy_bandwidth_Bps) == (0.004, 1e8)       # only the round that had them
    assert got.concurrent_slowdown == 1.0                                     # median 0.8, never below 1
    alone = st.costs_over_rounds(base, [st.RoundCosts(ops(1.0), (1.0, 1.0))], np.min)
    assert alone.task_s == base.task_s and alone.concurrent_slowdown == base.concurrent_slowdown


def test_predict_summarises_the_runs_of_each_product() -> None:
    costs = DagCosts.from_profile(load_profile("bsgs_u280"))
    shape = BsgsShape(16, 4, level=1)
    product = st.Product(2, "broadcast", 4, shape, np.zeros((16, 4)), split(shape, 2, "broadcast"), np.zeros(4))
    runs = [st.ProductRun(0.30, 0.20, 1e-7), st.ProductRun(0.10, 0.05, 3e-7), st.ProductRun(0.20, 0.10, 2e-7)]
    slow = replace(costs, rotate_s=2 * costs.rotate_s)
    (row,) = st.predict([product], [runs], costs, np.median, [costs, slow])
    want = tuner.evaluate(shape, 2, "broadcast", 4, costs, batched_sends=True)[0].predicted_s + st.client_tail_s(costs)
    want_slow = (tuner.evaluate(shape, 2, "broadcast", 4, slow, batched_sends=True)[0].predicted_s
                 + st.client_tail_s(slow))
    assert want_slow > want  # each round's costs alone price the product again
    assert row == st.MeasuredRow(2, "broadcast", 4, want, 0.20, 0.10, 3e-7, 0.10, 0.30, (0.30, 0.10, 0.20),
                                 (want, want_slow))
    assert st.predict([product], [runs], costs, np.median)[0].round_predicted_s == ()
    assert st.model_vs_measured_row(row) == st.ModelVsMeasuredRow(
        2, "broadcast", 4, want * 1e3, 200.0, (want / 0.20 - 1) * 100, 100.0, 300.0, pytest.approx(100.0), 100.0, 3e-7)


def test_measured_tables_in_report_order() -> None:
    prof = load_profile("bsgs_u280")
    rows = [st.MeasuredRow(1, "replicate", 4, 0.10, 0.12, 0.1, 0.0, 0.11, 0.15),
            st.MeasuredRow(2, "replicate", 4, 0.08, 0.06, 0.05, 0.0, 0.05, 0.09)]
    run = st.MeasuredRun(rows, prof, "p.toml", DagCosts.from_profile(prof), [1.2], [(1.0, 0.9)])
    cfg = BsgsMultideviceConfig(repeats=3, measured_diagonals=64)
    tables = st.measured_tables(run, cfg)
    assert [t.id for t in tables] == ["measured_profile", "op_costs_over_runs", "model_vs_measured",
                                      "two_workers_vs_one"]
    assert tables[0].columns == ["field", "value", "source"] and len(tables[0].rows) == len(prof.values)
    assert tables[1].rows[-1] == ["concurrent_slowdown (all workers busy / one alone)", run.costs.concurrent_slowdown]
    assert tables[2].key_columns == 3 and tables[2].rows[1][:3] == [2, "replicate", 4]
    assert "per round alone/together: 1.00/0.90)" in tables[3].note
    only_two = st.MeasuredRun(rows[1:], prof, "p.toml", run.costs, [], [])
    assert [t.id for t in st.measured_tables(only_two, cfg)] == ["measured_profile", "op_costs_over_runs",
                                                                 "model_vs_measured"]
