"""Mutual TLS for every Dask cluster the project starts or joins: per-run certificates for a
local cluster, the user's certificate files for a remote one, and the one rule for which
scheduler addresses are accepted.

Why: a Dask scheduler (and each worker and nanny) runs whatever pickled function a peer sends
it. A plain ``tcp://`` cluster lets any process that reaches its port run code as the study's
user -- and read the secrets in its memory (the CSP's private factor, through the scheduler).
With ``distributed.Security`` and ``require_encryption=True`` every listener of the cluster
speaks only TLS and requires a client certificate signed by the cluster's CA (Dask sets
``CERT_REQUIRED`` both ways and skips host names: a dedicated CA is the identity), so a
peer without the credentials is refused at the handshake, before a byte of Dask is read.

The credentials are three PEM files, one set shared by the scheduler, the workers and the
clients of one cluster (Dask has no per-role authorisation: a worker may submit work anyway):

* ``ca.pem`` -- the cluster's CA certificate. Its key is discarded once the leaf is signed, so
  no one, the holder of the folder included, can mint another identity; to rotate, make a new
  folder and hand it out.
* ``cert.pem`` / ``key.pem`` -- the leaf every member presents (ECDSA P-256, 128-bit; server
  and client use).

A local cluster (:class:`RunCredentials` with :func:`new_pems`) gets a fresh set per run, in a
0700 folder (files 0600) that also holds the workers' scratch space (spilled task data) and is
removed when the runner closes -- or, after a SIGKILL, by the next run (:mod:`cryptoffload.owned_tmp`).
A remote cluster's set comes from ``--dask-credentials DIR`` (:func:`read_credentials`: owned
by you, the key readable by you alone, never read through a link), is checked now (a wrong
or expired file is one line, not a 5 s TLS timeout later) and copied into such a folder for
the run, so Dask never re-opens the user's paths. ``cryptoffload dask credentials --out DIR``
writes a set for a real cluster (:func:`write_credentials`; the recipe is in
``docs/engines.md``).

A plain ``tcp://`` scheduler is refused (:func:`scheduler_credentials`) unless the caller opts
in with ``--insecure-plain-tcp-scheduler``, whose name and help say what it exposes.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import ssl
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cryptoffload.owned_tmp import owned_temp_dir
from cryptoffload.private_files import private_dir, read_private
from cryptoffload.errors import ConfigError, OutputError
from cryptoffload.io import PRIVATE, atomic_write

if TYPE_CHECKING:   # cryptography and distributed are imported where they are used
    from cryptography import x509 as x509_types
    from cryptography.hazmat.primitives.asymmetric import ec as ec_types
    from distributed import Security

__all__ = ["CA_FILE", "CERT_FILE", "CREDENTIALS_FLAG", "INSECURE_FLAG", "INSECURE_HELP", "KEY_FILE", "LOCAL_DAYS",
           "MAX_DAYS", "Pems", "RunCredentials", "new_pems", "read_credentials",
           "scheduler_credentials", "write_credentials"]

CA_FILE, CERT_FILE, KEY_FILE = "ca.pem", "cert.pem", "key.pem"
#: a PEM file of ours is ~0.6 KiB; a CA bundle a user names may be larger
MAX_PEM_BYTES = 256 * 1024
#: validity of a local cluster's certificates (they die with the run's folder anyway)
LOCAL_DAYS = 7
MAX_DAYS = 3650
RUN_PREFIX = "cryptoffload-dask-"
CREDENTIALS_FLAG = "--dask-credentials"
INSECURE_FLAG = "--insecure-plain-tcp-scheduler"
INSECURE_HELP = ("Accept a plain tcp:// --scheduler (no TLS, no authentication): anyone who can reach its port "
                 "runs code as you and reads your keys.")
_MAKE = "make a set with `cryptoffload dask credentials --out DIR` (docs/engines.md)"


@dataclass(frozen=True)
class Pems:
    """One cluster's credentials as PEM bytes: the CA certificate(s), the leaf certificate and
    its private key (never in a repr)."""

    ca: bytes
    cert: bytes
    key: bytes = field(repr=False)


def new_pems(days: int = LOCAL_DAYS) -> Pems:
    """A fresh CA and one leaf it signed, valid for ``days``; the CA's key is discarded here."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = _dt.datetime.now(_dt.timezone.utc)
    start, end = now - _dt.timedelta(minutes=5), now + _dt.timedelta(days=days)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cryptoffload Dask CA")])
    leaf_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cryptoffload Dask member")])

    def builder(subject: x509_types.Name, key: ec_types.EllipticCurvePrivateKey) -> x509_types.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end))

    ca = (builder(ca_name, ca_key).add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (builder(leaf_name, leaf_key).add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return Pems(ca.public_bytes(pem), leaf.public_bytes(pem),
                leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


# -- the user's files ---------------------------------------------------------------------------

def read_credentials(folder: str | os.PathLike[str]) -> Pems:
    """The credentials in ``folder`` (``ca.pem``, ``cert.pem``, ``key.pem``), their owner and
    modes checked by the rule of every secret (:mod:`cryptoffload.private_files`: ours, not
    through a link, the key 0600, the certificates not writable by others, in a 0700 folder of
    ours under folders only we or root can write), then their content: PEM that parses, a key
    without a passphrase that matches the certificate, a certificate in its validity period
    and issued by a certificate of ``ca.pem`` (or one beside it in ``cert.pem``)."""
    path = Path(folder)
    private_dir(path, f"{CREDENTIALS_FLAG} (Dask TLS credentials)", create=False)
    pems = Pems(read_private(path / CA_FILE, "Dask TLS CA certificate", max_bytes=MAX_PEM_BYTES, readable=True),
                read_private(path / CERT_FILE, "Dask TLS certificate", max_bytes=MAX_PEM_BYTES, readable=True),
                read_private(path / KEY_FILE, "Dask TLS key", max_bytes=MAX_PEM_BYTES))
    _check_content(pems, path)
    return pems


def _load_certs(data: bytes, path: Path) -> list[x509_types.Certificate]:
    from cryptography import x509

    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError:
        certs = []
    if not certs:
        raise ConfigError(f"{path} holds no PEM certificate; {_MAKE}")
    return certs


def _check_content(pems: Pems, folder: Path) -> None:
    from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    anchors = _load_certs(pems.ca, folder / CA_FILE)
    leaf, *chain = _load_certs(pems.cert, folder / CERT_FILE)
    try:
        key = serialization.load_pem_private_key(pems.key, password=None)
    except TypeError:
        raise ConfigError(f"{folder / KEY_FILE} is protected by a passphrase, which Dask cannot give; "
                          f"{_MAKE}") from None
    except (ValueError, UnsupportedAlgorithm):   # the error never quotes the key
        raise ConfigError(f"{folder / KEY_FILE} holds no PEM private key; {_MAKE}") from None
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    try:
        leaf_key = leaf.public_key().public_bytes(*spki)
    except (ValueError, UnsupportedAlgorithm):   # a damaged or foreign curve point in the certificate
        raise ConfigError(f"{folder / CERT_FILE} holds a certificate whose public key cannot be read; {_MAKE}") from None
    if key.public_key().public_bytes(*spki) != leaf_key:
        raise ConfigError(f"{folder / KEY_FILE} is not the key of {folder / CERT_FILE}; {_MAKE}")
    now = _dt.datetime.now(_dt.timezone.utc)
    if not leaf.not_valid_before_utc <= now <= leaf.not_valid_after_utc:
        raise ConfigError(f"{folder / CERT_FILE} is valid from {leaf.not_valid_before_utc:%Y-%m-%d %H:%M} to "
                          f"{leaf.not_valid_after_utc:%Y-%m-%d %H:%M} UTC, not now; {_MAKE}")
    for issuer in [*chain, *anchors]:
        try:
            leaf.verify_directly_issued_by(issuer)
            return
        except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):   # a CA whose key cannot
            continue                                                              # have signed this leaf
    raise ConfigError(f"{folder / CERT_FILE} was not issued by {folder / CA_FILE}; both must come from one "
                      f"`cryptoffload dask credentials` run")


def write_credentials(folder: str | os.PathLike[str], days: int = 365) -> Path:
    """A new set of credentials for a real cluster in ``folder`` (made 0700 if missing; an
    existing one must be yours and closed to others, and hold none of the three files): the
    files 0600, written atomically, never over an existing file. Returns the folder."""
    path = Path(folder)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise ConfigError(f"--days must be a whole number of days in 1..{MAX_DAYS}, got {days!r}")
    try:
        if not os.path.lexists(path):
            path.mkdir(mode=0o700, parents=True)
        st = path.lstat()
    except OSError as exc:
        raise OutputError(f"cannot create the credentials folder {path}: {exc.strerror or exc}; "
                          "choose another --out") from None
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"--out {path} is not a folder (a link or a file); choose a new folder")
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise OutputError(f"--out {path} is open to others or not yours (mode {stat.S_IMODE(st.st_mode):04o}, "
                          f"uid {st.st_uid}); choose a new folder, or run: chmod 700 {path}")
    taken = [n for n in (CA_FILE, CERT_FILE, KEY_FILE) if os.path.lexists(path / n)]
    if taken:
        raise OutputError(f"--out {path} already holds {', '.join(taken)}; choose a new folder (credentials "
                          "are never overwritten)")
    pems = new_pems(days)
    for name, data in ((CA_FILE, pems.ca), (CERT_FILE, pems.cert), (KEY_FILE, pems.key)):
        atomic_write(path / name, data, mode=PRIVATE, overwrite=False)
    return path


# -- which schedulers are accepted -----------------------------------------------------------------

def scheduler_credentials(address: str | None, credentials: str | os.PathLike[str] | Pems | None,
                          insecure_plain_tcp: bool = False) -> Pems | None:
    """The credentials to join ``address`` (a :func:`~.dask.parse_scheduler` result, ``None``
    for a local cluster) with: a folder's read and checked now (:func:`read_credentials`),
    :class:`Pems` (this function's earlier answer) as they are; ``None`` where none are used (a
    local cluster makes its own, ``inproc://`` never leaves the process, an opted-in ``tcp://``).
    Refuses (one line, naming the fix): ``tls://`` without ``credentials``, ``tcp://`` without
    ``insecure_plain_tcp``, and either option where it does not apply."""
    scheme, _, rest = (address or "").partition("://")
    if insecure_plain_tcp and scheme != "tcp":
        where = f"the scheduler {address}" if address else "a local cluster (always TLS)"
        raise ConfigError(f"{INSECURE_FLAG} applies to a tcp:// --scheduler only, not to {where}; leave it out")
    if scheme == "tls":
        if credentials is None:
            raise ConfigError(f"the Dask scheduler {address} needs the cluster's TLS credentials: pass "
                              f"{CREDENTIALS_FLAG} DIR (holding {CA_FILE}, {CERT_FILE}, {KEY_FILE}); {_MAKE}")
        return credentials if isinstance(credentials, Pems) else read_credentials(credentials)
    if credentials is not None:
        if scheme == "tcp":
            raise ConfigError(f"{CREDENTIALS_FLAG} needs a TLS scheduler: did you mean --scheduler tls://{rest}?")
        where = f"the scheduler {address}" if address else "a local cluster, which makes its own per-run certificates"
        raise ConfigError(f"{CREDENTIALS_FLAG} is for a --scheduler tls://HOST:PORT, not for {where}; leave it out")
    if scheme == "tcp" and not insecure_plain_tcp:
        raise ConfigError(f"refusing the plain tcp:// Dask scheduler {address}: anyone who can reach its port runs "
                          f"code as you and reads your keys; start the cluster with TLS and pass --scheduler "
                          f"tls://{rest} {CREDENTIALS_FLAG} DIR (docs/engines.md), or accept the risk with "
                          f"{INSECURE_FLAG}")
    return None


# -- one run's copy ------------------------------------------------------------------------------

class RunCredentials:
    """One runner's credentials in a folder of its own: ``<tmp>/cryptoffload-dask-XXXX`` (0700,
    its owner recorded), the three files 0600 and ``scratch/`` for the local workers' spilled
    data. :meth:`close` removes it all; a run killed before closing is swept by the next."""

    def __init__(self, pems: Pems) -> None:
        self.folder = owned_temp_dir(RUN_PREFIX)
        try:
            for name, data in ((CA_FILE, pems.ca), (CERT_FILE, pems.cert), (KEY_FILE, pems.key)):
                _write_private(self.folder / name, data)
            self.scratch.mkdir(mode=0o700)
        except BaseException:
            self.close()
            raise

    @property
    def scratch(self) -> Path:
        return self.folder / "scratch"

    def security(self) -> Security:
        """A ``distributed.Security`` for every role (scheduler, worker, client): mutual TLS
        1.3 with this folder's files, encryption required on every connection."""
        from distributed import Security

        ca, cert, key = (str(self.folder / n) for n in (CA_FILE, CERT_FILE, KEY_FILE))
        return Security(require_encryption=True, tls_ca_file=ca, tls_min_version=ssl.TLSVersion.TLSv1_3,
                        tls_client_cert=cert, tls_client_key=key, tls_scheduler_cert=cert, tls_scheduler_key=key,
                        tls_worker_cert=cert, tls_worker_key=key)

    def close(self) -> None:
        """Remove the folder (idempotent)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def _write_private(path: Path, data: bytes) -> None:
    """``data`` into a new file (0600 from creation; never over a file or through a link). No
    fsync: the file lives as long as this run."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
