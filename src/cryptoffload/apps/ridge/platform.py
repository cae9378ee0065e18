"""The platform as an HTTP server: accepts uploads, aggregates them durably, finalizes with the CSP.

It fetches parameters and keys from the CSP, accepts uploads from registered providers
(idempotent by ``upload_id``, committed to SQLite with the new aggregate before the 200,
:mod:`.store`), folds each upload into the aggregate with one native call
(:func:`~cryptoffload.crypto._native.core.column_products`), and on ``finalize`` (buyer
only) commits to the aggregate at the CSP, runs the masked unpacking with the CSP and the
masked solve (:class:`~.protocol.TradingPlatform`), keeping R, r and the masked system for
the buyer. It checks the proof of every contribution the CSP leaves out
(:func:`~.proofs.check_exclusions`: a CSP cannot drop an honest provider); a failed proof
stops the finalisation (502 ``csp_proof_failed``) before anything is saved.

What an upload must be (issue 12's attacks on uploads): sent with a provider's token
(:mod:`.tokens`), naming that provider and an ``upload_id`` that starts with its id;
``records >= 1`` with ``vectors == records`` (per-record) or ``vectors == 1`` (per-provider),
at most ``max_upload_vectors`` vectors (the route's body limit follows from it), the records
charged against ``max_records``; ciphertexts below n^2 and units modulo n. The token is checked
before the body is read, and a provider has at most two uploads in progress.

What one provider cannot do to the others (issue 22): each provider may charge at most its
share of ``max_records`` (``max_records_per_provider``, by default ceil(max_records /
providers)), so a per-provider upload that declares more records than it holds (a count no one
can check inside a ciphertext) uses up its sender's share only; each provider's uploads fold
into an aggregate of its own, and the CSP checks each one at unpacking and leaves out one whose
sums overflowed (:meth:`~.protocol.Csp.unpack_contributions`); a model needs uploads from
``params.min_providers`` providers; ``/status`` tells a caller without a token only the state,
a provider its own counts, the buyer the totals.
Logs: one line per accepted upload (records, bytes) and one per protocol step, never a
plaintext, a mask or a token.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import socket
import time
from pathlib import Path
from typing import AsyncIterator, Mapping, Sequence

import gmpy2
from aiohttp import web

from cryptoffload.apps import _http
from cryptoffload.apps._credentials import Credentials, Unauthorized, check_name, issue_tokens
from cryptoffload.apps._private_tmp import secrets_folder
from cryptoffload.apps._http import Unreachable
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import Message, ProtocolError, SessionInfo
from cryptoffload.apps.ridge.params import MAX_PROVIDERS
from cryptoffload.apps.ridge.peer import Peer, client_session, fetch_session
from cryptoffload.apps.ridge.proofs import check_exclusions
from cryptoffload.apps.ridge.protocol import Aggregate
from cryptoffload.apps.ridge.server import (
    ReplayGuard,
    configure_logging,
    errors,
    json_response,
    log,
    parse,
    run,
    serve_party,
)
from cryptoffload.apps.ridge.session import RidgeSession
from cryptoffload.apps.ridge.store import FinalizeState, PlatformStore, UploadRecord
from cryptoffload.apps.ridge.tokens import BUYER, allow, read_token
from cryptoffload.checks import JsonValue
from cryptoffload.crypto import native
from cryptoffload.errors import ConfigError

#: fault injection for tests: ``stall-after-commit:N`` makes the platform hang (without
#: answering) right after committing its N-th upload, i.e. "killed between commit and 200"
FAULT_ENV = "CRYPTOFFLOAD_RIDGE_FAULT"
#: default largest upload, in vectors (records in per-record mode): ~10 MB at d = 20, 1024 bits
MAX_UPLOAD_VECTORS = 2048
_UPLOAD_SUFFIX = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _parse_fault(text: str | None) -> int | None:
    if not text:
        return None
    kind, _, count = text.partition(":")
    if kind != "stall-after-commit" or not count.isdigit() or int(count) < 1:
        raise ConfigError(f"{FAULT_ENV} must be 'stall-after-commit:N', got {text!r}")
    return int(count)


class PlatformService:
    """The platform's HTTP face (module docstring); state survives restarts (:mod:`.store`)."""

    def __init__(self, info: SessionInfo, csp_url: str, csp_token: str, store: PlatformStore,
                 providers: Credentials, *, workers: int = 1, backend: str = "auto",
                 cafile: Path | Sequence[Path] | None = None, max_upload_vectors: int = MAX_UPLOAD_VECTORS,
                 insecure_http: bool = False, max_records_per_provider: int | None = None) -> None:
        if BUYER in providers:
            raise ConfigError(f"{BUYER!r} is the buyer's name; choose other provider ids")
        count = len(providers.names())
        if count > MAX_PROVIDERS:
            raise ConfigError(f"{count} providers: the CSP unpacks at most {MAX_PROVIDERS} contributions")
        self.info = info
        self.params = info.params
        self.upload_pk, self.solve_pk = info.upload_pk, info.solve_pk
        self.protocol = RidgeSession.of_info(info, backend=backend, workers=workers).platform
        self.plaintexts = self.protocol.layout.plaintexts_needed(info.params.value_count)
        self.store = store
        self.csp_url = _http.check_url(csp_url, "CSP", insecure_http)
        self._csp_token = csp_token
        self._cafile = cafile
        self._insecure_http = insecure_http
        self.credentials = Credentials({name: providers.hash_of(name) for name in providers.names()})
        self.credentials.add(BUYER, info.buyer_token_sha256)
        self.max_upload_vectors = max(1, min(int(max_upload_vectors), self.params.max_records))
        share = -(-self.params.max_records // max(count, 1))
        self.quota = share if max_records_per_provider is None else max_records_per_provider
        if isinstance(self.quota, bool) or not isinstance(self.quota, int) or not 1 <= self.quota <= \
                self.params.max_records:
            raise ConfigError(f"--max-records-per-provider must be an integer in 1..{self.params.max_records}")
        self.upload_limit = m.message_bytes(self.max_upload_vectors * self.plaintexts, self.upload_pk)
        self._in_flight = _http.InFlight(2)
        state = store.load()
        self._ones = native.ints_to_words([1] * self.plaintexts, self.upload_pk.nsquare)
        self.aggs: dict[str, bytes] = state.aggregates  # per provider
        self.records = state.records
        self.bytes = state.bytes
        #: how many uploads were accepted (the uploads themselves stay in the store)
        self.upload_count = state.uploads
        #: per provider: (records, uploads)
        self._mine: dict[str, tuple[int, int]] = dict(state.totals)
        self.fin: FinalizeState = state.finalize
        self._replay = ReplayGuard(store.has_message)
        self._lock = asyncio.Lock()
        self._fault = _parse_fault(os.environ.get(FAULT_ENV))
        self._accepted_here = 0
        self._csp: Peer | None = None
        up, sp = self.upload_pk.fingerprint, self.solve_pk.fingerprint
        self._expected = {m.UPLOAD: up, m.FINALIZE: up, m.MASK_REQUEST: sp}
        if state.uploads or state.finalize.state != "collecting":
            log.info("reloaded %d accepted uploads (%d records), finalisation state %s", self.upload_count,
                     self.records, self.fin.state)

    def app(self) -> web.Application:
        app = _http.new_app(errors)
        _http.add_route(app, "GET", "/params", self._params)
        _http.add_route(app, "GET", "/status", self._status)
        _http.add_route(app, "POST", "/message", self._message, max_body=self.upload_limit)
        app.cleanup_ctx.append(self._csp_client)
        return app

    async def _csp_client(self, app: web.Application) -> AsyncIterator[None]:
        async with client_session(self._cafile) as session:
            self._csp = Peer(session, self.csp_url, "CSP", insecure_http=self._insecure_http)
            yield

    async def _params(self, request: web.Request) -> web.Response:
        return json_response(dict(self.info.to_message("platform"), max_upload_vectors=self.max_upload_vectors))

    def provider_records(self, provider: str) -> int:
        return self._mine.get(provider, (0, 0))[0]

    async def _status(self, request: web.Request) -> web.Response:
        """What the caller's role may know: without a token the state alone; a provider its own
        records and uploads; the buyer the totals (what it gets with the model anyway)."""
        header = request.headers.get("Authorization")
        fields: Message = {"role": "platform", "state": self.fin.state}
        if header is not None:
            who = self.credentials.identify(header)
            if who == BUYER:
                fields.update(records=self.records, uploads=self.upload_count, bytes=self.bytes,
                              providers=len(self.aggs), min_providers=self.params.min_providers,
                              max_records=self.params.max_records)
            else:
                records, uploads = self._mine.get(who, (0, 0))
                fields.update(provider_id=who, records=records, uploads=uploads, max_records=self.quota)
        return json_response(m.new_message(m.STATUS, self.upload_pk.fingerprint, **fields))

    async def _message(self, request: web.Request) -> web.Response:
        role = self.credentials.identify(request.headers.get("Authorization"))  # before reading the body
        with self._in_flight(role):
            limit = m.ENVELOPE_BYTES if role == BUYER else self.upload_limit
            msg = await parse(await _http.read_body(request, limit), self._expected)
            kind, mid = m.envelope(msg)
            if kind == m.UPLOAD:
                if role == BUYER:
                    raise Unauthorized("'upload' is accepted from providers only", status=403, code="forbidden")
            else:
                allow(role, BUYER, f"{kind!r}")
            self._replay.check(mid)
            if kind == m.UPLOAD:
                return json_response(await self._upload(msg, role))
            return json_response(await (self._finalize(msg) if kind == m.FINALIZE else self._mask(msg)))

    async def _remember(self, msg: Mapping[str, JsonValue]) -> None:
        kind, mid = m.envelope(msg)
        await run(self.store.remember_message, mid, kind)

    # -- uploads --------------------------------------------------------------------------------
    def _ack(self, upload_id: str, status: str, provider: str) -> Message:
        """The provider's own totals (another provider's counts are not its business)."""
        records, uploads = self._mine.get(provider, (0, 0))
        return m.new_message(m.UPLOAD_ACK, self.upload_pk.fingerprint, upload_id=upload_id, status=status,
                             records_total=records, uploads_total=uploads)

    def _duplicate(self, prior: UploadRecord, records: int, vectors: int) -> None:
        upload_id = prior.upload_id
        if (prior.records, prior.vectors) != (records, vectors):
            raise ProtocolError(f"upload id {upload_id!r} was already accepted for {prior.records} records in "
                                f"{prior.vectors} vectors, not {records} in {vectors}", status=409,
                                code="upload_id_conflict")

    async def _already_accepted(self, msg: Mapping[str, JsonValue], prior: UploadRecord, provider_id: str, records: int,
                                vectors: int, locked: bool = False) -> Message:
        upload_id = prior.upload_id
        self._duplicate(prior, records, vectors)
        if locked:
            await self._remember(msg)
        else:
            async with self._lock:  # every database write runs under the lock
                await self._remember(msg)
        log.info("upload %s from %s repeated: already accepted, not counted again", upload_id, provider_id)
        return self._ack(upload_id, "already accepted", provider_id)

    def _upload_fields(self, msg: Mapping[str, JsonValue], provider: str) -> tuple[str, int, int]:
        provider_id = m.str_field(msg, "provider_id", 64)
        if provider_id != provider:
            raise Unauthorized(f"this token is provider {provider!r}'s; the upload names {provider_id[:64]!r}",
                               status=403, code="forbidden")
        upload_id = m.str_field(msg, "upload_id", 130)
        prefix, colon, suffix = upload_id.partition(":")
        if prefix != provider or not colon or not _UPLOAD_SUFFIX.fullmatch(suffix):
            raise ProtocolError(f"upload_id must be '{provider}:<1..64 letters, digits, _ . ->'", code="malformed")
        records = m.int_field(msg, "records", 1, self.params.max_records)
        vectors = m.int_field(msg, "vectors", 1, self.max_upload_vectors)
        if vectors != records and vectors != 1:
            raise ProtocolError(f"{vectors} vectors for {records} records: a per-record upload carries one vector "
                                "per record, a per-provider upload one vector", code="malformed")
        return upload_id, records, vectors

    def _check_room(self, records: int, provider: str) -> None:
        if self.fin.state != "collecting":
            raise ProtocolError(f"the platform is {self.fin.state}: no more uploads", status=409, code="finalized")
        if self.records + records > self.params.max_records:
            raise ProtocolError(f"{self.records + records} records would exceed max_records = "
                                f"{self.params.max_records} (the slots' guard bits)", status=422,
                                code="too_many_records")
        mine = self.provider_records(provider)
        if mine + records > self.quota:
            raise ProtocolError(f"{mine + records} records would exceed this provider's share of "
                                f"{self.quota} records (max_records_per_provider)", status=422,
                                code="provider_quota")

    async def _upload(self, msg: Message, provider: str) -> Message:
        upload_id, records, vectors = self._upload_fields(msg, provider)
        prior = self.store.upload(upload_id)
        if prior is not None:  # a retry: answered without decoding (even after finalisation)
            return await self._already_accepted(msg, prior, provider, records, vectors)
        self._check_room(records, provider)
        batch = await run(m.decode_ciphertexts, msg.get("ciphertexts"), self.upload_pk,
                          count=vectors * self.plaintexts, check_units=False)
        async with self._lock:
            prior = self.store.upload(upload_id)
            if prior is not None:  # accepted while this copy was being decoded
                return await self._already_accepted(msg, prior, provider, records, vectors, locked=True)
            self._check_room(records, provider)  # again: another upload may have been accepted meanwhile
            new_words = await run(self._fold, self.aggs.get(provider, self._ones), batch.words, vectors)
            rec = UploadRecord(upload_id, provider, m.envelope(msg)[1], records, vectors, len(batch.words),
                               batch.digest)
            await run(self.store.accept_upload, rec, new_words)
            self.aggs[provider] = new_words
            mine = self._mine.get(provider, (0, 0))
            self._mine[provider] = (mine[0] + records, mine[1] + 1)
            self.records += records
            self.bytes += len(batch.words)
            self.upload_count += 1
            self._accepted_here += 1
            log.info("accepted upload %s from %s: %d records, %d bytes (total %d records)", upload_id, provider,
                     records, len(batch.words), self.records)
            ack = self._ack(upload_id, "accepted", provider)
        if self._fault is not None and self._accepted_here == self._fault:
            log.warning("fault injection (%s): committed upload %s, now hanging without answering", FAULT_ENV,
                        upload_id)
            await asyncio.Event().wait()
        return ack

    def _fold(self, aggregate: bytes, words: bytes, vectors: int) -> bytes:
        """The provider's running aggregate times every vector of the upload, one native call
        (the aggregate is row 0 of the matrix). Refuses an upload holding a non-unit mod n: the
        product of units is a unit, so one gcd per column checks every ciphertext."""
        n2, nn = self.upload_pk.nsquare, gmpy2.mpz(self.upload_pk.n)
        products = native.column_products(aggregate + words, vectors + 1, self.plaintexts, n2)
        if any(gmpy2.gcd(p, nn) != 1 for p in products):
            raise ProtocolError("the upload holds a value that is not a ciphertext of the upload key (garbled)",
                                code="malformed")
        return native.ints_to_words(products, n2)

    # -- finalisation ---------------------------------------------------------------------------
    async def _csp_post(self, message: Message, expect: str, fp: bytes) -> Message:
        assert self._csp is not None
        peer = self._csp
        try:
            # retries resend the same content under a new message id (the CSP caches by content)
            msg = message

            async def call() -> Message:
                nonlocal msg
                try:
                    return await peer.post(msg, expect, fp, self._csp_token)
                finally:
                    msg = m.with_new_id(msg)
            return await _http.retrying(call, 10.0)
        except Unreachable as exc:
            raise ProtocolError(str(exc), status=503, code="csp_unreachable") from None
        except ProtocolError as exc:
            raise ProtocolError(str(exc), status=502, code="csp_refused") from None

    def _contributions(self, contributors: Sequence[str]) -> list[int]:
        return [self.provider_records(c) for c in contributors]

    async def _commitment(self) -> Message:
        """The masked aggregates (one per provider, concatenated), the uploads in them and each
        contribution's record count, in the order sent."""
        digest = await run(self.store.uploads_digest)
        return {"aggregate_sha256": hashlib.sha256(self.fin.masked).hexdigest(), "uploads_sha256": digest,
                "records": sum(self._contributions(self.fin.contributors)), "uploads": self.upload_count,
                "providers": len(self.fin.contributors), "contributions": self._contributions(self.fin.contributors)}

    def _kept(self) -> list[str]:
        return [c for i, c in enumerate(self.fin.contributors) if i not in set(self.fin.excluded)]

    async def _finalize(self, msg: Message) -> Message:
        async with self._lock:
            await self._advance()
            await self._remember(msg)
            digest = await run(self.store.uploads_digest)
            excluded = [self.fin.contributors[i] for i in self.fin.excluded]
            return m.new_message(m.FINALIZED, self.upload_pk.fingerprint, state=self.fin.state,
                                 records=self.fin.records, uploads=self.upload_count, providers=len(self._kept()),
                                 uploads_sha256=digest, system_digest=self.fin.system_digest,
                                 excluded=self.fin.excluded, excluded_providers=excluded)

    async def _start_unpacking(self) -> None:
        """Mask each provider's aggregate with masks of its own and keep them all (a restart
        resends the same unpack request). Needs ``min_providers`` providers."""
        have, need = len(self.aggs), self.params.min_providers
        if have < need:
            raise ProtocolError(f"uploads from {have} provider(s); a model needs at least {need} (min_providers)",
                                status=409, code="too_few_providers")
        t0 = time.perf_counter()
        size, ufp = m.value_bytes(self.upload_pk), self.upload_pk.fingerprint
        contributors = sorted(self.aggs)
        aggs = [Aggregate(ufp, [int.from_bytes(w[i:i + size], "little") for i in range(0, len(w), size)],
                          self.provider_records(c)) for c, w in ((c, self.aggs[c]) for c in contributors)]
        masked = await run(self.protocol.mask_contributions, aggs)
        masks = list(self.protocol._masks or [])
        masked_words = b"".join(native.ints_to_words(part, self.upload_pk.nsquare) for part in masked)
        await run(self.store.save_unpacking, self.records, masks, masked_words, contributors)
        self.fin = FinalizeState("unpacking", self.records, masks, masked_words, contributors=contributors)
        log.info("finalizing %d records from %d uploads of %d providers: aggregates masked (%.2f s)", self.records,
                 self.upload_count, len(contributors), time.perf_counter() - t0)

    def _excluded(self, resp: Mapping[str, JsonValue]) -> list[int]:
        value = resp.get("excluded")
        k = len(self.fin.contributors)
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < k
                                              for i in value) or value != sorted(set(value)):
            raise ProtocolError("the CSP's unpack answer names no valid excluded contributions", status=502,
                                code="csp_refused")
        return value

    def _check_exclusions(self, resp: Mapping[str, JsonValue], excluded: list[int]) -> None:
        """The CSP's proof for each contribution it left out, against the masked ciphertexts
        this platform sent (:func:`~.proofs.check_exclusions`; CspProofError -> 502)."""
        P, size = self.plaintexts, m.value_bytes(self.upload_pk)
        proofs = m.exclusion_proofs_from(resp.get("exclusion_proofs"), P, self.upload_pk.n)
        words = self.fin.masked
        values = [int.from_bytes(words[i:i + size], "little") for i in range(0, len(words), size)]
        masked = [values[i:i + P] for i in range(0, len(values), P)]
        check_exclusions(self.upload_pk, self.protocol.layout, masked, excluded, proofs)

    async def _unpack(self) -> None:
        """Commit, unpack (the CSP leaves out contributions that overflowed), unmask the kept
        ones and mask the system for the solve."""
        p, fin = self.params, self.fin
        ufp, sfp = self.upload_pk.fingerprint, self.solve_pk.fingerprint
        t0 = time.perf_counter()
        # the commitment first: the CSP unpacks only the aggregates committed to (an
        # identical commitment after a restart is answered again)
        await self._csp_post(m.new_message(m.COMMIT, ufp, **(await self._commitment())), m.COMMITTED, ufp)
        req = m.new_message(m.UNPACK_REQUEST, ufp, ciphertexts=m.encode_words(
            fin.masked, self.plaintexts * len(fin.contributors), self.upload_pk))
        resp = await self._csp_post(req, m.UNPACK_RESPONSE, sfp)
        fields = await run(m.decode_ciphertexts, resp.get("ciphertexts"), self.solve_pk, count=p.value_count,
                           name="unpack_response")
        excluded = self._excluded(resp)
        await run(self._check_exclusions, resp, excluded)
        self.protocol._masks = [list(part) for part in fin.masks]
        system = await run(self.protocol.unmask, fields.values, excluded)
        t1 = time.perf_counter()
        masked_system, secret = await run(self.protocol.mask_system, system)
        flat = [v for row in masked_system.AR for v in row] + list(masked_system.c)
        words = native.ints_to_words(flat, self.solve_pk.nsquare)
        digest = hashlib.sha256(words).hexdigest()
        contributions = self._contributions(fin.contributors)
        kept = sum(r for i, r in enumerate(contributions) if i not in excluded)
        await run(self.store.save_solving, secret.R, secret.r, words, digest, kept, excluded)
        self.fin = FinalizeState("solving", kept, [], b"", secret.R, secret.r, words, digest, fin.contributors,
                                 excluded)
        for i in excluded:
            log.warning("the CSP left out provider %s: its sums overflowed their slots", fin.contributors[i])
        log.info("unpacked with the CSP (%.2f s); masked the %dx%d system: %d exponentiations, %s (%.2f s)",
                 t1 - t0, p.d, p.d, self.protocol.exponentiations, self.protocol.powm_backend,
                 time.perf_counter() - t1)

    async def _advance(self) -> None:
        """Drive finalisation to the end from wherever it stands (store docstring)."""
        p = self.params
        if self.fin.state == "collecting":
            await self._start_unpacking()
        if self.fin.state == "unpacking":
            await self._unpack()
        fin, sfp = self.fin, self.solve_pk.fingerprint
        if fin.state == "solving":
            t0 = time.perf_counter()
            req = m.new_message(m.SOLVE_REQUEST, sfp, ciphertexts=m.encode_words(fin.system, p.d * p.d + p.d,
                                                                                  self.solve_pk),
                                system_digest=fin.system_digest)
            resp = await self._csp_post(req, m.SOLVE_ACK, sfp)
            if resp.get("system_digest") != fin.system_digest:
                raise ProtocolError("the CSP acknowledged another system than the one sent", status=502,
                                    code="csp_refused")
            await run(self.store.mark_finalized)
            fin.state = "finalized"
            log.info("the CSP solved the masked system (%.2f s): finalized", time.perf_counter() - t0)

    async def _mask(self, msg: Message) -> Message:
        if self.fin.state != "finalized":
            raise ProtocolError(f"not finalized yet (state {self.fin.state}): send 'finalize' first", status=409,
                                code="not_finalized")
        await self._remember(msg)
        d = self.params.d
        log.info("R, r and the masked system handed to the buyer")
        return m.new_message(m.MASK, self.solve_pk.fingerprint, R=[m.ints_to_hex(row) for row in self.fin.R],
                             r=m.ints_to_hex(self.fin.r), records=self.fin.records,
                             system_digest=self.fin.system_digest,
                             system=m.encode_words(self.fin.system, d * d + d, self.solve_pk))


