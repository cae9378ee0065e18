"""A real nginx, started and stopped from Python, serving one folder in one of the modes of
Miyakawa et al.'s SmartNIC TLS paper (``papers.PAPERS["smartnic-tls"]``).

Why a real nginx and not a Python server: what that paper measures is where nginx's encryption
happens (OpenSSL in the worker, the kernel, or the NIC) and what it costs the worker; only the
real server with its ``sendfile``/``SSL_sendfile`` paths shows that.

Modes (what is *requested*; :func:`cryptoffload.apps.tls.detect.verify_mode` says what ran):

* ``plain``    -- HTTP, no TLS;
* ``tls``      -- HTTPS (TLS 1.3 and 1.2), OpenSSL encrypts in the worker (user space);
* ``ktls``     -- as ``tls`` plus ``ssl_conf_command Options KTLS;`` and ``sendfile on``, so
  OpenSSL hands the keys to the kernel and nginx sends files with ``SSL_sendfile``;
* ``ktls-nic`` -- the same configuration: whether the kernel then lets the NIC encrypt depends
  only on the NIC (``tls-hw-tx-offload``), not on nginx, so the mode differs in what is checked.

Everything nginx writes (pid file, logs, temporary files, key and certificate) lives in a
private temporary prefix folder (:mod:`.prefix`: key in a 0700 folder), removed on stop, and by
the next start if a SIGKILL prevented that. No nginx process outlives the server object:
nginx runs in its own process group, which :meth:`NginxServer.stop` empties (QUIT, then TERM,
then KILL); an ``atexit`` hook and a SIGTERM handler stop servers left running when Python
exits, and on Linux the master is also told to die with its parent.
"""

from __future__ import annotations

import atexit
import datetime
import errno
import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Callable, Literal, Optional, Union

from cryptoffload.apps.tls.prefix import TLS_DIR, create_prefix
from cryptoffload.procfs import CLK_TCK, all_pids, live_group_members, read_proc_stat
from cryptoffload.errors import BackendUnavailable, ConfigError
from cryptoffload.private_files import write_private
from cryptoffload.sim.smartnic import TLS_MODES, check_mode  # one definition, shared with the model

Mode = Literal["plain", "tls", "ktls", "ktls-nic"]

#: Where Debian's package puts nginx; tests monkeypatch this to simulate a machine without it.
NGINX_BINARY = "/usr/sbin/nginx"
NGINX_PACKAGE_HINT = "install the Debian package 'nginx' (apt-get install nginx)"

#: TLS versions ``protocols`` may name (nginx's ``ssl_protocols``; older ones are off in Debian's OpenSSL).
SSL_PROTOCOLS: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")
#: One access log line: fields without spaces first, the request (with spaces) quoted last.
ACCESS_LOG_FORMAT = '$msec $status $request_time $ssl_protocol $ssl_cipher $bytes_sent "$request"'
_ACCESS_RE = re.compile(r'^(\S+) (\d{3}) (\S+) (\S+) (\S+) (\d+) "(.*)"$')

#: How much of each log a stopped server keeps in memory.
KEPT_LOG_BYTES = 8 << 20


def find_nginx(binary: Optional[str] = None) -> str:
    """The nginx executable: ``binary``, else :data:`NGINX_BINARY`, else ``nginx`` on PATH.

    Raises :class:`BackendUnavailable` naming the Debian package, because a missing server is a
    property of the machine, not a bug.
    """
    candidates = [binary] if binary else [NGINX_BINARY, shutil.which("nginx")]
    for cand in candidates:
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    where = binary or NGINX_BINARY
    raise BackendUnavailable(f"nginx not found at {where} nor on PATH; {NGINX_PACKAGE_HINT}")


@dataclass(frozen=True)
class AccessEntry:
    """One request from nginx's access log: ``ssl_protocol`` is ``"-"`` when it had no TLS."""

    msec: float
    status: int
    request_time: float
    ssl_protocol: str
    ssl_cipher: str
    bytes_sent: int
    request: str


