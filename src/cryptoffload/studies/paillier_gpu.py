"""GPU measurements shared by the Paillier studies (paillier-offload, ridge).

Why a module of its own: both studies put a measured GPU beside the QAT paper's figures (its
CPU+QAT encryption, its K80 aggregation), and both must behave the same way without a GPU:
no row, no number, a note giving the one-line reason
(the engine table's probe, ``ENGINES["gpu"].reason()``). Nothing here
runs on the CPU twin: a study row labelled GPU is measured on a GPU or is absent.

* :func:`measure_paillier_gpu` -- calibrates the GPU in the run (a *measured* profile written
  beside the results), measures encryption and CRT decryption throughput with copies in and
  out, and compares the simulated GPU (:mod:`cryptoffload.sim.gpu`, from that profile) with
  measured runs at batch sizes and mixes the profile was not fitted on.
* :func:`measure_ridge_gpu` -- aggregation of a ridge run's real per-record ciphertexts on the
  GPU (host to device, column products, back), and encryption + aggregation of its plaintexts
  with the ciphertexts kept on the device; both checked by decryption against the CPU run.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from cryptoffload.report.rows import column
from cryptoffload.studies import frame

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier import PrivateKey, PublicKey

#: Batch sizes the calibration times, as fractions of the prepared instances (quick: 2^18, so
#: 8,192, 65,536 and 262,144); the held-out workloads use other sizes.
FIT_FRACTIONS = (32, 4, 1)


def fit_batches(max_items: int) -> tuple[int, ...]:
    return tuple(max(1, max_items // f) for f in FIT_FRACTIONS)


def holdout_workloads(max_items: int) -> list[tuple[str, list[tuple[str, int]]]]:
    """Batch lists the calibration never timed: sizes between its fit sizes, and mixes of
    operations (quick: 16,384, 131,072, 32,768, and 98,304 + 49,152 + 196,608)."""
    m = max_items
    e1, e2, d1 = m // 16, m // 2, m // 8
    mix = [("encrypt", 3 * m // 8), ("decrypt", 3 * m // 16), ("aggregate", 3 * m // 4)]
    return [
        (f"encryption, 4 batches of {e1:,}", [("encrypt", e1)] * 4),
        (f"encryption, 2 batches of {e2:,}", [("encrypt", e2)] * 2),
        (f"decryption, 3 batches of {d1:,}", [("decrypt", d1)] * 3),
        ("mix: " + " + ".join(f"{op} {b:,}" for op, b in mix), mix),
        (f"aggregation, 2 batches of {e2:,}", [("aggregate", e2)] * 2),
    ]


@dataclass(frozen=True)
class GpuModelRow:
    """One held-out workload: the simulated GPU's prediction beside the measured run."""

    workload: str = column()
    items: int = column()
    predicted_s: float = column()
    measured_s: float = column()
    error_rel: float = column()


@dataclass
class PaillierGpuRun:
    device: str
    profile: Path
    encrypt_ops: float
    decrypt_ops: float
    batch: int
    model_rows: list[GpuModelRow] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def worst_error(self) -> float:
        """The largest relative model error over the held-out workloads."""
        return max(abs(r.error_rel) for r in self.model_rows)


def _median_wall(fn: Callable[[], float], repeats: int) -> float:
    return statistics.median(fn() for _ in range(repeats))


