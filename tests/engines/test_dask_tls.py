"""Dask TLS credentials: what new_pems makes (checked with ``cryptography`` and by a real TLS
handshake between two ``ssl`` contexts), what write_credentials writes, every way a
--dask-credentials folder is refused (links, owners, modes, content), which scheduler
addresses are accepted with which options, and one run's private copy."""

from __future__ import annotations

import datetime as dt
import os
import socket
import ssl
import stat
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from cryptoffload.engines import dask_tls
from cryptoffload.engines.dask_tls import (CA_FILE, CERT_FILE, KEY_FILE, Pems, RunCredentials,
                                           new_pems, read_credentials, scheduler_credentials, write_credentials)
from cryptoffload.errors import ConfigError, OutputError

NAMES = (CA_FILE, CERT_FILE, KEY_FILE)


def _write(folder: Path, pems: Pems) -> Path:
    folder.mkdir(mode=0o700)
    for name, data in zip(NAMES, (pems.ca, pems.cert, pems.key)):
        (folder / name).write_bytes(data)
        (folder / name).chmod(0o600)
    return folder


@pytest.fixture
def creds(tmp_path: Path) -> Path:
    return write_credentials(tmp_path / "creds")


# -- what is made -------------------------------------------------------------------------------

def test_new_pems_a_ca_that_signed_one_leaf() -> None:
    pems = new_pems(3)
    ca = x509.load_pem_x509_certificate(pems.ca)
    leaf = x509.load_pem_x509_certificate(pems.cert)
    key = serialization.load_pem_private_key(pems.key, password=None)
    leaf.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"   # 128-bit
    assert key.public_key().public_numbers() == leaf.public_key().public_numbers()
    life = leaf.not_valid_after_utc - dt.datetime.now(dt.timezone.utc)
    assert dt.timedelta(days=2, hours=23) < life <= dt.timedelta(days=3)
    assert "key=" not in repr(pems) and pems.key.decode() not in repr(pems)   # the key never shows in a repr
    other = new_pems()
    assert other.ca != pems.ca and other.key != pems.key          # a fresh CA every time
    with pytest.raises(Exception):
        x509.load_pem_x509_certificate(other.cert).verify_directly_issued_by(ca)


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> None:
    """A TLS handshake over a socket pair; raises the side's SSLError if it fails."""
    a, b = socket.socketpair()
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            with server.wrap_socket(a, server_side=True) as s:
                s.recv(1)
        except (ssl.SSLError, OSError) as exc:
            errors.append(exc)

    t = threading.Thread(target=serve)
    t.start()
    try:
        with client.wrap_socket(b) as c:
            c.sendall(b"x")
            c.recv(1)      # TLS 1.3: the server's verdict on our certificate arrives after the handshake
    except (ssl.SSLError, OSError) as exc:
        errors.append(exc)
    t.join(10)
    if errors:
        raise errors[0]


def test_the_contexts_dask_builds_accept_the_cluster_and_refuse_another_ca(tmp_path: Path) -> None:
    mine = RunCredentials(new_pems())
    theirs = RunCredentials(new_pems())
    try:
        sec, other = mine.security(), theirs.security()
        server = sec.get_listen_args("scheduler")["ssl_context"]
        _handshake(server, sec.get_connection_args("client")["ssl_context"])
        with pytest.raises((ssl.SSLError, OSError)):
            _handshake(server, other.get_connection_args("client")["ssl_context"])
        assert server.verify_mode == ssl.CERT_REQUIRED and server.minimum_version == ssl.TLSVersion.TLSv1_3
    finally:
        mine.close()
        theirs.close()


def test_write_credentials_private_files_never_overwritten(tmp_path: Path) -> None:
    folder = write_credentials(tmp_path / "a" / "creds", days=30)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in NAMES:
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert sorted(os.listdir(folder)) == sorted(NAMES)
    read_credentials(folder)
    before = (folder / KEY_FILE).read_bytes()
    with pytest.raises(OutputError, match="already holds ca.pem, cert.pem, key.pem; choose a new folder"):
        write_credentials(folder)
    assert (folder / KEY_FILE).read_bytes() == before


