"""The crypto service provider (CSP) as an HTTP server.

It makes both key pairs (private keys never leave the process; with ``--key-dir`` they are
saved 0600 and reused on restart), publishes the parameters and public keys
(``GET /params``), splits and re-encrypts one masked aggregate, solves one masked system and
hands w' only to a caller presenting the buyer token. Why "one": a CSP that decrypted whatever
it is sent would be a decryption oracle for anyone who can reach it (a captured provider
upload, unmasked, would come back field by field). So a key pair serves one session: the
first aggregate (and the first system) is processed, an identical retry is answered from a
cache, anything else is refused with 409.

The buyer token: the CSP publishes only a hash of it (``buyer_token_sha256`` in its
parameters); the platform checks the buyer's ``finalize`` and ``mask_request`` against that
hash, the CSP its ``coefficients_request``. So w' goes only to the buyer, and so do R, r.
Logs never contain private keys or plaintexts.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from pathlib import Path
from typing import Any

from aiohttp import web

from cryptoffload.apps import _http
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import ProtocolError, SessionInfo
from cryptoffload.apps.ridge.params import RidgeParams, check_solve_key, required_solve_key_bits, upload_layout
from cryptoffload.apps.ridge.protocol import Csp, MaskedSystem
from cryptoffload.apps.ridge.server import ReplayGuard, configure_logging, errors, json_response, log, run, serve_party
from cryptoffload.apps.ridge.tokens import TOKEN_ENV, check_token, read_buyer_token, token_hash
from cryptoffload.crypto.paillier import MIN_SECURE_KEY_BITS, PrivateKey, PublicKey, generate_keypair, load_key, save_key
from cryptoffload.errors import ConfigError, CryptoffloadError


def _csp_keys(params: RidgeParams, upload_bits: int, solve_bits: int | None, insecure_study_size: bool,
              key_dir: Path | None) -> tuple[tuple[PublicKey, PrivateKey], tuple[PublicKey, PrivateKey], bool]:
    """Both key pairs: reused from ``key_dir`` when it holds them (for the same parameters),
    else generated (and saved there, private keys 0600). Returns (upload, solve, reused)."""
    if key_dir is not None:
        up, sp, pj = key_dir / "upload.key", key_dir / "solve.key", key_dir / "params.json"
        if up.exists() or sp.exists():
            if not (up.exists() and sp.exists() and pj.exists()):
                raise ConfigError(f"{key_dir} holds only part of a CSP key set (upload.key, solve.key, params.json)")
            try:
                saved = json.loads(pj.read_text())
            except (OSError, json.JSONDecodeError):
                raise ConfigError(f"{pj} is unreadable") from None
            if saved != m.params_to_dict(params):
                raise ConfigError(f"{key_dir} holds keys made for other parameters; use another --key-dir")
            keys = []
            for path in (up, sp):
                sk = load_key(path, insecure_study_size=insecure_study_size)
                if not isinstance(sk, PrivateKey):
                    raise ConfigError(f"{path} holds no private key")
                keys.append((sk.public_key, sk))
            return keys[0], keys[1], True
    upload = generate_keypair(upload_bits, insecure_study_size=insecure_study_size)
    bits = solve_bits if solve_bits is not None else max(MIN_SECURE_KEY_BITS, required_solve_key_bits(params))
    solve = generate_keypair(bits, insecure_study_size=insecure_study_size)
    upload_layout(params, upload[0])  # refuse unusable keys before saving them for reuse
    check_solve_key(params, solve[0])
    if key_dir is not None:
        try:
            key_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            save_key(upload[1], key_dir / "upload.key")
            save_key(upload[0], key_dir / "upload.pub")
            save_key(solve[1], key_dir / "solve.key")
            save_key(solve[0], key_dir / "solve.pub")
            (key_dir / "params.json").write_text(json.dumps(m.params_to_dict(params)))
        except OSError as exc:
            raise ConfigError(f"cannot write keys to {key_dir}: {exc.strerror}") from None
    return upload, solve, False


class CspService:
    """The crypto service provider's HTTP face (module docstring)."""

    def __init__(self, csp: Csp, token_sha256: str) -> None:
        self.csp = csp
        self.params = csp.params
        self.info = SessionInfo(csp.params, csp.upload_pk, csp.solve_pk, token_sha256)
        self.plaintexts = upload_layout(csp.params, csp.upload_pk).plaintexts_needed(csp.params.value_count)
        self._replay = ReplayGuard()
        self._lock = asyncio.Lock()
        self._unpacked: tuple[str, str | None] | None = None  # (request digest, response batch or failed)
        self._solved: tuple[str, list[int]] | None = None  # (system digest, w')
        self._solve_failed: str | None = None  # digest of a system that could not be solved
        up, sp = csp.upload_pk.fingerprint, csp.solve_pk.fingerprint
        self._expected = {m.UNPACK_REQUEST: up, m.SOLVE_REQUEST: sp, m.COEFFICIENTS_REQUEST: sp}
        self._handlers = {m.UNPACK_REQUEST: self._unpack, m.SOLVE_REQUEST: self._solve,
                          m.COEFFICIENTS_REQUEST: self._coefficients}

    def app(self) -> web.Application:
        app = web.Application(middlewares=[errors], client_max_size=m.MAX_BODY_BYTES)
        app.router.add_get("/params", self._params)
        app.router.add_get("/status", self._status)
        app.router.add_post("/message", self._message)
        return app

    async def _params(self, request: web.Request) -> web.Response:
        return json_response(self.info.to_message("csp"))

    async def _status(self, request: web.Request) -> web.Response:
        state = "solved" if self._solved else "unpacked" if self._unpacked else "ready"
        return json_response(m.new_message(m.STATUS, self.csp.upload_pk.fingerprint, role="csp", state=state,
                                   solve_key=self.csp.solve_pk.fingerprint.hex()))

    async def _message(self, request: web.Request) -> web.Response:
        msg = m.parse_message(await request.read(), self._expected)
        self._replay.check(msg["message_id"])
        return json_response(await self._handlers[msg["type"]](msg, request))

    async def _unpack(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        batch = await run(m.decode_ciphertexts, msg.get("ciphertexts"), self.csp.upload_pk, count=self.plaintexts)
        async with self._lock:
            if self._unpacked is not None:
                digest, cached = self._unpacked
                if digest != batch.digest:
                    raise ProtocolError("this CSP session has already unpacked another aggregate (one per key pair)",
                                        status=409, code="already_unpacked")
                if cached is None:
                    raise ProtocolError("this aggregate already failed to unpack", status=409, code="already_unpacked")
                text = cached
                log.info("unpack request repeated: answered from cache")
            else:
                # the one use is spent even if unpacking fails: a failure says something about
                # the decrypted values, so it must not be repeatable with variations
                self._unpacked = (batch.digest, None)
                try:
                    fields = await run(self.csp.split_and_reencrypt, batch.values)
                except CryptoffloadError:
                    raise ProtocolError("the aggregate does not unpack with this session's layout (not masked by "
                                        "the platform, or overflowed); this CSP session is spent", status=422,
                                        code="unprocessable") from None
                text = m.encode_ciphertexts(fields, self.csp.solve_pk)
                self._unpacked = (batch.digest, text)
                log.info("unpacked a masked aggregate: %d ciphertexts -> %d fields under the solve key",
                         len(batch.values), len(fields))
        return m.new_message(m.UNPACK_RESPONSE, self.csp.solve_pk.fingerprint, ciphertexts=text,
                             request_digest=batch.digest)

    async def _solve(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        d = self.params.d
        batch = await run(m.decode_ciphertexts, msg.get("ciphertexts"), self.csp.solve_pk, count=d * d + d)
        async with self._lock:
            if self._solved is not None or self._solve_failed is not None:
                if (self._solved[0] if self._solved else self._solve_failed) != batch.digest:
                    raise ProtocolError("this CSP session has already solved another system (one per key pair)",
                                        status=409, code="already_solved")
                if self._solved is None:
                    raise ProtocolError("this system already failed: it is singular modulo n", status=409,
                                        code="already_solved")
                log.info("solve request repeated: answered from cache")
            else:
                v = batch.values
                system = MaskedSystem(self.csp.solve_pk.fingerprint, [v[i * d:(i + 1) * d] for i in range(d)], v[d * d:])
                self._solve_failed = batch.digest  # spent even on failure (as for unpacking)
                w_prime = await run(self.csp.solve, system)
                self._solve_failed = None
                self._solved = (batch.digest, w_prime)
                log.info("solved a masked %dx%d system; w' kept for the buyer", d, d)
        return m.new_message(m.SOLVE_ACK, self.csp.solve_pk.fingerprint, system_digest=batch.digest)

    async def _coefficients(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        check_token(request.headers.get("Authorization"), self.info.buyer_token_sha256)
        if self._solved is None:
            raise ProtocolError("no system has been solved yet: ask the platform to finalize first", status=409,
                                code="not_ready")
        digest, w_prime = self._solved
        if msg.get("system_digest") != digest:
            raise ProtocolError("the solved system is not the one the platform named (system_digest differs)",
                                status=409, code="digest_mismatch")
        log.info("w' handed to the buyer")
        return m.new_message(m.COEFFICIENTS, self.csp.solve_pk.fingerprint, w_prime=m.ints_to_hex(w_prime),
                             system_digest=digest)



def serve_csp(params: RidgeParams, *, host: str = "127.0.0.1", port: int = 0, upload_bits: int = 2048,
              solve_bits: int | None = None, insecure_study_size: bool = False, key_dir: Path | None = None,
              token_file: Path | None = None, backend: str = "auto", tls_cert: Path | None = None,
              tls_key: Path | None = None) -> None:
    """Run the CSP until SIGINT/SIGTERM."""
    configure_logging()
    ctx = _http.server_ssl(tls_cert, tls_key)
    sock = _http.bind(host, port)
    upload, solve, reused = _csp_keys(params, upload_bits, solve_bits, insecure_study_size, key_dir)
    csp = Csp(params, upload, solve, backend=backend)
    token = read_buyer_token(token_file)
    if token is None:
        token = secrets.token_urlsafe(32)
        if key_dir is not None and (key_dir / "buyer.token").exists():
            token = read_buyer_token(key_dir / "buyer.token") or token
        elif key_dir is not None:
            key_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(key_dir / "buyer.token", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(token + "\n")
            print(f"buyer token written to {key_dir / 'buyer.token'} (0600); give it to the buyer", flush=True)
        else:
            print(f"buyer token: {token}  (give it to the buyer: {TOKEN_ENV} or --buyer-token-file)", flush=True)
    service = CspService(csp, token_hash(token))
    print(f"ridge csp: {'reused' if reused else 'generated'} upload key {upload[0].bits} bits "
          f"({upload[0].fingerprint.hex()}), solve key {solve[0].bits} bits ({solve[0].fingerprint.hex()})", flush=True)
    try:
        asyncio.run(serve_party(service.app(), sock, "csp", ctx))
    finally:
        sock.close()
