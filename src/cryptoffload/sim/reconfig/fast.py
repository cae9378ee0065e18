"""Fast path of the FPGA-reconfiguration model (Niwa, Maeda, Yamaguchi): the request-stream hot loop compiled with numba.

Why a second implementation: the full study is 10 rates x 10 policies x 610,000 requests; a
SimPy process per request costs tens of microseconds, this loop well under one. The SimPy model
(:mod:`cryptoffload.sim.reconfig.server`) stays the readable reference and the tests require
both to give *identical* latencies on the same trace, predictions and profile.

Semantics (the paper's section 5 and Fig. 6; one encryption at a time unless PARALLEL):
request i starts when it has arrived and the previous encryption has finished; a packet overhead
is added to every request; reconfiguration takes ``reconfig_time`` and, in the overlap modes,
runs while the host keeps encrypting in software.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from cryptoffload.sim.protocols import Device, device_account

SOFTWARE, HARDWARE, OVERLAP, FIXED, PARALLEL = 0, 1, 2, 3, 4
MODE_NAMES = {SOFTWARE: "software", HARDWARE: "hardware", OVERLAP: "overlap", FIXED: "fixed", PARALLEL: "parallel"}


@dataclass
class KernelResult:
    """Per-request outcome plus totals; times in seconds."""

    latency: np.ndarray  # finish - arrival
    service: np.ndarray  # encryption time actually spent (excl. waiting and reconfiguration)
    on_fpga: np.ndarray  # bool: encrypted by the FPGA
    sw_busy: float
    fpga_busy: float
    n_reconfig: int
    reconfig_busy: float
    finish_last: float

    def devices(self) -> tuple[Device, Device]:
        """The two devices the compiled loop models, as the vocabulary's Devices: the host CPU
        (software encryptions) and the FPGA board (hardware encryptions; reconfiguration time
        is not encryption and stays in ``reconfig_busy``)."""
        return device_account("host", "cpu", self.sw_busy), device_account("fpga", "fpga", self.fpga_busy)


@numba.njit(cache=True)
def _load_prediction(la, lb, qa, qb):
    """The circuit pair after a reconfiguration to the predicted pair ``(qa, qb)``, and whether
    that is a reconfiguration at all (not when the pair is already loaded, in either order)."""
    if (qa == la and qb == lb) or (qa == lb and qb == la):
        return la, lb, False
    return qa, qb, True


@numba.njit(cache=True)
def _parallel_request(ti, ci, d_sw, d_hw, qa, qb, la, lb, rend, sw_free, fpga_free, reconfig):
    """PARALLEL: host and FPGA encrypt side by side. An idle FPGA lacking the circuit loads the
    predicted pair; the request goes where it would finish first (the FPGA on a tie)."""
    loaded = ci == la or ci == lb
    reconfigured = False
    if (not loaded) and fpga_free <= ti and rend <= ti:
        la, lb, reconfigured = _load_prediction(la, lb, qa, qb)
        if reconfigured:
            rend = ti + reconfig
            loaded = ci == la or ci == lb
    sw_fin = max(ti, sw_free) + d_sw
    if loaded:
        hw_start = max(ti, max(fpga_free, rend))
        hw_fin = hw_start + d_hw
    else:
        hw_fin = np.inf
    on_fpga = hw_fin <= sw_fin
    return on_fpga, hw_fin if on_fpga else sw_fin, la, lb, rend, reconfigured


@numba.njit(cache=True)
def _run_parallel(t, c, size, sw_tpb, hw_tpb, overhead, reconfig, pa, pb, init_a, init_b):
    """The request loop of PARALLEL mode (see :func:`_parallel_request`)."""
    n = t.shape[0]
    lat = np.empty(n, dtype=np.float64)
    svc = np.empty(n, dtype=np.float64)
    on_fpga = np.zeros(n, dtype=np.bool_)
    la = init_a
    lb = init_b
    rend = -np.inf
    sw_free = 0.0
    fpga_free = 0.0
    sw_busy = 0.0
    fpga_busy = 0.0
    n_reconf = 0
    finish_last = 0.0
    for i in range(n):
        ci = c[i]
        ti = t[i]
        d_sw = size[i] * sw_tpb[ci] + overhead
        d_hw = size[i] * hw_tpb[ci] + overhead
        hw, fin, la, lb, rend, reconfigured = _parallel_request(
            ti, ci, d_sw, d_hw, pa[i], pb[i], la, lb, rend, sw_free, fpga_free, reconfig)
        if reconfigured:
            n_reconf += 1
        if hw:
            fpga_free = fin
            fpga_busy += d_hw
            svc[i] = d_hw
            on_fpga[i] = True
        else:
            sw_free = fin
            sw_busy += d_sw
            svc[i] = d_sw
        lat[i] = fin - ti
        if fin > finish_last:
            finish_last = fin
    return lat, svc, on_fpga, sw_busy, fpga_busy, n_reconf, finish_last


@numba.njit(cache=True)
def _hardware_request(ci, start, la, lb, used_a, used_b, reconfig):
    """HARDWARE: every request on the FPGA; a missing circuit is a full reconfiguration that
    loads it beside the most recently used one and delays the start by ``reconfig``."""
    reconfigured = False
    if ci != la and ci != lb:
        if used_a >= used_b:
            lb = la
            used_b = used_a
        la = ci
        start = start + reconfig
        reconfigured = True
    if ci == la:
        used_a = start
    else:
        used_b = start
    return start, la, lb, used_a, used_b, reconfigured


@numba.njit(cache=True)
def _overlap_request(ci, start, qa, qb, la, lb, rend, reconfig):
    """OVERLAP (Fig. 6): software while the FPGA reconfigures or lacks the circuit; a missing
    circuit starts a reconfiguration to the predicted pair, which runs beside the host."""
    if start < rend:
        return False, la, lb, rend, False
    if ci != la and ci != lb:
        la, lb, reconfigured = _load_prediction(la, lb, qa, qb)
        if reconfigured:
            rend = start + reconfig
        return False, la, lb, rend, reconfigured
    return True, la, lb, rend, False


@numba.njit(cache=True)
def _run_one_at_a_time(t, c, size, sw_tpb, hw_tpb, overhead, reconfig, mode, pa, pb, fixed, init_a, init_b):
    """The request loop of the modes that encrypt one request at a time: request i starts when
    it has arrived and request i-1 has finished; ``mode`` chooses host or FPGA."""
    n = t.shape[0]
    lat = np.empty(n, dtype=np.float64)
    svc = np.empty(n, dtype=np.float64)
    on_fpga = np.zeros(n, dtype=np.bool_)
    la = init_a
    lb = init_b
    used_a = -1.0
    used_b = -2.0
    rend = -np.inf
    free = 0.0
    sw_busy = 0.0
    fpga_busy = 0.0
    n_reconf = 0
    for i in range(n):
        ci = c[i]
        ti = t[i]
        start = max(ti, free)
        reconfigured = False
        if mode == SOFTWARE:
            use_fpga = False
        elif mode == FIXED:
            use_fpga = fixed[ci]
        elif mode == HARDWARE:
            start, la, lb, used_a, used_b, reconfigured = _hardware_request(ci, start, la, lb, used_a, used_b, reconfig)
            use_fpga = True
        else:
            use_fpga, la, lb, rend, reconfigured = _overlap_request(ci, start, pa[i], pb[i], la, lb, rend, reconfig)
        if reconfigured:
            n_reconf += 1
        if use_fpga:
            d = size[i] * hw_tpb[ci] + overhead
            fpga_busy += d
            on_fpga[i] = True
        else:
            d = size[i] * sw_tpb[ci] + overhead
            sw_busy += d
        svc[i] = d
        free = start + d
        lat[i] = free - ti
    return lat, svc, on_fpga, sw_busy, fpga_busy, n_reconf, free


def _run(t, c, size, sw_tpb, hw_tpb, overhead, reconfig, mode, pa, pb, fixed, init_a, init_b):
    """The compiled loop of ``mode``: PARALLEL has two servers, the others one."""
    if mode == PARALLEL:
        return _run_parallel(t, c, size, sw_tpb, hw_tpb, overhead, reconfig, pa, pb, init_a, init_b)
    return _run_one_at_a_time(t, c, size, sw_tpb, hw_tpb, overhead, reconfig, mode, pa, pb, fixed, init_a, init_b)


def run_kernel(
    time: np.ndarray,
    cipher: np.ndarray,
    size: np.ndarray,
    sw_seconds_per_byte: np.ndarray,
    fpga_seconds_per_byte: np.ndarray,
    overhead: float,
    reconfig_time: float,
    mode: int,
    pred_a: np.ndarray | None = None,
    pred_b: np.ndarray | None = None,
    fixed: np.ndarray | None = None,
    initial: tuple[int, int] = (0, 1),
) -> KernelResult:
    """Simulate one policy over one trace; arrays are converted to the kernel's dtypes."""
    n = len(time)
    k = len(sw_seconds_per_byte)
    pa = np.zeros(n, dtype=np.int64) if pred_a is None else np.ascontiguousarray(pred_a, dtype=np.int64)
    pb = np.zeros(n, dtype=np.int64) if pred_b is None else np.ascontiguousarray(pred_b, dtype=np.int64)
    fx = np.zeros(k, dtype=np.bool_) if fixed is None else np.ascontiguousarray(fixed, dtype=np.bool_)
    lat, svc, on_fpga, sw_busy, fpga_busy, n_reconf, fin = _run(
        np.ascontiguousarray(time, dtype=np.float64),
        np.ascontiguousarray(cipher, dtype=np.int64),
        np.ascontiguousarray(size, dtype=np.float64),
        np.ascontiguousarray(sw_seconds_per_byte, dtype=np.float64),
        np.ascontiguousarray(fpga_seconds_per_byte, dtype=np.float64),
        float(overhead), float(reconfig_time), int(mode), pa, pb, fx, int(initial[0]), int(initial[1]),
    )
    return KernelResult(lat, svc, on_fpga, float(sw_busy), float(fpga_busy), int(n_reconf),
                        float(n_reconf) * reconfig_time, float(fin))
