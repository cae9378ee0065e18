"""The whole ridge protocol on this machine: CSP and platform as subprocesses, providers and
the buyer in this process, the model checked against scikit-learn.

The servers are real ``cryptoffload ridge csp|platform`` processes on free loopback ports, so
every message crosses a real socket; both are stopped on return, on error, on Ctrl-C and on
SIGTERM, and get SIGTERM themselves if the demo dies (Linux).

Wiring: the demo makes no party itself. The CSP and the platform wire theirs from a
:class:`~.session.RidgeSession` (the CSP's from its keys, the platform's from ``GET /params``),
and so do the providers (:func:`~.provider.run_provider`); the demo asks the session's rules
what they will make -- its parameters are those the CSP's command line builds
(:func:`~.params.session_params`), its key sizes are checked by :meth:`RidgeKeys.check_sizes`
-- so a bad size is refused before any server starts, by the rule the CSP follows.
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import shutil
import subprocess
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from cryptoffload.apps import _http
from cryptoffload.owned_tmp import owned_temp_dir
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.buyer import BuyerResult, run_buyer
from cryptoffload.apps.ridge.accuracy import expected_bound
from cryptoffload.apps.ridge.params import RidgeParams, error_bound, session_params
from cryptoffload.apps.ridge.peer import Peer, client_session
from cryptoffload.apps.ridge.platform import FAULT_ENV
from cryptoffload.apps.ridge.protocol import check_upload_mode
from cryptoffload.apps.ridge.provider import ProgressHook, ProviderReport, load_data_spec, run_provider
from cryptoffload.apps.ridge.server import READY_MARK
from cryptoffload.apps.ridge.session import RidgeKeys
from cryptoffload.apps.ridge.tokens import TOKEN_ENV, read_token
from cryptoffload.checks import JsonDict, check_int
from cryptoffload.crypto.paillier import MIN_SECURE_KEY_BITS
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import RidgeData, generate


def _death_signal_hook() -> Callable[[], None] | None:
    """Linux: a ``preexec_fn`` that makes the child get SIGTERM when the demo dies, even by
    SIGKILL (no orphaned servers). libc is resolved here, in the parent: between fork and
    exec the child must not import or allocate (another thread may hold a lock)."""
    if sys.platform != "linux":
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig, sigterm = 1, int(signal.SIGTERM)

    def hook() -> None:  # pragma: no cover - runs in the child
        prctl(pr_set_pdeathsig, sigterm)
    return hook


class ServerProcess:
    """A ``cryptoffload ridge csp|platform`` subprocess whose output is drained by a thread
    (so its pipe never fills) and kept (the last lines) for error messages."""

    def __init__(self, name: str, args: Sequence[str], env: Mapping[str, str]) -> None:
        self.name = name
        self.lines: deque[str] = deque(maxlen=200)
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen([sys.executable, "-m", "cryptoffload.cli", "ridge", *args], env=dict(env),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, preexec_fn=_death_signal_hook())
        self._thread = threading.Thread(target=self._drain, name=f"{name}-output", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def last_line(self) -> str:
        for line in reversed(self.lines):
            if line.strip():
                return line.strip()
        return "no output"

    def wait_url(self, timeout: float) -> str:
        """The URL from the server's "listening on" line."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConfigError(f"the {self.name} did not start within {timeout:g} s (last output: {self.last_line()})")
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.proc.wait()
                text = self.last_line()
                raise ConfigError(f"the {self.name} exited with status {self.proc.returncode} at start: "
                                  f"{text[7:] if text.startswith('error: ') else text}")
            if READY_MARK in line:
                return line.split(READY_MARK, 1)[1].strip()

    def stop(self, timeout: float = 5.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(timeout=2)


async def wait_ready(url: str, role: str, cafile: Path | None = None, insecure_http: bool = False,
                     timeout: float = 30.0) -> None:
    """Until ``GET /status`` answers."""
    async with client_session(cafile) as session:
        peer = Peer(session, url, role, insecure_http=insecure_http)
        await _http.retrying(lambda: peer.get("/status", m.STATUS), timeout)


@dataclass
class DemoResult:
    coef: np.ndarray
    sklearn: np.ndarray
    bound: float
    #: Z_MARGIN standard deviations of the largest coefficient's expected fixed-point error
    #: (accuracy.expected_bound): what a correct run's per-coefficient error stays within;
    #: ``bound`` is the guaranteed worst case, typically hundreds of times looser
    expected: float
    records: int
    params: RidgeParams
    timings: dict[str, float]
    providers: list[ProviderReport]
    buyer: BuyerResult
    upload_bits: int

    @property
    def abs_diff(self) -> np.ndarray:
        """|ours - scikit-learn's| per coefficient."""
        return np.abs(self.coef - self.sklearn)

    @property
    def max_abs_diff(self) -> float:
        return float(self.abs_diff.max()) if len(self.coef) else 0.0

    @property
    def l2_diff(self) -> float:
        return float(np.linalg.norm(self.coef - self.sklearn))

    @property
    def within_expected(self) -> bool:
        """The demo's verdict: the largest difference from scikit-learn is within the
        fixed-point error expected of a correct run (not merely the worst-case bound)."""
        return self.max_abs_diff <= self.expected

    def to_dict(self) -> JsonDict:
        return {"coef": [float(v) for v in self.coef], "sklearn": [float(v) for v in self.sklearn],
                "max_abs_diff": self.max_abs_diff, "l2_diff": self.l2_diff, "error_bound": self.bound,
                "expected_error": self.expected,
                "records": self.records, "params": m.params_to_dict(self.params), "timings": self.timings,
                "fractions": [str(f) for f in self.buyer.model.fractions],
                "uploads": sum(p.uploads for p in self.providers), "upload_bits": self.upload_bits}


def demo_data(records: int, d: int, data: str | None, seed: int) -> RidgeData:
    if data is None:
        return generate(records, d, seed)
    if data.startswith("csv:"):
        return load_data_spec(data)
    return load_data_spec(data, d if data.startswith("generate") and "d=" not in data else None)


def run_demo(*, records: int = 1000, d: int = 20, providers: int = 1, mode: str = "per-record",
             data: str | None = None, seed: int = 1, lam: float = 1.0, frac_bits: int = 16, stat_bits: int = 40,
             upload_bits: int = 2048, insecure_study_size: bool = False, batch: int = 1000,
             workdir: Path | None = None, insecure_http: bool = False,
             make_progress: Callable[[int], ProgressHook] | None = None,
             say: Callable[[str], None] = lambda s: None) -> DemoResult:
    """The whole protocol on this machine: CSP and platform as subprocesses on free loopback
    ports, ``providers`` providers (each a contiguous part of the data) and the buyer here.

    Every link is TLS unless ``insecure_http``: a self-signed certificate made for this run
    (valid for a day), which every client trusts. The certificate's key, the CSP's keys and
    every token live in a private temporary folder (0700, files 0600) removed at the end; only
    the platform database goes to ``workdir`` when one is given. Both servers are stopped on
    return, on error, on Ctrl-C and on SIGTERM."""
    check_upload_mode(mode)
    if isinstance(providers, bool) or not isinstance(providers, int) or providers < 1:
        raise ConfigError(f"--providers must be a positive integer, got {providers!r}")
    rd = demo_data(records, d, data, seed)
    if providers > rd.n:
        raise ConfigError(f"{providers} providers for {rd.n} records: each provider needs at least one record")
    # the demo plays every party: with one provider it may buy that provider's model (a real
    # CSP refuses fewer than --min-providers, 2 by default)
    params = session_params(d=rd.d, max_records=rd.n, x_bound=rd.x_bound, y_bound=rd.y_bound, lam=lam,
                            frac_bits=frac_bits, stat_bits=stat_bits, min_providers=min(2, providers))
    RidgeKeys.check_sizes(params, upload_bits, insecure_study_size=insecure_study_size)
    check_int("--batch", batch)
    if workdir is not None and (workdir / "platform.db").exists():
        raise ConfigError(f"{workdir / 'platform.db'} exists: the demo starts a fresh session (remove it or pick "
                          "another --workdir)")
    sk, bound, expected = _references(rd, params, lam)
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    secret = owned_temp_dir("ridge-demo-")  # 0700, removed at exit (or at the next start if killed)
    try:
        demo = _DemoParties(params, [f"provider-{k + 1}" for k in range(providers)], secret, workdir or secret,
                            upload_bits, insecure_study_size and upload_bits < MIN_SECURE_KEY_BITS, insecure_http)
        with _servers_stopped_on_exit() as servers:
            csp_url, platform_url = demo.start_servers(servers, timings)
            say(f"CSP at {csp_url}, platform at {platform_url}")
            reports, buyer = asyncio.run(demo.clients(csp_url, platform_url, rd, mode, batch, make_progress, timings))
    finally:
        shutil.rmtree(secret, ignore_errors=True)
    timings["total"] = time.perf_counter() - t_all
    return DemoResult(buyer.model.coef, np.asarray(sk), bound, expected, rd.n, params, timings, reports, buyer, upload_bits)


def _references(rd: RidgeData, params: RidgeParams, lam: float) -> tuple[np.ndarray, float, float]:
    """scikit-learn's coefficients on the same data, the guaranteed worst-case error bound and
    the error a correct run is expected to stay within."""
    from sklearn.linear_model import Ridge

    sk = Ridge(alpha=lam, fit_intercept=False).fit(rd.X, rd.y).coef_
    bound = error_bound(rd.X, rd.y, params)
    _, expected = expected_bound(rd.X.T @ rd.X, rd.X.T @ rd.y, rd.n, params.scale, lam)
    return sk, bound, expected


@contextmanager
def _servers_stopped_on_exit() -> Iterator[list[ServerProcess]]:
    """A list to start servers into; every one is stopped on return, on error, on Ctrl-C and
    (in the main thread) on SIGTERM, which is turned into KeyboardInterrupt meanwhile."""
    servers: list[ServerProcess] = []
    previous = signal.getsignal(signal.SIGTERM)

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # runs the finally below: the servers are stopped

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)
    try:
        yield servers
    finally:
        for server in reversed(servers):
            server.stop()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)


