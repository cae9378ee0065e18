"""Window sizes of the fixed-base tables, measured on the CPU that runs them and cached per CPU.

Why measured here and not shipped: the best window trades Montgomery products (fewer with
wider windows) against the table scan (the constant-time lookup reads all 2^w entries of a
window) and cache misses (a table of 2^w entries per window outgrows L2, then L3), and all
three depend on the CPU: windows tuned on an AVX512-IFMA Xeon were one or two bits off on a
Zen 3 without IFMA. So the first encryptor for a (backend, lookup mode, key size) on a CPU
times the candidate windows on a *synthetic* table (same size and layout, arbitrary entries:
the timing of the constant-time code does not depend on the values, and building real powers
for every candidate would cost seconds) for a fraction of a second, keeps the fastest, and
writes it to a cache file keyed by the CPU (model name, cpuid family/model/stepping, the
kernels' version). ``cryptoffload calibrate paillier-window`` measures again, longer.

The cache file is outside input: it is read only when it passes the project's one rule for
files that decide what we do (:mod:`cryptoffload.private_files`: a regular file of at most
:data:`MAX_CACHE_BYTES` that this user owns and nobody else can write, not reached through a
link, in a private folder under folders only we or root can write), and each value only when
it is an int within :data:`WINDOW_LIMITS`; anything else is ignored and measured again. Windows are not secret; the file is written 0600 anyway, atomically.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from pathlib import Path
from typing import Iterable

from cryptoffload import bench
from cryptoffload.crypto._native import core as native
from cryptoffload.errors import CryptoffloadError
from cryptoffload.io import PRIVATE, write_json
from cryptoffload.machine import cpu_model
from cryptoffload.private_files import private_dir, read_private

CACHE_NAME = "paillier-windows.json"
CACHE_VERSION = 1
MAX_CACHE_BYTES = 256 * 1024
MAX_CPUS_CACHED = 32
#: lookup mode (constant_time) -> the windows a cached value may hold
WINDOW_LIMITS = {True: (2, 10), False: (2, 16)}
#: candidates timed at first use; the table of each must also fit the size limits below
CANDIDATES = {True: tuple(range(4, 10)), False: tuple(range(8, 14))}
QUICK_MAX_TABLE_BYTES = 64 * 1024 * 1024
QUICK_SECONDS, QUICK_ROUNDS = 0.01, 5   # medians of 5 short interleaved rounds: a shared machine

_memo: dict[str, int] = {}
_lock = threading.Lock()


def cache_path() -> Path:
    """``$CRYPTOFFLOAD_CACHE``, else ``$XDG_CACHE_HOME/cryptoffload``, else
    ``~/.cache/cryptoffload`` (the convention of the project's other caches), + the file."""
    env = os.environ.get("CRYPTOFFLOAD_CACHE")
    if env:
        return Path(env) / CACHE_NAME
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cryptoffload" / CACHE_NAME


def cpu_key() -> str:
    """What the cache is keyed by: the model name and the cpuid signature (with the kernels'
    version)."""
    return f"{cpu_model()} | {native.cpu_signature()}"


def choice_key(backend: str, constant_time: bool, nsquare_bits: int, exp_bits: int) -> str:
    """One cached choice: backend, lookup mode, size of n^2 in words, exponent bits."""
    return f"{backend}-{'ct' if constant_time else 'vt'}-{native.words_for_bits(nsquare_bits)}w-{exp_bits}b"


def _valid_choice(name: object, value: object) -> bool:
    if not isinstance(name, str) or len(name) > 64 or isinstance(value, bool) or not isinstance(value, int):
        return False
    parts = name.split("-")
    if len(parts) != 4 or parts[0] not in native.BACKEND_CODES or parts[1] not in ("ct", "vt"):
        return False
    low, high = WINDOW_LIMITS[parts[1] == "ct"]
    return low <= value <= high


def _read_trusted(path: Path) -> bytes | None:
    """The cache's bytes when it passes the rule of files that decide what we do
    (:mod:`cryptoffload.private_files`, readable variant: a regular file of ours that nobody
    else can write, not reached through a link, in folders only we or root can write), else None."""
    try:
        return read_private(path, "Paillier window cache", max_bytes=MAX_CACHE_BYTES, readable=True)
    except CryptoffloadError:
        return None


def read_cache(path: Path | None = None) -> dict[str, dict[str, int]]:
    """The whole cache, CPU key -> {choice key: window}, keeping only valid entries; empty
    when the file is missing, not trusted (see the module docstring) or not the format."""
    raw = _read_trusted(path or cache_path())
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or not isinstance(data.get("cpus"), dict):
        return {}
    out: dict[str, dict[str, int]] = {}
    for cpu, choices in list(data["cpus"].items())[:MAX_CPUS_CACHED]:
        if isinstance(cpu, str) and len(cpu) <= 256 and isinstance(choices, dict):
            out[cpu] = {k: v for k, v in choices.items() if _valid_choice(k, v)}
    return out


def save_choices(choices: dict[str, int], path: Path | None = None) -> Path | None:
    """Merge this CPU's ``choices`` into the cache file (0600, atomic, its folder 0700 made
    when missing); None when the folder is not ours to write or an existing file is not
    trusted (then nothing is written)."""
    path = path or cache_path()
    try:
        private_dir(path.parent, "Paillier window cache")
    except CryptoffloadError:
        return None
    if path.exists() and _read_trusted(path) is None:
        return None
    cpus = read_cache(path)
    cpus.setdefault(cpu_key(), {}).update(choices)
    if len(cpus) > MAX_CPUS_CACHED:   # keep this CPU and the most recently listed others
        cpus = dict(list(cpus.items())[-MAX_CPUS_CACHED:])
    try:
        write_json(path, {"version": CACHE_VERSION, "cpus": cpus}, mode=PRIVATE)
    except OSError:
        return None
    return path


def table_bytes(backend: str, nsquare_bits: int, exp_bits: int, window: int) -> int:
    """Bytes of a fixed-base table: ceil(exp_bits / w) windows of 2^w entries of n^2."""
    digit_bits = 52 if backend == "ifma" else 64
    return -(-exp_bits // window) * (1 << window) * 8 * -(-nsquare_bits // digit_bits)


def time_windows(n: int, exp_bits: int, backend: str, constant_time: bool, windows: Iterable[int],
                 seconds: float = QUICK_SECONDS, rounds: int = QUICK_ROUNDS) -> dict[int, float]:
    """Encryptions per second of a synthetic table of each window (interleaved rounds,
    medians) for modulus n^2; the caller bounds the windows by memory."""
    nsquare = n * n
    lanes = 16
    msgs = [secrets.randbelow(n) for _ in range(lanes)]
    exps = [secrets.randbits(exp_bits) for _ in range(lanes)]
    cases: list[tuple[int, bench.Case]] = []
    for w in windows:
        table = native.FixedBaseTable(2, nsquare, n, exp_bits, w, constant_time, native.BACKEND_CODES[backend],
                                      synthetic=True)

        def run(t: native.FixedBaseTable = table) -> list[int]:
            return t.encrypt(msgs, exps)
        cases.append((w, bench.Case(f"w={w}", run, lanes)))
    bench.interleaved([c for _, c in cases], seconds, rounds)
    return {w: c.median_rate for w, c in cases}


def candidates(backend: str, constant_time: bool, nsquare_bits: int, exp_bits: int, max_bytes: int) -> list[int]:
    """The windows worth timing whose tables fit ``max_bytes`` (at least the smallest)."""
    fit = [w for w in CANDIDATES[constant_time] if table_bytes(backend, nsquare_bits, exp_bits, w) <= max_bytes]
    return fit or [CANDIDATES[constant_time][0]]


def measure_window(n: int, exp_bits: int, backend: str, constant_time: bool, *,
                   max_bytes: int = QUICK_MAX_TABLE_BYTES, seconds: float = QUICK_SECONDS,
                   rounds: int = QUICK_ROUNDS) -> tuple[int, dict[int, float]]:
    """The fastest window for this CPU and its rates per window (not cached here)."""
    rates = time_windows(n, exp_bits, backend, constant_time,
                         candidates(backend, constant_time, (n * n).bit_length(), exp_bits, max_bytes),
                         seconds, rounds)
    return max(rates, key=lambda w: rates[w]), rates


def modulus_of_bits(bits: int) -> int:
    """An odd number of exactly ``bits`` bits to time tables with (no key needed: the cost of
    the arithmetic depends on the size only)."""
    return secrets.randbits(bits) | (1 << (bits - 1)) | 1


def window_for(bits: int, exp_bits: int, backend: str, constant_time: bool) -> int:
    """The window for keys of ``bits`` bits on this CPU: remembered in this process, else read
    from the cache, else measured (a fraction of a second, once per CPU and choice) and
    cached."""
    n = modulus_of_bits(bits)
    key = choice_key(backend, constant_time, (n * n).bit_length(), exp_bits)
    with _lock:
        if key in _memo:
            return _memo[key]
        cached = read_cache().get(cpu_key(), {}).get(key)
        if cached is None:
            cached, _ = measure_window(n, exp_bits, backend, constant_time)
            save_choices({key: cached})
        _memo[key] = cached
        return cached


def forget() -> None:
    """Drop this process's remembered windows (after a new calibration, and in tests)."""
    with _lock:
        _memo.clear()


def available_backends() -> list[str]:
    """The table backends that run on this CPU (what a calibration measures by default)."""
    out = ["gmp"] if native.native_available() else []
    if native.adx_available():
        out.append("adx")
    if native.ifma_available():
        out.append("ifma")
    return out


def calibrate(bits_list: Iterable[int], backends: Iterable[str], *, seconds: float, rounds: int,
              max_bytes: int) -> list[dict[str, object]]:
    """Measure every (key size, backend, lookup mode) again, longer than the first-use
    measurement, write the winners to the cache and forget this process's choices. Returns
    one row per choice: its key, the window chosen and the rate of every window timed. A
    backend that cannot hold a key size (IFMA above 2,053 bits, ADX off 512-bit steps) is
    skipped."""
    rows: list[dict[str, object]] = []
    chosen: dict[str, int] = {}
    for bits in bits_list:
        n = modulus_of_bits(bits)
        nsquare_bits, exp_bits = (n * n).bit_length(), (bits + 1) // 2
        for backend in backends:
            if (backend == "ifma" and not native.ifma_fixed_base_fits(nsquare_bits)) or \
                    (backend == "adx" and not native.adx_fits(nsquare_bits)):
                continue
            for constant_time in (True, False):
                best, rates = measure_window(n, exp_bits, backend, constant_time, max_bytes=max_bytes,
                                             seconds=seconds, rounds=rounds)
                key = choice_key(backend, constant_time, nsquare_bits, exp_bits)
                chosen[key] = best
                rows.append({"bits": bits, "backend": backend, "constant_time": constant_time, "key": key,
                             "window": best, "rates": rates})
    path = save_choices(chosen)
    forget()
    for row in rows:
        row["cache"] = str(path) if path is not None else None
    return rows
