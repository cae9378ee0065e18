"""The crypto service provider (CSP) as an HTTP server.

It makes both key pairs (private keys never leave the process; with ``--key-dir`` they are
saved 0600 and reused on restart), publishes the parameters and public keys
(``GET /params``), and decrypts for **one session only**: a CSP that decrypted whatever it is
sent would be a decryption oracle for anyone who can reach it. Hence, for each key pair:

1. ``commit`` (platform only): the platform names the masked aggregate it will send (its
   SHA-256) and the uploads in it (SHA-256 of the list, their counts). Once; a repeat of the
   same commitment is answered again, another one refused (409). It names one contribution
   (masked aggregate) per provider, with its record count, and needs ``min_providers`` of them.
2. ``unpack_request`` (platform only): accepted only for ciphertexts matching the
   commitment, so a stranger, a malformed request or another aggregate spends nothing. The
   unpack is spent *before* decrypting (a failure says something about the decrypted
   values, so it must not be repeatable with variations); an identical retry is answered
   from the stored answer. Each contribution is split on its own; one whose fields reach
   their check bits (its provider's sums overflowed) is left out and named by position, the
   others are summed and encrypted under the solve key; fewer than ``min_providers`` left
   fails the unpack (422, spent). Each contribution left out comes with the proof of it
   (:mod:`.proofs`: the plaintext that does not split and its decryption proof), which the
   platform checks.
3. ``solve_request`` (platform only, after the unpack): one masked system, same rules.
4. ``coefficients_request`` (buyer only): w', the proof that it solves the system (which the
   buyer checks against the masked system the platform gives it), and the commitment's
   counts, for the buyer to compare with what the platform reported.

Every step is in the CSP's SQLite file (:mod:`.csp_store`, in ``--key-dir``) before the CSP
answers, so a restart with the same keys keeps the session spent. Callers are identified by
bearer token before their body is read (:mod:`.tokens`); the CSP publishes only the buyer
token's hash (``buyer_token_sha256``), which the platform checks the buyer against. Refused
attempts are logged with who asked and why, never with a token or a ciphertext; nothing
logged or printed holds a private key, a token or a plaintext.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from aiohttp import web

from cryptoffload.apps import _http
from cryptoffload.apps._credentials import Credentials, private_dir
from cryptoffload.apps._private_tmp import secrets_folder
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.csp_store import CspStore
from cryptoffload.apps.ridge.messages import Message, ProtocolError, SessionInfo
from cryptoffload.apps.ridge.modular import SingularMatrixError
from cryptoffload.apps.ridge.params import MAX_PROVIDERS, RidgeParams, upload_layout
from cryptoffload.apps.ridge.protocol import Csp, MaskedSystem, TooFewContributions
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
from cryptoffload.apps.ridge.session import RidgeKeys, RidgeSession
from cryptoffload.apps.ridge.tokens import BUYER, PLATFORM, allow, csp_credentials
from cryptoffload.crypto.paillier import PrivateKey, load_key, save_key
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.io import atomic_write, read_input_text

_HEX64 = re.compile(r"[0-9a-f]{64}")


def _csp_session(params: RidgeParams, upload_bits: int, solve_bits: int | None, insecure_study_size: bool,
                 key_dir: Path | None, backend: str) -> tuple[RidgeSession, bool]:
    """The CSP's session: both key pairs reused from ``key_dir`` when it holds them (for the
    same parameters), else generated (and saved there, private keys 0600). Returns the session
    and whether the keys were reused."""
    if key_dir is not None:
        up, sp, pj = key_dir / "upload.key", key_dir / "solve.key", key_dir / "params.json"
        if up.exists() or sp.exists():
            if not (up.exists() and sp.exists() and pj.exists()):
                raise ConfigError(f"{key_dir} holds only part of a CSP key set (upload.key, solve.key, params.json)")
            try:
                saved = json.loads(read_input_text(pj, "CSP parameters file", max_bytes=1 << 20, error=ConfigError))
            except (json.JSONDecodeError, RecursionError):
                raise ConfigError(f"{pj} is unreadable") from None
            if saved != m.params_to_dict(params):
                raise ConfigError(f"{key_dir} holds keys made for other parameters; use another --key-dir")
            keys = []
            for path in (up, sp):
                sk = load_key(path, insecure_study_size=insecure_study_size)
                if not isinstance(sk, PrivateKey):
                    raise ConfigError(f"{path} holds no private key")
                keys.append((sk.public_key, sk))
            return RidgeSession.of_keys(params, RidgeKeys(keys[0], keys[1]), backend=backend), True
    session = RidgeSession.generate(params, upload_bits=upload_bits, solve_bits=solve_bits,
                                    insecure_study_size=insecure_study_size, backend=backend)
    session.csp  # noqa: B018 -- the CSP's checks refuse unusable keys before they are saved for reuse
    if key_dir is not None:
        _save_keys(session, key_dir, params)
    return session, False


def _save_keys(session: RidgeSession, key_dir: Path, params: RidgeParams) -> None:
    """Both key pairs (private keys 0600) and the parameters they were made for."""
    assert session.keys is not None
    private_dir(key_dir, "CSP key")
    try:
        for name, (pk, sk) in (("upload", session.keys.upload), ("solve", session.keys.solve)):
            save_key(sk, key_dir / f"{name}.key")
            save_key(pk, key_dir / f"{name}.pub")
        atomic_write(key_dir / "params.json", json.dumps(m.params_to_dict(params)))
    except OSError as exc:
        raise ConfigError(f"cannot write keys to {key_dir}: {exc.strerror}") from None


class CspService:
    """The CSP's HTTP face (module docstring)."""

    def __init__(self, csp: Csp, credentials: Credentials, store: CspStore) -> None:
        if PLATFORM not in credentials or BUYER not in credentials:
            raise ConfigError("the CSP needs the platform's and the buyer's credentials")
        self.csp = csp
        self.params = csp.params
        self.credentials = credentials
        self.info = SessionInfo(csp.params, csp.upload_pk, csp.solve_pk, credentials.hash_of(BUYER))
        self.plaintexts = upload_layout(csp.params, csp.upload_pk).plaintexts_needed(csp.params.value_count)
        self.store = store
        store.bind_session(csp.upload_pk.fingerprint.hex(), csp.solve_pk.fingerprint.hex())
        self._replay = ReplayGuard(store.has_message)
        self._lock = asyncio.Lock()
        d = self.params.d
        #: the largest message: an unpack request (one contribution per provider) or a solve request
        self.max_body = max(m.message_bytes(self.plaintexts * MAX_PROVIDERS, csp.upload_pk),
                            m.message_bytes(d * d + d, csp.solve_pk))
        up, sp = csp.upload_pk.fingerprint, csp.solve_pk.fingerprint
        self._expected = {m.COMMIT: up, m.UNPACK_REQUEST: up, m.SOLVE_REQUEST: sp, m.COEFFICIENTS_REQUEST: sp}
        self._handlers = {m.COMMIT: (PLATFORM, self._commit), m.UNPACK_REQUEST: (PLATFORM, self._unpack),
                          m.SOLVE_REQUEST: (PLATFORM, self._solve), m.COEFFICIENTS_REQUEST: (BUYER, self._coefficients)}

    def app(self) -> web.Application:
        app = _http.new_app(errors)
        _http.add_route(app, "GET", "/params", self._params)
        _http.add_route(app, "GET", "/status", self._status)
        _http.add_route(app, "POST", "/message", self._message, max_body=self.max_body)
        return app

    def state(self) -> str:
        for step, name in (("solve", "solved"), ("unpack", "unpacked"), ("commitment", "committed")):
            if self.store.step(step) is not None:
                return name
        return "ready"

    async def _params(self, request: web.Request) -> web.Response:
        return json_response(self.info.to_message("csp"))

    async def _status(self, request: web.Request) -> web.Response:
        """The state for anyone; the committed counts for the platform and the buyer only."""
        fields: Message = {"role": "csp", "state": self.state(), "solve_key": self.csp.solve_pk.fingerprint.hex()}
        if request.headers.get("Authorization") is not None:
            self.credentials.identify(request.headers.get("Authorization"))
            c = self.store.commitment() or {}
            fields.update(records=c.get("records"), uploads=c.get("uploads"), providers=c.get("providers"))
        return json_response(m.new_message(m.STATUS, self.csp.upload_pk.fingerprint, **fields))

    async def _message(self, request: web.Request) -> web.Response:
        role = self.credentials.identify(request.headers.get("Authorization"))  # before reading the body
        msg = await parse(await _http.read_body(request, self.max_body), self._expected)
        kind, mid = m.envelope(msg)
        allowed, handler = self._handlers[kind]
        allow(role, allowed, f"'{kind}'")
        self._replay.check(mid)
        await run(self.store.remember_message, mid, kind)
        return json_response(await handler(msg))

    # -- 1. the commitment --------------------------------------------------------------------
    def _commitment_of(self, msg: Message) -> Message:
        c: Message = {}
        for name in ("aggregate_sha256", "uploads_sha256"):
            v = msg.get(name)
            if not isinstance(v, str) or not _HEX64.fullmatch(v):
                raise ProtocolError(f"field {name!r} must be 64 lowercase hex digits", code="malformed")
            c[name] = v
        c["records"] = records = m.int_field(msg, "records", 1, self.params.max_records)
        c["uploads"] = uploads = m.int_field(msg, "uploads", 1, self.params.max_records)
        c["providers"] = providers = m.int_field(msg, "providers", 1, min(uploads, MAX_PROVIDERS))
        try:
            contributions = m.int_list_field(msg, "contributions", 1)
        except ProtocolError:
            contributions = []
        if len(contributions) != providers or sum(contributions) != records:
            raise ProtocolError("field 'contributions' must list each provider's records (>= 1), as many as "
                                "'providers', summing to 'records'", code="malformed")
        c["contributions"] = contributions
        if providers < self.params.min_providers:
            raise ProtocolError(f"{providers} provider(s) in the aggregate; a model needs at least "
                                f"{self.params.min_providers} (min_providers)", status=422, code="too_few_providers")
        return c

    async def _commit(self, msg: Message) -> Message:
        c = self._commitment_of(msg)
        text = json.dumps(c, sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()
        async with self._lock:
            prior = self.store.step("commitment")
            if prior is None:
                await run(self.store.spend, "commitment", digest, text)
                log.info("committed: %d records in %d uploads from %d providers", c["records"], c["uploads"],
                         c["providers"])
            elif prior.digest != digest:
                raise ProtocolError("this CSP session is already committed to another aggregate (one per key pair)",
                                    status=409, code="already_committed")
        return m.new_message(m.COMMITTED, self.csp.upload_pk.fingerprint, commitment=digest)

    # -- 2. the one unpack ----------------------------------------------------------------------
    async def _unpack(self, msg: Message) -> Message:
        batch = await run(m.decode_ciphertexts, msg.get("ciphertexts"), self.csp.upload_pk)
        commitment = self.store.commitment()
        if commitment is None:
            raise ProtocolError("no commitment yet: the platform commits to its aggregate before unpacking",
                                status=409, code="not_committed")
        if batch.digest != commitment["aggregate_sha256"]:
            raise ProtocolError("these ciphertexts are not the committed aggregate; nothing was spent", status=409,
                                code="not_committed")
        P, k = self.plaintexts, m.int_field(commitment, "providers", 1)
        if len(batch.values) != P * k:
            raise ProtocolError(f"expected {P * k} ciphertexts ({k} contributions), got {len(batch.values)}",
                                code="malformed")
        async with self._lock:
            prior = self.store.step("unpack")
            if prior is not None and prior.failed:
                raise ProtocolError("this aggregate already failed to unpack", status=409, code="already_unpacked")
            if prior is not None and prior.result is not None:
                answer = json.loads(prior.result)
                log.info("unpack request repeated: answered from the stored answer")
            else:
                if prior is None:
                    await run(self.store.spend, "unpack", batch.digest)
                answer = await self._split(batch.values, P, k)
        return m.new_message(m.UNPACK_RESPONSE, self.csp.solve_pk.fingerprint, ciphertexts=answer["ciphertexts"],
                             excluded=answer["excluded"], exclusion_proofs=answer["exclusion_proofs"],
                             request_digest=batch.digest)

    async def _split(self, values: list[int], P: int, k: int) -> Message:
        """The spent unpack itself: each contribution checked and the kept ones summed
        (:meth:`~.protocol.Csp.unpack_contributions`); the answer, or the failure, stored."""
        parts = [values[i * P:(i + 1) * P] for i in range(k)]
        try:
            unpacked = await run(self.csp.unpack_contributions, parts, self.params.min_providers)
        except (TooFewContributions, CryptoffloadError) as exc:
            await run(self.store.finish, "unpack", None, True)
            out = exc.excluded if isinstance(exc, TooFewContributions) else list(range(k))
            log.warning("unpack failed: %d of %d contributions overflowed their slots", len(out), k)
            raise ProtocolError(f"{len(out)} of {k} contributions do not unpack with this session's layout (not "
                                "masked by the platform, or overflowed): fewer than min_providers = "
                                f"{self.params.min_providers} left; this CSP session is spent", status=422,
                                code="unprocessable") from None
        fields, excluded = unpacked.fields, unpacked.excluded
        answer: Message = {"ciphertexts": m.encode_ciphertexts(fields, self.csp.solve_pk), "excluded": excluded,
                  "exclusion_proofs": m.exclusion_proofs_to_json(unpacked.proofs)}
        await run(self.store.finish, "unpack", json.dumps(answer))
        for i in excluded:
            log.warning("left out contribution %d of %d: its sums overflowed their slots", i, k)
        log.info("unpacked the committed aggregate: %d contributions (%d left out) -> %d fields under the solve key",
                 k, len(excluded), len(fields))
        return answer

    # -- 3. the one solve -----------------------------------------------------------------------
    async def _solve(self, msg: Message) -> Message:
        unpacked = self.store.step("unpack")
        if unpacked is None or unpacked.result is None:
            raise ProtocolError("nothing unpacked yet: the solve follows the unpack", status=409, code="not_unpacked")
        d = self.params.d
        batch = await run(m.decode_ciphertexts, msg.get("ciphertexts"), self.csp.solve_pk, count=d * d + d)
        async with self._lock:
            prior = self.store.step("solve")
            if prior is not None and prior.digest != batch.digest:
                raise ProtocolError("this CSP session has already solved another system (one per key pair)",
                                    status=409, code="already_solved")
            if prior is not None and prior.failed:
                raise ProtocolError("this system already failed: it is singular modulo n", status=409,
                                    code="already_solved")
            if prior is not None and prior.result is not None:
                log.info("solve request repeated: answered from the stored answer")
            else:
                if prior is None:
                    await run(self.store.spend, "solve", batch.digest)
                v = batch.values
                system = MaskedSystem(self.csp.solve_pk.fingerprint, [v[i * d:(i + 1) * d] for i in range(d)],
                                      v[d * d:])
                try:
                    solution = await run(self.csp.solve, system)
                except SingularMatrixError:
                    await run(self.store.finish, "solve", None, True)
                    raise
                await run(self.store.finish, "solve", json.dumps({"w_prime": m.ints_to_hex(solution.w_prime),
                                                                  "proof": m.ints_to_hex(solution.proof)}))
                log.info("solved a masked %dx%d system; w' and its proof kept for the buyer", d, d)
        return m.new_message(m.SOLVE_ACK, self.csp.solve_pk.fingerprint, system_digest=batch.digest)

    # -- 4. w' for the buyer ----------------------------------------------------------------------
    async def _coefficients(self, msg: Message) -> Message:
        solved = self.store.step("solve")
        if solved is None or solved.result is None:
            raise ProtocolError("no system has been solved yet: ask the platform to finalize first", status=409,
                                code="not_ready")
        if msg.get("system_digest") != solved.digest:
            raise ProtocolError("the solved system is not the one the platform named (system_digest differs)",
                                status=409, code="digest_mismatch")
        c = self.store.commitment() or {}
        unpacked = self.store.step("unpack")
        excluded = json.loads(unpacked.result)["excluded"] if unpacked is not None and unpacked.result else []
        kept = [r for i, r in enumerate(m.int_list_field(c, "contributions")) if i not in excluded]
        log.info("w' handed to the buyer")
        answer = json.loads(solved.result)
        return m.new_message(m.COEFFICIENTS, self.csp.solve_pk.fingerprint, w_prime=answer["w_prime"],
                             proof=answer["proof"], system_digest=solved.digest, records=sum(kept), uploads=c.get("uploads"),
                             providers=len(kept), uploads_sha256=c.get("uploads_sha256"), excluded=excluded)


def serve_csp(params: RidgeParams, *, host: str = "127.0.0.1", port: int = 0, upload_bits: int = 2048,
              solve_bits: int | None = None, insecure_study_size: bool = False, key_dir: Path | None = None,
              backend: str = "auto", tls_cert: Path | None = None, tls_key: Path | None = None,
              insecure_http: bool = False) -> None:
    """Run the CSP until SIGINT/SIGTERM. Secrets (tokens, a generated TLS key) go into
    ``key_dir``, or a new private folder whose path is printed and which is removed at exit
    (the keys die with the process then, and so does the session); never to stdout."""
    configure_logging()
    RidgeKeys.check_sizes(params, upload_bits, solve_bits, insecure_study_size=insecure_study_size)
    ctx = _http.tls_options(tls_cert, tls_key, insecure_http)
    sock = _http.bind(host, port)
    try:
        with secrets_folder(key_dir, "CSP key", "ridge-csp-") as folder:
            ctx = _http.tls_context(ctx, folder, host, insecure_http, "ridge csp")
            session, reused = _csp_session(params, upload_bits, solve_bits, insecure_study_size, key_dir, backend)
            credentials = csp_credentials(folder)
            store = CspStore(key_dir / "csp.db" if key_dir is not None else None)
            service = CspService(session.csp, credentials, store)
            print(f"ridge csp: tokens in {folder} (0600): platform.token for the platform, buyer.token for the "
                  "buyer", flush=True)
            print(f"ridge csp: {'reused' if reused else 'generated'} upload key {session.upload_pk.bits} bits, solve "
                  f"key {session.solve_pk.bits} bits; session fingerprint {service.info.fingerprint} (providers: "
                  "--csp-fingerprint)", flush=True)
            try:
                asyncio.run(serve_party(service.app(), sock, "csp", ctx))
            finally:
                store.close()
    finally:
        sock.close()

