"""The SimPy reference model of the encrypting server against closed forms, with minimal
policies written against its ``ServerPolicy`` protocol (the real policies are held to it in
tests/policies/test_reconfig.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from cryptoffload.sim.reconfig import fast
from cryptoffload.sim.reconfig.server import Decision, FpgaView, ServerCosts, simulate_simpy

K = 10
COSTS = ServerCosts(np.full(K, 1e-6), np.full(K, 1e-7), 5e-7, 0.06)  # FPGA 10x faster, 60 ms to reconfigure


@dataclass
class Always:
    """Every request to one place (the FPGA only when it holds the cipher and is not being
    rewritten; fixed circuits when ``fixed``); ``reconfigure_to`` asked once, on the first miss."""

    run_on: str
    mode: int = fast.OVERLAP
    initial: tuple[int, int] = (0, 1)
    fixed: np.ndarray | None = None
    reconfigure_to: tuple[int, int] | None = None
    views: list[FpgaView] = field(default_factory=list)

    def decide(self, i: int, cipher: int, view: FpgaView, cost=None) -> Decision:
        self.views.append(view)
        if self.fixed is not None:
            return Decision("fpga" if self.fixed[cipher] else "software")
        if self.run_on == "fpga" and (cipher not in view.loaded or view.now < view.reconfig_until):
            return Decision("software", reconfigure_to=self.reconfigure_to if i == 0 else None)
        return Decision(self.run_on)


def test_one_software_request_is_its_service_time() -> None:
    r = simulate_simpy(np.array([0.5]), np.array([3]), np.array([1000.0]), COSTS, Always("software"))
    assert r.latency[0] == pytest.approx(1000 * 1e-6 + 5e-7, rel=1e-12)
    assert r.sw_busy == pytest.approx(r.latency[0]) and r.fpga_busy == 0 and not r.on_fpga.any()


def test_requests_arriving_together_queue_one_behind_another() -> None:
    n, d = 20, 1000 * 1e-6
    r = simulate_simpy(np.zeros(n), np.zeros(n, dtype=int), np.full(n, 1000.0),
                       ServerCosts(COSTS.sw_seconds_per_byte, COSTS.fpga_seconds_per_byte, 0.0, 0.06),
                       Always("software"))
    assert np.allclose(r.latency, d * np.arange(1, n + 1), rtol=1e-12)


def test_loaded_cipher_runs_on_the_fpga_and_a_reconfiguration_overlaps_software() -> None:
    pol = Always("fpga", reconfigure_to=(5, 6))
    t = np.array([0.0, 0.01, 0.2])
    c = np.array([5, 5, 6])
    r = simulate_simpy(t, c, np.full(3, 1000.0), COSTS, pol)
    assert r.n_reconfig == 1 and r.reconfig_busy == pytest.approx(0.06)
    assert list(r.on_fpga) == [False, False, True]           # in software until the pair {5, 6} is loaded
    assert r.latency[2] == pytest.approx(1000 * 1e-7 + 5e-7)
    assert pol.views[1].reconfig_until == pytest.approx(0.06) and pol.views[2].loaded == (5, 6)


def test_fixed_circuits_are_resident_and_never_rewritten() -> None:
    fixed = np.zeros(K, dtype=bool)
    fixed[[2, 3, 4]] = True
    pol = Always("fpga", mode=fast.FIXED, fixed=fixed)
    r = simulate_simpy(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2, 4, 3, 7]), np.full(4, 10.0), COSTS, pol)
    assert r.n_reconfig == 0 and list(r.on_fpga) == [True, True, True, False]
    assert r.fpga_busy == pytest.approx(3 * (10 * 1e-7 + 5e-7))
