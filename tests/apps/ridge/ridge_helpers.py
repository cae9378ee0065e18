"""Helpers shared by the ridge party tests: servers as subprocesses, raw HTTP, messages.

Small sizes keep the tests fast on two shared cores: d = 4, a 1024-bit upload key at study
size, the automatic 2048-bit solve key. Results are compared with ``run_in_process`` on the
same data: the protocol is exact (the coefficients are fractions), so the comparison is
equality of fractions, not a tolerance."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from cli_helpers import run_cli

import numpy as np

from cryptoffload.apps._credentials import Credentials, new_token, token_hash
from cryptoffload.apps._http import ServerThread
from cryptoffload.apps.ridge import RidgeParams, run_in_process
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.csp import CspService
from cryptoffload.apps.ridge.csp_store import CspStore
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.params import upload_layout
from cryptoffload.apps.ridge.platform import FAULT_ENV, PlatformService
from cryptoffload.apps.ridge.protocol import Csp, Provider
from cryptoffload.apps.ridge.store import PlatformStore
from cryptoffload.apps.ridge.tokens import TOKEN_ENV
from cryptoffload.crypto.paillier import ENCRYPTION
from cryptoffload.workloads.ridge_data import generate

def env(**extra: str) -> dict[str, str]:
    e = {**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    e.pop(FAULT_ENV, None)
    e.pop(TOKEN_ENV, None)
    e.update(extra)
    return e


def cli(cwd: Path, *args: str, env_: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return run_cli(cwd, *args, env=env_ or env(), timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, body: bytes | dict | None = None, token: str | None = None, method: str | None = None,
         cafile: Path | None = None) -> tuple[int, dict[str, Any]]:
    """GET (no body) or POST; returns (status, JSON answer) for 2xx and 4xx alike."""
    data = m.dumps(body) if isinstance(body, dict) else body
    req = urllib.request.Request(url, data=data, method=method or ("GET" if data is None else "POST"))
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    ctx = ssl.create_default_context(cafile=str(cafile)) if cafile is not None else None
    try:
        with urllib.request.urlopen(req, timeout=60, context=ctx) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def csp_args(d: int = 4, max_records: int = 1000, port: int = 0, *extra: str) -> list[str]:
    """A CSP for the tests of one provider (prov-A): ``--min-providers 1``."""
    return ["csp", "--port", str(port), "--d", str(d), "--max-records", str(max_records), "--upload-bits", "1024",
            "--insecure-study-size", "--min-providers", "1", *extra]


def platform_args(csp_url: str, db: Path, csp_key_dir: Path, token_dir: Path, port: int = 0,
                  *extra: str) -> list[str]:
    return ["platform", "--port", str(port), "--csp", csp_url, "--db", str(db), "--csp-token-file",
            str(csp_key_dir / "platform.token"), "--providers", "prov-A", "--token-dir", str(token_dir), *extra]


def in_process(X: np.ndarray, y: np.ndarray, params: RidgeParams, keys: tuple, **kw: Any) -> list[str]:
    res = run_in_process(X, y, params, upload_keys=keys[0], solve_keys=keys[1], **kw)
    return [str(f) for f in res.fractions]


def no_process_mentions(text: str) -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                return False
        except OSError:
            continue
    return True


PLATFORM_TOKEN, BUYER_TOKEN = new_token("platform"), new_token("buyer")
PROVIDERS = {"alice": new_token("alice"), "bob": new_token("bob"), "carol": new_token("carol")}


class Parties:
    """A CSP and a platform served from threads of this process (plain http on loopback: the
    tests of TLS are elsewhere), with known tokens. ``d`` = 4, study-size upload key."""

    def __init__(self, tmp: Path, keys: tuple, max_records: int = 1000, max_upload_vectors: int = 64,
                 min_providers: int = 2, max_records_per_provider: int | None = None) -> None:
        self.tmp = tmp
        self.params = RidgeParams(d=4, max_records=max_records, y_bound=10.0, min_providers=min_providers)
        self.csp_service = CspService(Csp(self.params, keys[0], keys[1]), csp_credentials_for_tests(),
                                      CspStore(tmp / "csp.db"))
        self.csp_thread = ServerThread(self.csp_service.app)
        self.csp = self.csp_thread.start()
        self.info = self.csp_service.info
        self.store = PlatformStore(tmp / "platform.db")
        self.store.bind_session(self.info.upload_pk.fingerprint.hex(), self.info.solve_pk.fingerprint.hex(),
                                m.params_to_dict(self.params))
        providers = Credentials({name: token_hash(tok) for name, tok in PROVIDERS.items()})
        self.platform_service = PlatformService(self.info, self.csp, PLATFORM_TOKEN, self.store, providers,
                                                insecure_http=True, max_upload_vectors=max_upload_vectors,
                                                max_records_per_provider=max_records_per_provider)
        self.platform_thread = ServerThread(self.platform_service.app)
        self.platform = self.platform_thread.start()

    def stop(self) -> None:
        self.platform_thread.stop()
        self.csp_thread.stop()
        self.store.close()
        self.csp_service.store.close()

    def snapshot(self) -> tuple:
        """Everything a refused request must leave as it was: the platform's database and
        status, the CSP's steps."""
        st = self.store.load()
        steps = tuple(self.csp_service.store.step(s) for s in ("commitment", "unpack", "solve"))
        return (st.aggregates, st.totals, st.bytes, (st.uploads, self.store.uploads_digest()), st.finalize.state, steps,
                http(self.platform + "/status", token=BUYER_TOKEN)[1]["records"])