@dataclass
class _DemoParties:
    """Where the demo's parties live: the CSP's and the platform's folders under the private
    ``secret`` folder, the platform database under ``work``, and the TLS options they share."""

    params: RidgeParams
    ids: list[str]
    secret: Path
    work: Path
    upload_bits: int
    study: bool  # an upload key below 2048 bits, allowed (checked by RidgeKeys.check_sizes)
    insecure_http: bool
    cafile: Path | None = None
    server_options: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        if self.insecure_http:
            self.server_options = ["--insecure-http"]
        else:
            self.cafile, key = _http.self_signed_certificate(self.secret, ("127.0.0.1", "localhost"))
            self.server_options = ["--tls-cert", str(self.cafile), "--tls-key", str(key)]
        # every party of the demo is 127.0.0.1: the servers' per-address cap must fit all providers
        self.server_options += ["--max-connections-per-client", str(32 + 4 * len(self.ids))]

    @property
    def csp_dir(self) -> Path:
        return self.secret / "csp"

    @property
    def platform_dir(self) -> Path:
        return self.secret / "platform"

    def start_servers(self, servers: list[ServerProcess], timings: dict[str, float]) -> tuple[str, str]:
        """Start the CSP, then the platform (into ``servers``); their URLs once they answer."""
        env = {k: v for k, v in os.environ.items() if k not in (TOKEN_ENV, FAULT_ENV)}
        env["PYTHONUNBUFFERED"] = "1"
        s = time.perf_counter()
        servers.append(ServerProcess("CSP", self._csp_args(), env))
        csp_url = servers[-1].wait_url(180)
        timings["csp_start"] = time.perf_counter() - s
        s = time.perf_counter()
        servers.append(ServerProcess("platform", self._platform_args(csp_url), env))
        platform_url = servers[-1].wait_url(60)
        asyncio.run(wait_ready(platform_url, "platform", self.cafile, self.insecure_http))
        timings["platform_start"] = time.perf_counter() - s
        return csp_url, platform_url

    def _csp_args(self) -> list[str]:
        p = self.params
        args = ["csp", "--port", "0", "--host", "127.0.0.1", "--d", str(p.d), "--max-records", str(p.max_records),
                "--x-bound", repr(p.x_bound), "--y-bound", repr(p.y_bound), "--lam", repr(p.lam), "--frac-bits",
                str(p.frac_bits), "--stat-bits", str(p.stat_bits), "--min-providers", str(p.min_providers),
                "--upload-bits", str(self.upload_bits), "--key-dir", str(self.csp_dir), *self.server_options]
        return args + (["--insecure-study-size"] if self.study else [])

    def _platform_args(self, csp_url: str) -> list[str]:
        args = ["platform", "--port", "0", "--host", "127.0.0.1", "--csp", csp_url, "--db",
                str(self.work / "platform.db"), "--csp-token-file", str(self.csp_dir / "platform.token"),
                "--providers", ",".join(self.ids), "--token-dir", str(self.platform_dir), *self.server_options]
        return args + (["--cafile", str(self.cafile)] if self.cafile is not None else [])

    async def clients(self, csp_url: str, platform_url: str, rd: RidgeData, mode: str, batch: int,
                      make_progress: Callable[[int], ProgressHook] | None, timings: dict[str, float]
                      ) -> tuple[list[ProviderReport], BuyerResult]:
        """Every provider uploads its part (concurrently), then the buyer buys the model."""
        tokens = {p: read_token(self.platform_dir / f"{p}.token", "provider token") for p in self.ids}
        buyer_token = read_token(self.csp_dir / "buyer.token", "buyer token")
        count = len(self.ids)
        s = time.perf_counter()
        hooks = [make_progress(k) if make_progress else None for k in range(count)]
        reports = await asyncio.gather(*(
            run_provider(platform_url, (rd.X, rd.y), token=tokens[self.ids[k]], csp_url=csp_url, mode=mode,
                         batch=batch, part=(k + 1, count), progress=hooks[k], cafile=self.cafile,
                         insecure_study_size=self.study, insecure_http=self.insecure_http)
            for k in range(count)))
        timings["upload"] = time.perf_counter() - s
        buyer = await run_buyer(platform_url, csp_url, buyer_token, cafile=self.cafile,
                                insecure_http=self.insecure_http)
        timings.update({f"buyer_{k}": v for k, v in buyer.timings.items()})
        return list(reports), buyer
