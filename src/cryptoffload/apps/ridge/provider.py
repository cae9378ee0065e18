"""A data provider as an HTTP client of the platform.

It fetches the session from the platform and checks it against the CSP's session
fingerprint (pinned on the command line, or fetched from the CSP itself over TLS): a platform
serving its own key gets nothing (issue 12, attack 2). Then it encodes, packs and encrypts its
records in batches (:class:`~.protocol.Provider`) and uploads them with its token; a failed
batch is retried with the same ``upload_id`` (and a fresh message id), so a batch whose
acknowledgement was lost is not counted twice.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable, Sequence

import aiohttp
import numpy as np

from cryptoffload.apps import _http
from cryptoffload.apps._credentials import check_name
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import Message, ProtocolError, SessionInfo
from cryptoffload.apps.ridge.peer import Peer, client_session, fetch_session
from cryptoffload.apps.ridge.params import RidgeParams
from cryptoffload.apps.ridge.protocol import Upload, check_upload_mode
from cryptoffload.apps.ridge.session import RidgeSession
from cryptoffload.checks import check_int, check_seed
from cryptoffload.crypto.paillier import MIN_SECURE_KEY_BITS, PublicKey
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import RidgeData, generate, load_csv, load_diabetes_scaled


def load_data_spec(spec: str, d: int | None = None, x_bound: float | None = None,
                   y_bound: float | None = None) -> RidgeData:
    """``generate:n=N[,seed=S][,d=D]`` (the generator of Zhou and Hua's Algorithm 1, d from the session unless
    given), ``csv:PATH`` (bounds as declared, a value beyond them refused) or ``diabetes``."""
    kind, _, rest = spec.partition(":")
    if kind == "generate":
        opts = _generate_options(spec, rest)
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


MAX_GENERATED_RECORDS = 100_000_000


def _generate_options(spec: str, rest: str) -> dict[str, int]:
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
    check_int(f"--data {spec!r}: n", opts["n"], maximum=MAX_GENERATED_RECORDS)
    if "d" in opts:
        check_int(f"--data {spec!r}: d", opts["d"], maximum=64)
    if "seed" in opts:
        check_seed(f"--data {spec!r}: seed", opts["seed"])
    return opts


def check_data_spec(spec: str) -> None:
    """Refuse a ``--data`` that cannot load, before anything connects: its syntax, the
    generator's sizes, a CSV that does not parse (its bounds need the session: checked later)."""
    kind, _, rest = spec.partition(":")
    if kind == "generate":
        _generate_options(spec, rest)
    elif kind == "csv" and rest:
        load_csv(rest)  # parse and finiteness now; the session's bounds are checked when it is known
    elif spec != "diabetes":
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


def check_fingerprint(pin: object) -> str:
    """A session fingerprint as the CSP prints it: 64 hex digits (lower-cased)."""
    if not isinstance(pin, str) or not re.fullmatch(r"[0-9a-f]{64}", pin.lower()):
        raise ConfigError(f"--csp-fingerprint must be the 64 hex digits the CSP printed, got {str(pin)[:80]!r}")
    return pin.lower()


def pinned_upload_key(served: SessionInfo, pin: str, insecure_study_size: bool) -> PublicKey:
    """The upload key a provider encrypts under: the served session must have the pinned
    fingerprint (:attr:`~.messages.SessionInfo.fingerprint`), the key must be >= 2048 bits
    unless ``insecure_study_size``, and the DJN base h_s is the provider's own (a served h_s is
    not covered by the fingerprint, and h_s = 1 would make every ciphertext readable)."""
    check_fingerprint(pin)
    if served.fingerprint != pin.lower():
        raise ConfigError(f"the platform serves session {served.fingerprint}, not the pinned {pin.lower()}: another "
                          "CSP's keys or parameters; nothing was encrypted")
    if served.upload_pk.bits < MIN_SECURE_KEY_BITS and not insecure_study_size:
        raise ConfigError(f"the upload key has {served.upload_pk.bits} bits, below the 112-bit security level "
                          f"({MIN_SECURE_KEY_BITS}); pass --insecure-study-size to upload under it for a study")
    return PublicKey(served.upload_pk.n)


