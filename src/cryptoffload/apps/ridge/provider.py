"""A data provider as an HTTP client of the platform.

It fetches the session from the platform, then encodes, packs and encrypts its records in
batches (:class:`~.protocol.Provider`) and uploads them; a failed batch is retried with the
same ``upload_id`` (and a fresh message id), so a batch whose acknowledgement was lost is not
counted twice.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from cryptoffload.apps import _http
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import ProtocolError
from cryptoffload.apps.ridge.peer import Peer, client_session, fetch_session
from cryptoffload.apps.ridge.protocol import MODES, Provider, Upload
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import RidgeData, generate, load_csv, load_diabetes_scaled


def load_data_spec(spec: str, d: int | None = None, x_bound: float | None = None,
                   y_bound: float | None = None) -> RidgeData:
    """``generate:n=N[,seed=S][,d=D]`` (the generator of Zhou and Hua's Algorithm 1, d from the session unless
    given), ``csv:PATH`` (bounds as declared, a value beyond them refused) or ``diabetes``."""
    kind, _, rest = spec.partition(":")
    if kind == "generate":
        opts: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq or key not in ("n", "seed", "d"):
                raise ConfigError(f"--data {spec!r}: expected generate:n=N[,seed=S][,d=D], got {part!r}")
            try:
                opts[key] = int(value)
            except ValueError:
                raise ConfigError(f"--data {spec!r}: {key} must be an integer, got {value!r}") from None
        if "n" not in opts:
            raise ConfigError(f"--data {spec!r}: generate needs n=RECORDS")
        dd = opts.get("d", d)
        if dd is None:
            raise ConfigError(f"--data {spec!r}: generate needs d=DIMENSIONS here")
        if d is not None and dd != d:
            raise ConfigError(f"--data {spec!r} asks for d = {dd}, the session has d = {d}")
        return generate(opts["n"], dd, opts.get("seed", 1))
    if kind == "csv" and rest:
        return load_csv(rest, x_bound=x_bound, y_bound=y_bound)
    if spec == "diabetes":
        return load_diabetes_scaled()
    raise ConfigError(f"unknown --data {spec!r}: use generate:n=N[,seed=S], csv:PATH or diabetes")


def parse_part(text: str) -> tuple[int, int]:
    """``i/K``: the i-th (1-based) of K contiguous parts of the data set."""
    i, slash, k = text.partition("/")
    if not slash or not i.isdigit() or not k.isdigit() or not 1 <= int(i) <= int(k):
        raise ConfigError(f"--part must be i/K with 1 <= i <= K, got {text!r}")
    return int(i), int(k)


@dataclass
class ProviderReport:
    provider_id: str
    records: int = 0
    uploads: int = 0
    already_accepted: int = 0
    retries: int = 0
    bytes: int = 0
    seconds: float = 0.0


ProgressHook = Callable[[int, int], None]  # (records just acknowledged, total records)


async def run_provider(platform_url: str, data: str | tuple[np.ndarray, np.ndarray], *, mode: str = "per-record",
                       batch: int = 1000, provider_id: str | None = None, part: tuple[int, int] = (1, 1),
                       retry_for: float = 60.0, progress: ProgressHook | None = None, cafile: Path | None = None,
                       backend: str = "auto", on_retry: Callable[[str], None] | None = None) -> ProviderReport:
    """Fetch the session from the platform, then encode, pack, encrypt and upload ``data``
    (a ``--data`` spec or arrays ``(X, y)``), part ``i`` of ``K``.

    Batches are encrypted one ahead of the upload in progress (a thread; the native
    encryption releases the GIL). Upload ids are ``<provider_id>:<batch index>``: a re-run with
    the same provider id and data resumes, its accepted batches answered "already accepted"."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f"--batch must be a positive integer, got {batch!r}")
    provider_id = provider_id or f"provider-{secrets.token_hex(6)}"
    report = ProviderReport(provider_id)
    t0 = time.perf_counter()
    async with client_session(cafile) as session:
        peer = Peer(session, platform_url, "platform")
        info = await fetch_session(peer)
        p = info.params
        if isinstance(data, str):
            rd = load_data_spec(data, p.d, p.x_bound, p.y_bound)
            X, y = rd.X, rd.y
        else:
            X, y = np.asarray(data[0], dtype=np.float64), np.asarray(data[1], dtype=np.float64).ravel()
        if X.ndim != 2 or X.shape[1] != p.d:
            raise ConfigError(f"the data has {X.shape[1] if X.ndim == 2 else '?'} features, the session expects d = {p.d}")
        i, k = part
        X, y = np.array_split(X, k)[i - 1], np.array_split(y, k)[i - 1]
        prov = Provider(p, info.upload_pk, backend=backend)
        fp = info.upload_pk.fingerprint
        total = len(X)
        if mode == "per-record":
            bounds = [(s, min(s + batch, total)) for s in range(0, total, batch)]
        else:
            bounds = [(0, total)]

        def make(index: int) -> Upload:
            s, e = bounds[index]
            if mode == "per-provider":
                return prov.per_provider(X, y)
            return next(prov.per_record(X[s:e], y[s:e], chunk=e - s))

        async def send(index: int, up: Upload) -> None:
            upload_id = f"{provider_id}:{index}" if mode == "per-record" else f"{provider_id}:all"
            msg = m.new_message(m.UPLOAD, fp, upload_id=upload_id, provider_id=provider_id, vectors=up.vectors,
                                records=up.records, ciphertexts=m.encode_ciphertexts(up.ciphertexts, info.upload_pk))

            async def call() -> dict[str, Any]:
                nonlocal msg
                try:
                    return await peer.post(msg, m.UPLOAD_ACK, fp)
                finally:
                    msg = m.with_new_id(msg)  # a retry is a new message with the same upload id

            def retrying(reason: str) -> None:
                report.retries += 1
                if on_retry is not None:
                    on_retry(f"upload {upload_id}: {reason}; retrying")

            ack = await _http.retrying(call, retry_for, retrying)
            if ack.get("upload_id") != upload_id:
                raise ProtocolError(f"the platform acknowledged {ack.get('upload_id')!r}, not {upload_id!r}", 502)
            report.uploads += 1
            report.records += up.records
            report.bytes += len(up.ciphertexts) * m.value_bytes(info.upload_pk)
            if ack.get("status") == "already accepted":
                report.already_accepted += 1
            if progress is not None:
                progress(up.records, total)

        if progress is not None:
            progress(0, total)
        pending: asyncio.Task[Upload] | None = asyncio.ensure_future(asyncio.to_thread(make, 0)) if bounds else None
        try:
            for index in range(len(bounds)):
                assert pending is not None
                up = await pending
                pending = asyncio.ensure_future(asyncio.to_thread(make, index + 1)) if index + 1 < len(bounds) else None
                await send(index, up)
        finally:
            if pending is not None:
                pending.cancel()
    report.seconds = time.perf_counter() - t0
    return report