def csp_credentials_for_tests() -> Credentials:
    return Credentials({"platform": token_hash(PLATFORM_TOKEN), "buyer": token_hash(BUYER_TOKEN)})


def upload_message(info: SessionInfo, records: int = 5, seed: int = 11, upload_id: str = "alice:1",
                   provider_id: str = "alice") -> dict[str, Any]:
    data = generate(records, info.params.d, seed)
    data.y[:] = np.clip(data.y, -info.params.y_bound, info.params.y_bound)
    up = next(Provider(info.params, info.upload_pk).per_record(data.X, data.y))
    return m.new_message(m.UPLOAD, info.upload_pk.fingerprint, upload_id=upload_id, provider_id=provider_id,
                         vectors=up.vectors, records=up.records,
                         ciphertexts=m.encode_ciphertexts(up.ciphertexts, info.upload_pk))


def hostile_bodies(info: SessionInfo) -> dict[str, bytes]:
    """Bodies that once made the parser raise something other than a JSON error (issue 22,
    item 5): a 5,000-digit integer in a well-formed envelope, deep nesting, invalid UTF-8,
    NaN, another top-level type."""
    envelope = m.dumps(upload_message(info, upload_id="alice:h1"))
    return {"huge integer": envelope[:-1] + b',"big":' + b"9" * 5000 + b"}",
            "deep nesting": b"[" * 5000 + b"]" * 5000,
            "invalid UTF-8": envelope[:-1] + b',"note":"\xc3\x28"}',
            "NaN": envelope[:-1] + b',"nan":NaN}',
            "an array": b"[" + envelope + b"]"}


def overflow_message(info: SessionInfo, upload_id: str = "carol:all", provider_id: str = "carol") -> dict[str, Any]:
    """A malicious per-provider upload (issue 22): one record's worth whose first packed value
    is far beyond its slot (into the check bits once masked), encrypted as a provider would."""
    layout = upload_layout(info.params, info.upload_pk)
    values = [0] * info.params.value_count
    values[0] = 1 << (layout.slot_bits - 1)
    packed = [v % info.upload_pk.n for v in layout._pack_unchecked(values)]
    cts = ENCRYPTION.encryptor(info.upload_pk).encrypt_raw(packed)
    return m.new_message(m.UPLOAD, info.upload_pk.fingerprint, upload_id=upload_id, provider_id=provider_id,
                         vectors=1, records=1, ciphertexts=m.encode_ciphertexts(cts, info.upload_pk))


def records_now(url: str, token: str | None = None) -> int:
    """The platform's record total, as the buyer sees it (no token: no counts)."""
    status, msg = http(url + "/status", token=token or BUYER_TOKEN)
    assert status == 200
    return msg["records"]


def self_signed(tmp: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM), made with `cryptography`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path
