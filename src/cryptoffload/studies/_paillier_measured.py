"""The measured half of the paillier-offload study: single-core encryption and decryption
baselines (phe, a textbook g^m r^n, IPCL-style, ours) and the paper's four client modes run for
real on our offload engine.

Why apart from the study: the study module assembles tables, plots and claims; what it
measures here is a set of benchmark cases and engine runs, each checked for correctness
(every measured mode's ciphertexts must decrypt) before its speed counts. Every core at once
is :func:`cryptoffload.calibrate.paillier_cores.all_cores_encryption_rate`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from cryptoffload import bench
from cryptoffload.crypto import baselines
from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.engines.modes import CLIENT_MODES, ModeResult

if TYPE_CHECKING:
    from cryptoffload.studies.paillier_offload import PaillierOffloadConfig


#: What each encryption baseline stands for in the study (its name is for the reader only).
PHE, TEXTBOOK, IPCL_STYLE, OURS_CONSTANT_TIME, OURS_FASTEST, OURS_ONLINE = (
    "phe", "textbook", "ipcl-style", "ours-constant-time", "ours-fastest", "ours-online")


@dataclass
class RoleCase(bench.Case):
    """A benchmark case with the role the study finds it by (never by parsing its name)."""

    role: str = ""


def case_of(cases: Sequence[RoleCase], role: str) -> RoleCase | None:
    """The case playing ``role``; ``None`` where it was not measured (no IFMA, no native code)."""
    return next((c for c in cases if c.role == role), None)


def baseline_cases(pk: pl.PublicKey, sk: pl.PrivateKey) -> list[RoleCase]:
    """Single-core encryption cases: phe, software textbook (libhcs-like), IPCL-style, ours."""
    msgs_s = [secrets.randbelow(pk.n) for _ in range(16)]
    msgs_b = [secrets.randbelow(pk.n) for _ in range(512)]
    ppk, _ = baselines.phe_keys(pk, sk)
    cases = [
        RoleCase("phe 1.5.0", lambda: baselines.phe_encrypt_many(ppk, msgs_s), len(msgs_s), role=PHE),
        RoleCase("software textbook g^m r^n (gmpy2, libhcs-like)",
                 lambda: [pk.raw_encrypt_classic(m) for m in msgs_s[:8]], 8, role=TEXTBOOK),
    ]
    if native.ifma_available():
        cases.append(RoleCase("IPCL-style DJN (8-lane IFMA modexp)",
                              lambda: baselines.ipcl_style_encrypt_many(pk, msgs_b[:128]), 128, role=IPCL_STYLE))
    if native.native_available():
        ct = pl.ENCRYPTION.encryptor(pk, "auto", constant_time=True)
        vt = pl.ENCRYPTION.encryptor(pk, "auto", constant_time=False)
        cases.append(RoleCase(f"ours, constant-time default ({ct.backend}, w={ct.window})",
                              lambda: ct.encrypt_raw(msgs_b), len(msgs_b), role=OURS_CONSTANT_TIME))
        cases.append(RoleCase(f"ours, fastest ({vt.backend}, variable-time, w={vt.window})",
                              lambda: vt.encrypt_raw(msgs_b), len(msgs_b), role=OURS_FASTEST))
    rs = pl.ENCRYPTION.randomness(pk, len(msgs_b))
    n, n2 = pk.n, pk.nsquare
    cases.append(RoleCase("ours, online half of offline/online",
                          lambda: [(1 + m * n) * r % n2 for m, r in zip(msgs_b, rs)], len(msgs_b), role=OURS_ONLINE))
    return cases


def decryption_cases(pk: pl.PublicKey, sk: pl.PrivateKey) -> list[bench.Case]:
    cts = [c.value for c in pl.ENCRYPTION.encrypt_many(pk, [secrets.randbelow(pk.n) for _ in range(256)])]
    _, psk = baselines.phe_keys(pk, sk)
    cases = [bench.Case("phe 1.5.0", lambda: baselines.phe_decrypt_many(psk, cts[:16]), 16)]
    if native.native_available():
        cases.append(bench.Case("ours, CRT, GMP powm_sec", lambda: sk.raw_decrypt_many(cts, use_ifma=False), len(cts)))
    if native.ifma_available():
        cases.append(bench.Case("ours, CRT, 8-lane IFMA", lambda: sk.raw_decrypt_many(cts, use_ifma=True), len(cts)))
    return cases


def measure_modes(cfg: PaillierOffloadConfig, pk: pl.PublicKey, sk: pl.PrivateKey,
                  tick: Callable[[str], None] | None, workers: int = 1,
                  sweep_inflight: Sequence[int] = ()) -> tuple[dict[str, ModeResult], dict[int, ModeResult], str]:
    """The paper's four client modes plus batching, real, on our offload engine with
    ``workers`` compute workers (1 on the pinned core; one per core for the all-cores run)."""
    from cryptoffload.engines import make_engine
    from cryptoffload.engines.modes import run_mode

    msgs = [secrets.randbelow(pk.n) for _ in range(cfg.n_measure)]
    results: dict[str, ModeResult] = {}
    sweep: dict[int, ModeResult] = {}
    with make_engine(cfg.engine, workers=workers) as engine:
        engine_name = type(engine).__name__
        for mode in CLIENT_MODES:
            if tick:
                tick(f"measuring mode {mode} ({workers} worker{'s' if workers > 1 else ''})")
            res = run_mode(mode, engine, pk, msgs, threads=cfg.threads, inflight=cfg.inflight)
            _check_decrypts(sk, msgs, res.ciphertexts, mode)
            results[mode] = res
        for k in sweep_inflight:
            if tick:
                tick(f"coro1 with {k} in flight")
            res = run_mode("coro1", engine, pk, msgs[: max(64, min(len(msgs), 4 * k))], inflight=k)
            sweep[k] = res
    return results, sweep, engine_name


def _check_decrypts(sk: pl.PrivateKey, msgs: Sequence[int], cts: Sequence[int], mode: str) -> None:
    """Every measured run must be correct, not only fast: decrypt a sample."""
    idx = list(range(0, len(msgs), max(1, len(msgs) // 16)))
    got = sk.raw_decrypt_many([cts[i] for i in idx])
    if got != [msgs[i] for i in idx]:
        raise RuntimeError(f"mode {mode}: ciphertexts do not decrypt to their plaintexts")