async def run_provider(platform_url: str, data: str | tuple[np.ndarray, np.ndarray], *, token: str,
                       csp_fingerprint: str | None = None, csp_url: str | None = None, mode: str = "per-record",
                       batch: int = 1000, provider_id: str | None = None, part: tuple[int, int] = (1, 1),
                       retry_for: float = 60.0, progress: ProgressHook | None = None,
                       cafile: Path | Sequence[Path] | None = None, backend: str = "auto",
                       insecure_study_size: bool = False, insecure_http: bool = False,
                       on_retry: Callable[[str], None] | None = None) -> ProviderReport:
    """Fetch the session from the platform, check it against the pin (``csp_fingerprint``, or
    the session fetched from the CSP itself at ``csp_url``), then encode, pack, encrypt and
    upload ``data`` (a ``--data`` spec or arrays ``(X, y)``), part ``i`` of ``K``, with the
    provider's ``token``.

    Batches are encrypted one ahead of the upload in progress (a thread; the native
    encryption releases the GIL). Upload ids are ``<provider_id>:<batch index>``: a re-run with
    the same provider id and data resumes, its accepted batches answered "already accepted"."""
    provider_id = _check_options(platform_url, token, csp_fingerprint, csp_url, mode, batch, provider_id,
                                 insecure_http)
    report = ProviderReport(provider_id)
    t0 = time.perf_counter()
    async with client_session(cafile) as session:
        peer = Peer(session, platform_url, "platform", insecure_http=insecure_http)
        served_msg, info = await _served_session(peer)
        pin = await _session_pin(session, csp_fingerprint, csp_url, insecure_http)
        upload_pk = pinned_upload_key(info, pin, insecure_study_size)
        X, y = _records(data, info.params, part)
        prov = RidgeSession.of_info(info, backend=backend).provider(upload_pk=upload_pk)
        bounds = _batch_bounds(mode, batch, len(X), served_msg.get("max_upload_vectors"))

        def make(index: int) -> Upload:
            s, e = bounds[index]
            if mode == "per-provider":
                return prov.per_provider(X, y)
            return next(prov.per_record(X[s:e], y[s:e], chunk=e - s))

        link = _UploadLink(peer, upload_pk, token, provider_id, mode, report, retry_for, on_retry, progress, len(X))
        await _encrypt_ahead(len(bounds), make, link.send, progress, len(X))
    report.seconds = time.perf_counter() - t0
    return report


def _check_options(platform_url: str, token: str, csp_fingerprint: str | None, csp_url: str | None, mode: str,
                   batch: int, provider_id: str | None, insecure_http: bool) -> str:
    """Refuse a bad option before anything connects; returns the provider id (default: the
    token's name)."""
    check_upload_mode(mode)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f"--batch must be a positive integer, got {batch!r}")
    if csp_fingerprint is None and csp_url is None:
        raise ConfigError("pin the CSP's session: --csp-fingerprint HEX (printed by the CSP) or --csp URL")
    _http.check_url(platform_url, "platform", insecure_http)
    if csp_url is not None:
        _http.check_url(csp_url, "CSP", insecure_http)
    return check_name(provider_id if provider_id is not None else token.partition(".")[0], "provider id")


async def _served_session(peer: Peer) -> tuple[Message, SessionInfo]:
    """The platform's ``/params`` message and the session it describes (502 if invalid)."""
    served_msg = await peer.get("/params", m.PARAMS)
    try:
        return served_msg, SessionInfo.from_message(served_msg)
    except ProtocolError as exc:
        raise ProtocolError(f"the platform at {peer.url} sent invalid parameters: {exc}", 502) from None


async def _session_pin(session: aiohttp.ClientSession, csp_fingerprint: str | None, csp_url: str | None,
                       insecure_http: bool) -> str:
    """The fingerprint the platform's session must have: the pinned one, or the one the CSP
    itself serves at ``csp_url`` (which must then equal the pin, when both are given)."""
    if csp_url is None:
        assert csp_fingerprint is not None
        return csp_fingerprint
    direct = await fetch_session(Peer(session, csp_url, "CSP", insecure_http=insecure_http))
    if csp_fingerprint is not None and direct.fingerprint != csp_fingerprint.lower():
        raise ConfigError(f"the CSP at {csp_url} serves session {direct.fingerprint}, not the pinned "
                          f"{csp_fingerprint.lower()}")
    return direct.fingerprint


