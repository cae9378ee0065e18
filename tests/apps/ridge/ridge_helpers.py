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
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from cli_helpers import run_cli

import numpy as np

from cryptoffload.apps.ridge import RidgeParams, run_in_process
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.demo import ServerProcess
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.platform import FAULT_ENV
from cryptoffload.apps.ridge.protocol import Provider
from cryptoffload.apps.ridge.tokens import TOKEN_ENV
from cryptoffload.workloads.ridge_data import generate

TOKEN = "test-buyer-token-0123456789"


def env(**extra: str) -> dict[str, str]:
    e = {**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "200", "PYTHONUNBUFFERED": "1", TOKEN_ENV: TOKEN}
    e.pop(FAULT_ENV, None)
    e.update(extra)
    return e


def cli(cwd: Path, *args: str, env_: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return run_cli(cwd, *args, env=env_ or env(), timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, body: bytes | dict | None = None, token: str | None = None) -> tuple[int, dict[str, Any]]:
    """GET (no body) or POST; returns (status, JSON answer) for 2xx and 4xx alike."""
    data = m.dumps(body) if isinstance(body, dict) else body
    req = urllib.request.Request(url, data=data, method="GET" if data is None else "POST")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def csp_args(d: int = 4, max_records: int = 1000, port: int = 0, *extra: str) -> list[str]:
    return ["csp", "--port", str(port), "--d", str(d), "--max-records", str(max_records), "--upload-bits", "1024",
            "--insecure-study-size", *extra]


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


class Servers:
    """A CSP and a platform as subprocesses (``python -m cryptoffload.cli ridge ...``)."""

    def __init__(self, tmp: Path) -> None:
        self.procs: list[ServerProcess] = []
        self.procs.append(ServerProcess("CSP", csp_args(), env()))
        self.csp = self.procs[0].wait_url(60)
        self.procs.append(ServerProcess("platform", ["platform", "--port", "0", "--csp", self.csp, "--db",
                                                     str(tmp / "platform.db")], env()))
        self.platform = self.procs[1].wait_url(60)
        status, msg = http(self.platform + "/params")
        assert status == 200
        self.info = SessionInfo.from_message(msg)

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.stop()


def upload_message(info: SessionInfo, records: int = 5, seed: int = 11, upload_id: str = "u-1") -> dict[str, Any]:
    data = generate(records, info.params.d, seed)
    up = next(Provider(info.params, info.upload_pk).per_record(data.X, data.y))
    return m.new_message(m.UPLOAD, info.upload_pk.fingerprint, upload_id=upload_id, provider_id="test",
                         vectors=up.vectors, records=up.records,
                         ciphertexts=m.encode_ciphertexts(up.ciphertexts, info.upload_pk))


def records_now(s: Servers) -> int:
    status, msg = http(s.platform + "/status")
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