def provider_credentials(token_dir: Path, providers: Sequence[str]) -> Credentials:
    """One token per provider in ``token_dir`` (``<id>.token``, 0600; existing ones reused)."""
    if not providers:
        raise ConfigError("name the providers that may upload: --providers ID[,ID...]")
    for p in providers:
        check_name(p, "provider id")
        if p == BUYER:
            raise ConfigError(f"{BUYER!r} is the buyer's name; choose other provider ids")
    return Credentials(issue_tokens(token_dir, providers, "provider token"))


def serve_platform(*, csp_url: str, db: Path, csp_token_file: Path, providers: Sequence[str],
                   token_dir: Path | None = None, host: str = "127.0.0.1", port: int = 0, workers: int | None = None,
                   wait_csp: float = 10.0, backend: str = "auto", cafile: Path | Sequence[Path] | None = None,
                   tls_cert: Path | None = None, tls_key: Path | None = None, insecure_http: bool = False,
                   max_upload_vectors: int = MAX_UPLOAD_VECTORS, max_records_per_provider: int | None = None) -> None:
    """Run the platform until SIGINT/SIGTERM. Provider tokens (and a generated TLS key) go into
    ``token_dir``, or a new private folder whose path is printed and which is removed at exit
    (a platform restarted without ``token_dir`` issues new tokens); never to stdout."""
    configure_logging()
    ctx = _http.tls_options(tls_cert, tls_key, insecure_http)
    _http.check_url(csp_url, "CSP", insecure_http)
    csp_token = read_token(csp_token_file, "CSP token (--csp-token-file)")
    _parse_fault(os.environ.get(FAULT_ENV))
    stores: list[PlatformStore] = []
    sock: socket.socket | None = None

    async def main(folder: Path) -> None:
        nonlocal ctx
        assert sock is not None
        async with client_session(cafile) as session:
            info = await fetch_session(Peer(session, csp_url, "CSP", insecure_http=insecure_http), wait_csp)
        store = PlatformStore(db)  # opened once the CSP answered: a failed start leaves no file
        stores.append(store)
        store.bind_session(info.upload_pk.fingerprint.hex(), info.solve_pk.fingerprint.hex(),
                           m.params_to_dict(info.params))
        service = PlatformService(info, csp_url, csp_token, store, credentials,
                                  workers=workers or os.cpu_count() or 1, backend=backend, cafile=cafile,
                                  max_upload_vectors=max_upload_vectors, insecure_http=insecure_http,
                                  max_records_per_provider=max_records_per_provider)
        ctx = _http.tls_context(ctx, folder, host, insecure_http, "ridge platform")
        print(f"ridge platform: provider tokens in {folder} (0600): "
              + ", ".join(f"{p}.token" for p in credentials.names()), flush=True)
        await serve_party(service.app(), sock, "platform", ctx)

    with secrets_folder(token_dir, "provider token", "ridge-platform-") as folder:
        try:
            credentials = provider_credentials(folder, providers)
            sock = _http.bind(host, port)
            asyncio.run(main(folder))
        finally:
            for store in stores:
                store.close()
            if sock is not None:
                sock.close()