@pytest.mark.parametrize("days", [0, -1, 3651, True, 1.5])
def test_write_credentials_refuses_bad_days_and_writes_nothing(tmp_path: Path, days: object) -> None:
    with pytest.raises(ConfigError, match="--days"):
        write_credentials(tmp_path / "c", days)  # type: ignore[arg-type]
    assert not (tmp_path / "c").exists()


def test_write_credentials_refuses_an_open_folder_or_a_file(tmp_path: Path) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    open_dir.chmod(0o755)
    with pytest.raises(OutputError, match="open to others"):
        write_credentials(open_dir)
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="cannot create the credentials folder"):
        write_credentials(tmp_path / "f" / "sub")
    with pytest.raises(OutputError, match="not a folder"):
        write_credentials(tmp_path / "f")
    assert os.listdir(open_dir) == []


# -- what is accepted ------------------------------------------------------------------------------

def test_read_credentials_round_trip(creds: Path) -> None:
    pems = read_credentials(creds)
    assert pems.ca == (creds / CA_FILE).read_bytes() and pems.key == (creds / KEY_FILE).read_bytes()


def test_a_key_through_a_link_is_refused(creds: Path, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.pem"
    (creds / KEY_FILE).rename(real)
    (creds / KEY_FILE).symlink_to(real)
    with pytest.raises(ConfigError, match="is a symbolic link .*give the file itself"):
        read_credentials(creds)


@pytest.mark.parametrize("name, mode, fix", [(KEY_FILE, 0o640, "chmod 600"), (KEY_FILE, 0o604, "chmod 600"),
                                             (CERT_FILE, 0o664, "chmod 644"), (CA_FILE, 0o646, "chmod 644")])
def test_files_open_to_others_are_refused(creds: Path, name: str, mode: int, fix: str) -> None:
    (creds / name).chmod(mode)
    with pytest.raises(ConfigError) as info:
        read_credentials(creds)
    assert f"run: {fix} {creds / name}" in str(info.value) and f"{mode:04o}" in str(info.value)


def test_public_files_may_be_readable(creds: Path) -> None:
    for name in (CA_FILE, CERT_FILE):
        (creds / name).chmod(0o644)
    (creds / KEY_FILE).chmod(0o400)
    read_credentials(creds)


def test_a_folder_others_may_write_is_refused(creds: Path) -> None:
    creds.chmod(0o777)
    with pytest.raises(ConfigError, match="open to others .*run: chmod 700"):
        read_credentials(creds)
    creds.chmod(0o755)                    # it holds a key: the rule of every key folder, 0700
    with pytest.raises(ConfigError, match="open to others .*run: chmod 700"):
        read_credentials(creds)
    creds.chmod(0o700)
    read_credentials(creds)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's needs root")
@pytest.mark.parametrize("target", [KEY_FILE, CA_FILE, "."])
def test_files_planted_by_another_user_are_refused(creds: Path, target: str) -> None:
    """Root in a container: a folder or file another uid made (with the right modes) is not ours."""
    os.chown(creds / target, 4242, 4242)
    with pytest.raises(ConfigError, match="belongs to uid 4242, not to you"):
        read_credentials(creds)


@pytest.mark.parametrize("missing", NAMES)
def test_a_missing_file_is_named(creds: Path, missing: str) -> None:
    (creds / missing).unlink()
    with pytest.raises(ConfigError, match=missing):
        read_credentials(creds)


def test_a_fifo_or_a_folder_in_place_of_a_file_is_refused(creds: Path) -> None:
    (creds / KEY_FILE).unlink()
    os.mkfifo(creds / KEY_FILE, 0o600)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_credentials(creds)
    with pytest.raises(ConfigError, match="is not a folder"):
        read_credentials(creds / CA_FILE)


def test_mismatched_or_damaged_content_is_refused(tmp_path: Path) -> None:
    a, b = new_pems(), new_pems()
    cases = {"key_of_another": (Pems(a.ca, a.cert, b.key), "is not the key of"),
             "cert_of_another_ca": (Pems(a.ca, b.cert, b.key), "was not issued by"),
             "garbage_cert": (Pems(a.ca, b"not a pem", a.key), "holds no PEM certificate"),
             "garbage_key": (Pems(a.ca, a.cert, b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
                             "holds no PEM private key")}
    for name, (pems, message) in cases.items():
        with pytest.raises(ConfigError, match=message) as info:
            read_credentials(_write(tmp_path / name, pems))
        assert b"AAAA" not in str(info.value).encode() and "PRIVATE" not in str(info.value)


def test_a_passphrase_key_is_refused(tmp_path: Path) -> None:
    pems = new_pems()
    key = serialization.load_pem_private_key(pems.key, password=None)
    locked = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.BestAvailableEncryption(b"secret-pass"))
    with pytest.raises(ConfigError, match="protected by a passphrase"):
        read_credentials(_write(tmp_path / "c", Pems(pems.ca, pems.cert, locked)))


def test_an_expired_certificate_is_refused(tmp_path: Path) -> None:
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "old")])
    past = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)

    def cert(pub: object) -> x509.Certificate:
        return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(pub)  # type: ignore[arg-type]
                .serial_number(1).not_valid_before(past).not_valid_after(past + dt.timedelta(days=1))
                .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    pems = Pems(cert(ca_key.public_key()).public_bytes(pem), cert(key.public_key()).public_bytes(pem),
                key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with pytest.raises(ConfigError, match="valid from 2020-01-01 00:00 to 2020-01-02 00:00 UTC, not now"):
        read_credentials(_write(tmp_path / "c", pems))


# -- which schedulers ------------------------------------------------------------------------------

def test_scheduler_rules(creds: Path) -> None:
    assert scheduler_credentials(None, None) is None
    assert scheduler_credentials("inproc://x/1", None) is None
    assert scheduler_credentials("tcp://h:8786", None, True) is None
    pems = scheduler_credentials("tls://h:8786", creds)
    assert isinstance(pems, Pems) and scheduler_credentials("tls://h:8786", pems) is pems
    refused = {
        ("tcp://h:8786", None, False): "refusing the plain tcp:// Dask scheduler tcp://h:8786: anyone who can reach",
        ("tcp://h:8786", creds, False): "did you mean --scheduler tls://h:8786",
        ("tls://h:8786", None, False): "needs the cluster's TLS credentials",
        ("tls://h:8786", creds, True): "applies to a tcp:// --scheduler only",
        (None, creds, False): "not for a local cluster, which makes its own per-run certificates",
        (None, None, True): "not to a local cluster",
        ("inproc://x/1", creds, False): "not for the scheduler inproc://x/1",
    }
    for (address, folder, insecure), message in refused.items():
        with pytest.raises(ConfigError, match=message) as info:
            scheduler_credentials(address, folder, insecure)
        assert "\n" not in str(info.value)


# -- one run's copy ---------------------------------------------------------------------------------

def test_run_credentials_private_copy_removed_on_close() -> None:
    pems = new_pems()
    run = RunCredentials(pems)
    folder = run.folder
    assert stat.S_IMODE(folder.lstat().st_mode) == 0o700 and folder.lstat().st_uid == os.geteuid()
    for name, data in zip(NAMES, (pems.ca, pems.cert, pems.key)):
        assert (folder / name).read_bytes() == data and stat.S_IMODE((folder / name).lstat().st_mode) == 0o600
    pid, _ = (folder / ".owner").read_text().split()
    assert int(pid) == os.getpid()
    sec = run.security()
    assert sec.require_encryption and sec.tls_client_key == str(folder / KEY_FILE)
    run.close()
    run.close()
    assert not folder.exists()