def _records(data: str | tuple[np.ndarray, np.ndarray], p: RidgeParams, part: tuple[int, int]
             ) -> tuple[np.ndarray, np.ndarray]:
    """Part ``i`` of ``K`` of the data, which must have the session's d features."""
    if isinstance(data, str):
        rd = load_data_spec(data, p.d, p.x_bound, p.y_bound)
        X, y = rd.X, rd.y
    else:
        X, y = np.asarray(data[0], dtype=np.float64), np.asarray(data[1], dtype=np.float64).ravel()
    if X.ndim != 2 or X.shape[1] != p.d:
        raise ConfigError(f"the data has {X.shape[1] if X.ndim == 2 else '?'} features, the session expects d = {p.d}")
    i, k = part
    X, y = np.array_split(X, k)[i - 1], np.array_split(y, k)[i - 1]
    if len(X) == 0:
        raise ConfigError(f"part {i}/{k} of the data holds no record")
    return X, y


def _batch_bounds(mode: str, batch: int, total: int, max_vectors: object) -> list[tuple[int, int]]:
    """The record ranges of the uploads: ``batch`` records each per record (refused above the
    platform's largest upload), one upload of everything per provider."""
    if mode != "per-record":
        return [(0, total)]
    if isinstance(max_vectors, int) and not isinstance(max_vectors, bool) and min(batch, total) > max_vectors:
        raise ConfigError(f"--batch {batch} is above the platform's largest upload ({max_vectors} records)")
    return [(s, min(s + batch, total)) for s in range(0, total, batch)]


@dataclass
class _UploadLink:
    """Sends one provider's uploads to the platform, retrying a failed one under the same
    upload id (a fresh message id each time), and keeps the report."""

    peer: Peer
    upload_pk: PublicKey
    token: str
    provider_id: str
    mode: str
    report: ProviderReport
    retry_for: float
    on_retry: Callable[[str], None] | None
    progress: ProgressHook | None
    total: int

    async def send(self, index: int, up: Upload) -> None:
        fp = self.upload_pk.fingerprint
        upload_id = f"{self.provider_id}:{index}" if self.mode == "per-record" else f"{self.provider_id}:all"
        msg = m.new_message(m.UPLOAD, fp, upload_id=upload_id, provider_id=self.provider_id, vectors=up.vectors,
                            records=up.records, ciphertexts=m.encode_ciphertexts(up.ciphertexts, self.upload_pk))

        async def call() -> Message:
            nonlocal msg
            try:
                return await self.peer.post(msg, m.UPLOAD_ACK, fp, self.token)
            finally:
                msg = m.with_new_id(msg)  # a retry is a new message with the same upload id

        def retrying(reason: str) -> None:
            self.report.retries += 1
            if self.on_retry is not None:
                self.on_retry(f"upload {upload_id}: {reason}; retrying")

        ack = await _http.retrying(call, self.retry_for, retrying)
        if ack.get("upload_id") != upload_id:
            raise ProtocolError(f"the platform acknowledged {ack.get('upload_id')!r}, not {upload_id!r}", 502)
        self._count(up, ack)

    def _count(self, up: Upload, ack: Message) -> None:
        self.report.uploads += 1
        self.report.records += up.records
        self.report.bytes += len(up.ciphertexts) * m.value_bytes(self.upload_pk)
        if ack.get("status") == "already accepted":
            self.report.already_accepted += 1
        if self.progress is not None:
            self.progress(up.records, self.total)


async def _encrypt_ahead(count: int, make: Callable[[int], Upload],
                         send: Callable[[int, Upload], Awaitable[None]], progress: ProgressHook | None,
                         total: int) -> None:
    """Upload ``count`` batches in order, the next one encrypted (in a thread) while the
    current one is sent."""
    if progress is not None:
        progress(0, total)
    pending: asyncio.Task[Upload] | None = asyncio.ensure_future(asyncio.to_thread(make, 0)) if count else None
    try:
        for index in range(count):
            assert pending is not None
            up = await pending
            pending = asyncio.ensure_future(asyncio.to_thread(make, index + 1)) if index + 1 < count else None
            await send(index, up)
    finally:
        if pending is not None:
            pending.cancel()
