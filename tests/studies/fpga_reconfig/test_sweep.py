"""Running the fpga-reconfig study below its tables: the config's derived sizes, the rates a run
uses, one sweep on both engines (the SimPy reference and the compiled path agree), and seeds
coming back in seed order with the work done meanwhile."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.sim.reconfig.platform import load_reconfig_platform
from cryptoffload.studies.fpga_reconfig import sweep as sw
from cryptoffload.studies.fpga_reconfig.paper import PAPER_RATES
from cryptoffload.workloads.web_trace import generate_trace


def test_sizes_and_rates_of_a_config(monkeypatch: pytest.MonkeyPatch) -> None:
    quick, full = sw.FpgaReconfigConfig(quick=True), sw.FpgaReconfigConfig()
    assert (quick.n_requests, quick.n_seeds) == (sw.QUICK_REQUESTS, sw.QUICK_SEEDS)
    assert (full.n_requests, full.n_seeds) == (sw.FULL_REQUESTS, sw.FULL_SEEDS)
    assert sw.FpgaReconfigConfig(requests=50, seeds=3, workers=2).n_requests == 50
    assert sw.FpgaReconfigConfig(trace="access.log", seeds=5).n_seeds == 1     # a user's log is one draw
    assert sw.FpgaReconfigConfig(workers=3).n_workers == 3                     # asked for: as asked
    # by default one process per usable core, never more than there are seeds
    monkeypatch.setattr(sw.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert quick.n_workers == min(3, sw.QUICK_SEEDS) and full.n_workers == 3
    assert sw.FpgaReconfigConfig(seeds=2).n_workers == 2
    monkeypatch.setattr(sw.os, "sched_getaffinity", lambda pid: {5}, raising=False)
    assert full.n_workers == 1
    assert sw._rates(full) == [float(r) for r in PAPER_RATES]
    assert sw._rates(sw.FpgaReconfigConfig(rates=[5, 7.5])) == [5.0, 7.5]
    assert sw._rates(sw.FpgaReconfigConfig(trace="access.log")) == [None]      # the log's own timing


def test_a_sweep_gives_the_same_runs_on_both_engines() -> None:
    plat = load_reconfig_platform()
    trace, history = generate_trace(800, seed=5), generate_trace(800, seed=6)
    out = {}
    for engine in ("fast", "simpy"):
        cfg = sw.FpgaReconfigConfig(policies=["software", "predict", "oracle"], interval="fixed", window_mb=0.5,
                                    engine=engine)
        out[engine] = sw.sweep(cfg, trace, history, plat, [100.0, None])
    (runs_a, windows_a), (runs_b, windows_b) = out["fast"], out["simpy"]
    assert windows_a == windows_b and set(windows_a.values()) == {0.5 * sw.MB}
    assert [(r.rate, r.policy) for r in runs_a][:3] == [(100.0, "software"), (100.0, "predict"), (100.0, "oracle")]
    assert runs_a[3].rate == trace.offered_rate                     # None: replayed at the trace's own rate
    for a, b in zip(runs_a, runs_b):
        assert (a.p90, a.n_reconfig, a.fpga_share) == (b.p90, b.n_reconfig, b.fpga_share)
        assert np.array_equal(a.enc_time_by_cipher, b.enc_time_by_cipher)


def test_seeds_come_back_in_order_with_what_ran_meanwhile() -> None:
    cfg = sw.FpgaReconfigConfig(requests=300, rates=[500.0], policies=["software", "oracle"], interval="fixed",
                                workers=1, clients="returns")
    said: list[str] = []
    outcomes, side = sw.run_seeds(cfg, [3, 1], ["software", "oracle"], advance=said.append, meanwhile=lambda: "done")
    assert [o.seed for o in outcomes] == [3, 1] and side == "done" and said == ["seed 3", "seed 1"]
    assert all(len(o.runs) == 2 and abs(o.mix.sum() - 1) < 1e-9 for o in outcomes)