def parse_access_log(text: str) -> list[AccessEntry]:
    """Parse lines written with :data:`ACCESS_LOG_FORMAT` (other lines are skipped)."""
    out = []
    for line in text.splitlines():
        m = _ACCESS_RE.match(line.strip())
        if m:
            out.append(AccessEntry(float(m[1]), int(m[2]), float(m[3]), m[4], m[5], int(m[6]), m[7]))
    return out


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to TERM nginx's master if our process dies (even by
    SIGKILL, where no Python cleanup runs); TERM makes the master stop its workers too."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # pragma: no cover - not Linux / no libc: the other safeguards remain
        pass


# ---- cleanup of servers left running -----------------------------------------------------------
_LIVE: "set[NginxServer]" = set()
_LIVE_LOCK = threading.Lock()
#: the SIGTERM handler before ours (a callable one; None: the default)
_PREVIOUS_SIGTERM: Callable[[int, FrameType | None], object] | None = None
_HANDLER_INSTALLED = False


def _stop_all_live() -> None:
    """atexit: stop every server still running (an exception or sys.exit skipped __exit__)."""
    with _LIVE_LOCK:
        servers = list(_LIVE)
    for srv in servers:
        try:
            srv.stop()
        except Exception:  # pragma: no cover - best effort at interpreter exit
            pass


atexit.register(_stop_all_live)


def _on_sigterm(signum: int, frame: Optional[FrameType]) -> None:
    """SIGTERM would kill Python without unwinding, leaving nginx running: turn it into
    SystemExit so ``with`` blocks stop their servers (or chain to a handler set before ours)."""
    prev = _PREVIOUS_SIGTERM
    if callable(prev):
        _stop_all_live()
        prev(signum, frame)
        return
    raise SystemExit(128 + signum)


def _install_sigterm_handler() -> None:
    global _HANDLER_INSTALLED, _PREVIOUS_SIGTERM
    if _HANDLER_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    try:
        prev = signal.getsignal(signal.SIGTERM)
        if prev is signal.SIG_IGN:
            return  # someone chose to ignore SIGTERM; respect it
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # pragma: no cover - not allowed here
        return
    _PREVIOUS_SIGTERM = prev if callable(prev) else None
    _HANDLER_INSTALLED = True


def _restore_sigterm_handler() -> None:
    global _HANDLER_INSTALLED, _PREVIOUS_SIGTERM
    if not _HANDLER_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, _PREVIOUS_SIGTERM or signal.SIG_DFL)
    except (ValueError, OSError):  # pragma: no cover
        return
    _HANDLER_INSTALLED = False
    _PREVIOUS_SIGTERM = None


# ---- certificate -----------------------------------------------------------------------------
def write_self_signed(cert_path: Path, key_path: Path, host: str) -> None:
    """A fresh EC P-256 self-signed certificate for ``host``, 127.0.0.1, ::1 and localhost.

    It is its own CA (basicConstraints CA:TRUE, keyCertSign) so every client -- curl and
    Python (OpenSSL) as well as wget (GnuTLS) -- accepts it as the trust anchor given to it.
    The key file is a private file (:mod:`cryptoffload.private_files`): created 0600 before
    anything is written to it, never through a link, in a folder no other user can write.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cryptoffload test server")])
    sans: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                    x509.IPAddress(ipaddress.ip_address("::1"))]
    try:
        ip = ipaddress.ip_address(host)
        if x509.IPAddress(ip) not in sans:
            sans.append(x509.IPAddress(ip))
    except ValueError:
        if host != "localhost":
            sans.append(x509.DNSName(host))
    now = datetime.datetime.now(datetime.timezone.utc)
    pub = key.public_key()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(pub)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(pub), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(pub), critical=False)
            .sign(key, hashes.SHA256()))
    write_private(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()), "nginx TLS key", overwrite=False)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


# ---- ports -----------------------------------------------------------------------------------
def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def free_port(host: str = "127.0.0.1") -> int:
    """A port the kernel says is free on ``host`` now (nginx binds it a moment later)."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def check_port_free(host: str, port: int) -> None:
    """One-line :class:`ConfigError` naming the port when nginx could not listen on it.

    Checked before starting because nginx retries a busy port for 2.5 s and then fails with a
    multi-line log; SO_REUSEADDR as nginx sets it, so a closed connection in TIME_WAIT is fine.
    """
    try:
        with socket.socket(_family(host), socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} on {host} is already in use") from None
        if exc.errno == errno.EACCES:
            raise ConfigError(f"port {port} on {host} needs privileges to listen on") from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(ln.strip() for ln in text.splitlines()[-lines:] if ln.strip())