def measure_paillier_gpu(pk: PublicKey, sk: PrivateKey, out: Path, *, quick: bool,
                         device: str = "cuda", max_items: int | None = None, repeats: int = 3) -> PaillierGpuRun:
    """See the module docstring; raises BackendUnavailable without a GPU. ``device`` and
    ``max_items`` exist for the tests (the CPU twin, small batches); the studies use a GPU."""
    from cryptoffload.crypto.native import get_runtime
    from cryptoffload.crypto.paillier_gpu import from_limbs
    from cryptoffload.calibrate.gpu import GpuBench, calibrate_gpu, run_batches
    from cryptoffload.sim.gpu import load_gpu_params, simulate_batches

    rt = get_runtime(device)
    max_items = max_items or 1 << (18 if quick else 20)
    frame.step(f"GPU: preparing {max_items:,} instances on {rt.describe()}")
    bench = GpuBench(rt, max_items=max_items, key=(pk, sk))
    sample = 16
    if sk.raw_decrypt_many(from_limbs(bench.host["aggregate"][0][:, :sample])) != \
            from_limbs(bench.host["encrypt"][0][:, :sample]):
        raise RuntimeError("GPU ciphertexts do not decrypt to their plaintexts with the CPU key")
    out.mkdir(parents=True, exist_ok=True)
    profile = calibrate_gpu(out / "gpu_profile.toml", device=device, bench=bench, fit_batches=fit_batches(max_items),
                            repeats=repeats, tick=frame.step)
    params = load_gpu_params(str(profile))
    frame.step("GPU: encryption and decryption throughput")
    enc_s = _median_wall(lambda: run_batches(bench, [("encrypt", max_items)] * 2), repeats)
    dec_s = _median_wall(lambda: run_batches(bench, [("decrypt", max_items)] * 2), repeats)
    run = PaillierGpuRun(rt.describe(), profile, 2 * max_items / enc_s, 2 * max_items / dec_s, max_items,
                         info=rt.info())
    for label, batches in holdout_workloads(max_items):
        frame.step(f"GPU model vs measured: {label}")
        pred = simulate_batches(params, batches, streams=2).makespan_s
        meas = _median_wall(lambda: run_batches(bench, batches, streams=2), repeats)
        run.model_rows.append(GpuModelRow(label, sum(items for _, items in batches), pred, meas, pred / meas - 1.0))
    return run


@dataclass
class RidgeGpuRun:
    device: str
    aggregate_s: float
    encrypt_aggregate_s: float
    ciphertexts: int


def measure_ridge_gpu(upload_pk: PublicKey, upload_sk: PrivateKey, plaintexts: Sequence[int], rows: int, cols: int,
                      cpu_aggregate: Sequence[int], *, device: str = "cuda") -> RidgeGpuRun:
    """Time the GPU aggregation of the run's ciphertexts (made on the GPU from the run's
    plaintexts, brought to the host as an upload would arrive) and the GPU's encrypt +
    aggregate; both aggregates must decrypt to what the CPU run's does."""
    import numpy as np

    from cryptoffload.engines.gpu import GpuEngine
    from cryptoffload.crypto.paillier_gpu import random_exponents

    eng = GpuEngine(1, device=device)
    with eng:
        key = eng.key(upload_pk)
        rt = eng.runtime
        frame.step(f"GPU: encrypting {rows * cols:,} ciphertexts on {rt.describe()}")
        parts = []
        step = max(1, (1 << 20) // cols)
        s = rt.stream()
        for start in range(0, rows, step):
            r = min(step, rows - start)
            msgs = key.message_limbs(plaintexts[start * cols:(start + r) * cols])
            dev = key.encrypt_device(rt.upload(msgs, s), rt.upload(random_exponents(r * cols, key.exp_bits), s), r * cols, s)
            parts.append(rt.download(dev, s))
        cts = np.ascontiguousarray(np.concatenate(parts, axis=1))
        frame.step("GPU: aggregation (host -> device, column products, back)")
        t0 = time.perf_counter()
        agg = eng.aggregate(upload_pk.nsquare, cts, rows, cols)
        agg_s = time.perf_counter() - t0
        del cts, parts
        frame.step("GPU: encrypt + aggregate, ciphertexts kept on the device")
        t0 = time.perf_counter()
        agg2 = eng.encrypt_aggregate(upload_pk, plaintexts, rows, cols)
        enc_agg_s = time.perf_counter() - t0
        want = upload_sk.raw_decrypt_many(list(cpu_aggregate))
        if upload_sk.raw_decrypt_many(agg) != want or upload_sk.raw_decrypt_many(agg2) != want:
            raise RuntimeError("GPU aggregates do not decrypt to the CPU run's sums")
        return RidgeGpuRun(rt.describe(), agg_s, enc_agg_s, rows * cols)
