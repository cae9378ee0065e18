"""Fast path of the FPGA-reconfiguration model (Niwa, Maeda, Yamaguchi): the request-stream hot loop compiled with numba.

Why a second implementation: the full study is 10 rates x 10 policies x 610,000 requests; a
SimPy process per request costs tens of microseconds, this loop well under one. The SimPy model
(:mod:`cryptoffload.sim.reconfig_server`) stays the readable reference and the tests require
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

from cryptoffload.sim.protocols import Device, implements

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


@numba.njit(cache=True)
def _run(t, c, size, sw_tpb, hw_tpb, overhead, reconfig, mode, pa, pb, fixed, init_a, init_b):
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
        if mode == PARALLEL:
            loaded = ci == la or ci == lb
            if (not loaded) and fpga_free <= ti and rend <= ti:
                qa = pa[i]
                qb = pb[i]
                if not ((qa == la and qb == lb) or (qa == lb and qb == la)):
                    la = qa
                    lb = qb
                    rend = ti + reconfig
                    n_reconf += 1
                    loaded = ci == la or ci == lb
            sw_fin = max(ti, sw_free) + d_sw
            if loaded:
                hw_start = max(ti, max(fpga_free, rend))
                hw_fin = hw_start + d_hw
            else:
                hw_fin = np.inf
            if hw_fin <= sw_fin:
                fpga_free = hw_fin
                fpga_busy += d_hw
                svc[i] = d_hw
                on_fpga[i] = True
                fin = hw_fin
            else:
                sw_free = sw_fin
                sw_busy += d_sw
                svc[i] = d_sw
                fin = sw_fin
            lat[i] = fin - ti
            if fin > finish_last:
                finish_last = fin
            continue
        start = max(ti, free)
        use_fpga = False
        if mode == SOFTWARE:
            use_fpga = False
        elif mode == FIXED:
            use_fpga = fixed[ci]
        elif mode == HARDWARE:
            if ci != la and ci != lb:
                # full reconfiguration: the requested circuit plus the most recently used one
                if used_a >= used_b:
                    lb = la
                    used_b = used_a
                la = ci
                start = start + reconfig
                n_reconf += 1
            if ci == la:
                used_a = start
            else:
                used_b = start
            use_fpga = True
        else:  # OVERLAP (Fig. 6)
            if start < rend:
                use_fpga = False
            elif ci != la and ci != lb:
                use_fpga = False
                qa = pa[i]
                qb = pb[i]
                if not ((qa == la and qb == lb) or (qa == lb and qb == la)):
                    la = qa
                    lb = qb
                    rend = start + reconfig
                    n_reconf += 1
            else:
                use_fpga = True
        if use_fpga:
            fin = start + d_hw
            fpga_busy += d_hw
            svc[i] = d_hw
            on_fpga[i] = True
        else:
            fin = start + d_sw
            sw_busy += d_sw
            svc[i] = d_sw
        free = fin
        lat[i] = fin - ti
        finish_last = fin
    return lat, svc, on_fpga, sw_busy, fpga_busy, n_reconf, finish_last


@implements(Device)  # the host CPU and the FPGA board, as one compiled loop
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