# ---- the server ------------------------------------------------------------------------------
class NginxServer:
    """nginx serving ``docroot`` in ``mode`` on ``host:port`` (port 0: a free loopback port).

    Use as a context manager (``with NginxServer("tls", root) as srv: fetch(srv.url + "f")``);
    :meth:`start`/:meth:`stop` are public for long-running callers (the interleaved bench keeps
    one server per mode running). ``workers`` worker processes; ``sendfile`` is forced on in
    the kTLS modes because kTLS pays off through ``SSL_sendfile``. ``debug_log`` writes nginx's
    debug log (its build has ``--with-debug``), whose ``BIO_get_ktls_send(): 1`` lines are
    nginx's own word that it handed a connection to kTLS; it slows nginx down, so it is off
    for measurements. ``protocols`` is nginx's ``ssl_protocols`` (the guest bench pins one TLS
    version per server: OpenSSL 3.0 hands TLS 1.2 both directions to the kernel, TLS 1.3 only TX).
    """

    def __init__(self, mode: str, docroot: Union[str, Path], port: int = 0, host: str = "127.0.0.1",
                 workers: int = 1, sendfile: bool = True, *, binary: Optional[str] = None,
                 start_timeout_s: float = 10.0, debug_log: bool = False, die_with_parent: bool = True,
                 protocols: str = "TLSv1.3 TLSv1.2") -> None:
        self.mode: str = check_mode(mode)
        if not protocols.split() or any(p not in SSL_PROTOCOLS for p in protocols.split()):
            raise ConfigError(f"protocols must be among {', '.join(SSL_PROTOCOLS)}, got {protocols!r}")
        self.protocols = protocols
        self.docroot = Path(docroot).resolve()
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ConfigError(f"port must be 0..65535, got {port!r}")
        if workers < 1:
            raise ConfigError(f"workers must be >= 1, got {workers}")
        self.host = host
        self.requested_port = port
        self.port = port
        self.workers = workers
        self.sendfile = sendfile or mode in ("ktls", "ktls-nic")
        self.binary = binary
        self.start_timeout_s = start_timeout_s
        self.debug_log = debug_log
        self.die_with_parent = die_with_parent
        self.prefix: Optional[Path] = None
        self._proc: Optional[subprocess.Popen[bytes]] = None
        self._final_access_log: Optional[str] = None
        self._final_error_log: Optional[str] = None

    # -- properties --------------------------------------------------------------------------
    @property
    def is_tls(self) -> bool:
        return self.mode in TLS_MODES

    @property
    def scheme(self) -> str:
        return "https" if self.is_tls else "http"

    @property
    def url(self) -> str:
        """Base URL ending in ``/`` (append a file name)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}/"

    @property
    def cert_path(self) -> Optional[Path]:
        """The server's self-signed certificate (PEM): give it to clients as their CA file."""
        return self._cert if self.is_tls and self.prefix is not None else None

    @property
    def _cert(self) -> Path:
        assert self.prefix is not None
        return self.prefix / "cert.pem"

    @property
    def master_pid(self) -> Optional[int]:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- configuration -----------------------------------------------------------------------
    def _check_docroot(self) -> None:
        root = self.docroot
        if not root.exists():
            raise ConfigError(f"document root {root} does not exist")
        if not root.is_dir():
            raise ConfigError(f"document root {root} is not a folder")
        if not os.access(root, os.R_OK | os.X_OK):
            raise ConfigError(f"document root {root} is not readable")

    def _user_directive(self) -> str:
        """Run as root, nginx drops its workers to ``nobody``, who cannot read a private (0700)
        docroot such as a pytest or mkdtemp folder; so the workers take the docroot owner's
        identity instead -- no more rights than whoever owns the files being served."""
        if os.geteuid() != 0:
            return ""  # nginx ignores "user" unless it starts as root
        import grp
        import pwd

        st = self.docroot.stat()
        try:
            user = pwd.getpwuid(st.st_uid).pw_name
            group = grp.getgrgid(st.st_gid).gr_name
        except KeyError:
            return ""
        return f"user {user} {group};\n"

    def config_text(self) -> str:
        """nginx.conf for this server (every path inside the prefix folder)."""
        assert self.prefix is not None
        p = self.prefix
        listen_host = f"[{self.host}]" if ":" in self.host else self.host
        ssl = ""
        if self.is_tls:
            ssl = (f"        ssl_certificate {p / 'cert.pem'};\n"
                   f"        ssl_certificate_key {p / TLS_DIR / 'key.pem'};\n"
                   f"        ssl_protocols {self.protocols};\n")
            if self.mode in ("ktls", "ktls-nic"):
                ssl += "        ssl_conf_command Options KTLS;\n"
        level = "debug" if self.debug_log else "notice"
        tmp = p / "tmp"
        return (
            "# generated by cryptoffload.apps.tls.nginx\n"
            "daemon off;\n"
            "master_process on;\n"
            f"{self._user_directive()}"
            f"worker_processes {self.workers};\n"
            f"pid {p / 'nginx.pid'};\n"
            f"error_log {p / 'logs' / 'error.log'} {level};\n"
            "events {\n    worker_connections 1024;\n}\n"
            "http {\n"
            "    default_type application/octet-stream;\n"
            f"    log_format cryptoffload '{ACCESS_LOG_FORMAT}';\n"
            # Requests without a User-Agent (wrk's load) are not logged: millions of lines would
            # fill the disk; curl, wget and urllib, whose requests are verified, always send one.
            "    map $http_user_agent $cryptoffload_log { \"\" 0; default 1; }\n"
            f"    access_log {p / 'logs' / 'access.log'} cryptoffload if=$cryptoffload_log;\n"
            f"    client_body_temp_path {tmp / 'body'};\n"
            f"    proxy_temp_path {tmp / 'proxy'};\n"
            f"    fastcgi_temp_path {tmp / 'fastcgi'};\n"
            f"    uwsgi_temp_path {tmp / 'uwsgi'};\n"
            f"    scgi_temp_path {tmp / 'scgi'};\n"
            f"    sendfile {'on' if self.sendfile else 'off'};\n"
            "    tcp_nopush on;\n"
            "    keepalive_timeout 65;\n"
            "    server {\n"
            f"        listen {listen_host}:{self.port}{' ssl' if self.is_tls else ''};\n"
            "        server_name localhost;\n"
            f"        root {self.docroot};\n"
            f"{ssl}"
            "        location / { }\n"
            "    }\n"
            "}\n")

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> "NginxServer":
        self.start()
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.stop()

    def start(self) -> "NginxServer":
        """Write the prefix folder, start nginx and wait until its port answers."""
        if self._proc is not None:
            raise RuntimeError("server already started")
        binary = find_nginx(self.binary)
        self._check_docroot()
        if self.requested_port:
            check_port_free(self.host, self.requested_port)
        self.prefix = create_prefix()  # first removes the folders of servers whose owner was killed
        try:
            if self.is_tls:
                write_self_signed(self._cert, self.prefix / TLS_DIR / "key.pem", self.host)
            attempts = 1 if self.requested_port else 3
            for attempt in range(attempts):
                if not self.requested_port:
                    self.port = free_port(self.host)
                try:
                    self._launch(binary)
                    break
                except _PortRace:
                    if attempt == attempts - 1:
                        raise ConfigError(f"port {self.port} on {self.host} is already in use") from None
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, binary: str) -> None:
        assert self.prefix is not None
        conf = self.prefix / "nginx.conf"
        conf.write_text(self.config_text(), encoding="utf-8")
        stderr_path = self.prefix / "logs" / "stderr.log"
        # Fresh logs per attempt: a failed attempt's "Address already in use" must not be
        # mistaken for the reason of the next one.
        (self.prefix / "logs" / "error.log").unlink(missing_ok=True)
        with open(stderr_path, "wb") as err:
            proc = subprocess.Popen(
                [binary, "-p", f"{self.prefix}/", "-c", str(conf), "-e", str(self.prefix / "logs" / "error.log")],
                stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True,
                preexec_fn=_die_with_parent if self.die_with_parent else None)
        self._proc = proc
        with _LIVE_LOCK:
            _LIVE.add(self)
        _install_sigterm_handler()
        deadline = time.monotonic() + self.start_timeout_s
        pid_file = self.prefix / "nginx.pid"
        while True:
            if proc.poll() is not None:
                tail = self._error_tail()
                self._reap_group()
                self._proc = None
                if "Address already in use" in tail and not self.requested_port:
                    raise _PortRace()
                if "Address already in use" in tail:
                    raise ConfigError(f"port {self.port} on {self.host} is already in use")
                raise ConfigError(f"nginx exited with code {proc.returncode} while starting "
                                  f"({self.mode} on {self.host}:{self.port}): {tail or 'no message'}")
            # The listening socket accepts before the master has forked its workers; wait for
            # them too, so pids() and the CPU accounting see every worker from the first request.
            if pid_file.exists() and self._answers() and len(self.worker_pids()) >= self.workers:
                return
            if time.monotonic() > deadline:
                tail = self._error_tail()
                self.stop()
                raise ConfigError(f"nginx did not answer on {self.host}:{self.port} within "
                                  f"{self.start_timeout_s:g} s: {tail or 'no message'}")
            time.sleep(0.02)

    def _answers(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def _error_tail(self) -> str:
        if self.prefix is None:
            return ""
        parts = [_tail(self.prefix / "logs" / "stderr.log"), _tail(self.prefix / "logs" / "error.log")]
        return " | ".join(p for p in parts if p)

    def stop(self, quit_timeout_s: float = 5.0) -> None:
        """Stop nginx (graceful QUIT, then TERM, then KILL) and remove the prefix folder.

        The last :data:`KEPT_LOG_BYTES` of the access and error logs are kept first, so
        :meth:`access_entries` still answers (for the latest requests, after a long wrk run).
        Safe to call twice and from the atexit hook.
        """
        proc = self._proc
        if proc is not None:
            if proc.poll() is None:
                for sig, wait_s in ((signal.SIGQUIT, quit_timeout_s), (signal.SIGTERM, 2.0)):
                    try:
                        os.kill(proc.pid, sig)
                        proc.wait(timeout=wait_s)
                        break
                    except subprocess.TimeoutExpired:
                        continue
                    except ProcessLookupError:
                        break
                if proc.poll() is None:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    proc.wait()
            self._reap_group()
            self._proc = None
        with _LIVE_LOCK:
            _LIVE.discard(self)
            empty = not _LIVE
        if empty:
            _restore_sigterm_handler()
        if self.prefix is not None:
            self._final_access_log = self._read_log("access.log", KEPT_LOG_BYTES)
            self._final_error_log = self._read_log("error.log", KEPT_LOG_BYTES)
            shutil.rmtree(self.prefix, ignore_errors=True)
            self.prefix = None

    def _reap_group(self) -> None:
        """Kill whatever is left in nginx's process group (workers of a master that died)."""
        if self._proc is None:
            return
        pgid = self._proc.pid
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            left = live_group_members(pgid)
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    # -- introspection -----------------------------------------------------------------------
    def pids(self) -> list[int]:
        """The master and its worker processes (empty once stopped)."""
        master = self.master_pid
        if master is None or not self.running:
            return []
        return [master] + self.worker_pids()

    def worker_pids(self) -> list[int]:
        master = self.master_pid
        if master is None:
            return []
        out = []
        for pid in all_pids():
            st = read_proc_stat(pid)
            if st is not None and st.ppid == master and st.state != "Z":
                out.append(pid)
        return sorted(out)

    def worker_cpu_seconds(self) -> float:
        """User + system CPU of the worker processes so far (``/proc/<pid>/stat``).

        System time matters here: with kTLS the kernel encrypts inside the worker's
        ``sendfile`` call, so it shows up as the worker's stime. Resolution is one clock tick
        (usually 10 ms): sum over many requests before dividing.
        """
        total = 0
        for pid in self.worker_pids():
            st = read_proc_stat(pid)
            if st is not None:
                total += st.utime + st.stime
        return total / CLK_TCK

    def worker_cpu_ns(self) -> Optional[int]:
        """CPU time of the workers in nanoseconds from ``/proc/<pid>/schedstat`` (None where the
        kernel lacks it) -- the same quantity as :meth:`worker_cpu_seconds` without the 10 ms
        tick, so small-file requests do not round to zero."""
        total = 0
        for pid in self.worker_pids():
            try:
                with open(f"/proc/{pid}/schedstat", encoding="ascii") as fh:
                    total += int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                return None
        return total

    def _read_log(self, name: str, max_bytes: Optional[int] = None) -> str:
        """The log's text, or only its last ``max_bytes`` (a wrk run logs millions of lines)."""
        if self.prefix is None:
            return ""
        try:
            with open(self.prefix / "logs" / name, "rb") as fh:
                if max_bytes is not None:
                    size = fh.seek(0, os.SEEK_END)
                    fh.seek(max(0, size - max_bytes))
                    data = fh.read()
                    if size > max_bytes:  # drop the partial first line
                        data = data[data.find(b"\n") + 1:]
                else:
                    data = fh.read()
            return data.decode("utf-8", errors="replace")
        except OSError:
            return ""

    def access_log_text(self) -> str:
        return self._read_log("access.log") if self.prefix is not None else (self._final_access_log or "")

    def error_log_text(self) -> str:
        return self._read_log("error.log") if self.prefix is not None else (self._final_error_log or "")

    def access_entries(self) -> list[AccessEntry]:
        """Requests served so far (also after :meth:`stop`)."""
        return parse_access_log(self.access_log_text())

    def ktls_debug_evidence(self) -> Optional[dict[str, int]]:
        """nginx's own account from its debug log (None without ``debug_log``):
        ``ktls_send`` counts ``BIO_get_ktls_send(): 1`` (a connection handed to kTLS),
        ``ssl_sendfile`` counts ``SSL_sendfile`` calls and ``ssl_write`` the ``SSL_write``
        calls that encrypt in user space."""
        if not self.debug_log:
            return None
        text = self.error_log_text()
        return {"ktls_send": text.count("BIO_get_ktls_send(): 1"),
                "ssl_sendfile": len(re.findall(r"\bSSL_sendfile: ", text)),
                "ssl_write": len(re.findall(r"\bSSL_write: ", text))}

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"NginxServer({self.mode!r}, {str(self.docroot)!r}, {self.url}, {state})"


class _PortRace(Exception):
    """The free port picked for port=0 was taken before nginx bound it: pick another."""


def serve_until_interrupted(server: NginxServer, on_ready: Callable[[NginxServer], None]) -> bool:
    """Run ``server`` until Ctrl-C or SIGTERM, for ``cryptoffload tls serve``.

    Returns True when interrupted, False when nginx ended on its own; either way the server is
    stopped on return. SIGTERM is turned into the same path as Ctrl-C so the caller can still
    report what was served.
    """
    def _interrupt(signum: int, frame: Optional[FrameType]) -> None:
        raise KeyboardInterrupt

    is_main = threading.current_thread() is threading.main_thread()
    prev = signal.signal(signal.SIGTERM, _interrupt) if is_main else None
    interrupted = False
    try:
        with server:
            on_ready(server)
            try:
                while server.running:
                    time.sleep(0.2)
            except KeyboardInterrupt:
                interrupted = True
    finally:
        if is_main:
            signal.signal(signal.SIGTERM, prev if prev is not None else signal.SIG_DFL)
    return interrupted
