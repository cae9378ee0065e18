"""Dask runner: a 2-worker LocalCluster (started once for the module, secured as every local
cluster is), order, reduce, errors, progress, scatter, a second client on the same scheduler,
bad and unreachable addresses, and that closing leaves no worker process behind; then the
boundary: a second process without the run's credentials runs nothing on any of the
cluster's listeners, its HTTP servers serve nothing, its credentials folder is private and
gone after close (or after a SIGKILL, at the next run), a plain tcp:// scheduler is refused
without the opt-in, and the documented recipe for a real TLS cluster runs."""

from __future__ import annotations

import json
import operator
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import psutil
import pytest

from cryptoffload.engines.dask import DaskRunner, parse_scheduler
from cryptoffload.engines.dask_tls import RUN_PREFIX, write_credentials
from cryptoffload.errors import ConfigError, CryptoffloadError

ATTACKER = Path(__file__).with_name("dask_attacker.py")


# Run on the workers: top-level, so they pickle by reference (the workers import this module).
def slow_square(x: int) -> int:
    time.sleep(0.02 * (x % 4))          # later chunks often finish first
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ConfigError(f"chunk {x} is bad")
    return x


def fail_builtin(x: int) -> int:
    return int("not a number") if x == 1 else x


def add_shared(chunk: tuple[dict[str, int], int]) -> int:
    shared, x = chunk
    return shared["offset"] + x


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker_children() -> list[psutil.Process]:
    """Child processes of this one, less multiprocessing's shared resource tracker (started
    once per interpreter and kept by design)."""
    out = []
    for p in psutil.Process().children(recursive=True):
        try:
            if "resource_tracker" not in " ".join(p.cmdline()):
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.fixture(scope="module")
def runner() -> Iterator[DaskRunner]:
    with DaskRunner(workers=2) as r:
        yield r


@pytest.fixture(scope="module")
def other_creds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A good set of credentials of another cluster (another CA)."""
    return write_credentials(tmp_path_factory.mktemp("other") / "creds")


# -- addresses --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("tcp://127.0.0.1:8786", "tcp://127.0.0.1:8786"),
    ("  TCP://sched.example.org:8786 ", "tcp://sched.example.org:8786"),
    ("tls://10.0.0.5:8786", "tls://10.0.0.5:8786"),
    ("tcp://[::1]:8786", "tcp://[::1]:8786"),
    ("inproc://10.0.0.1/1234/1", "inproc://10.0.0.1/1234/1"),
])
def test_parse_scheduler_accepts(text: str, want: str) -> None:
    assert parse_scheduler(text) == want


@pytest.mark.parametrize("text", [
    "", "localhost:8786", "localhost", "tcp://localhost", "tcp://host:0", "tcp://host:70000",
    "http://host:8786", "tcp://:8786", "tcp://ho st:8786", "inproc://", "tcp://host:port",
])
def test_parse_scheduler_refuses_malformed(text: str) -> None:
    with pytest.raises(ConfigError, match="malformed Dask scheduler address"):
        parse_scheduler(text)


def test_parse_scheduler_suggests_scheme() -> None:
    with pytest.raises(ConfigError, match=r"did you mean tls://localhost:8786\?"):
        parse_scheduler("localhost:8786")


def test_malformed_address_refused_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_connect(*a: Any, **k: Any) -> None:
        raise AssertionError("tried to connect")
    monkeypatch.setattr(socket, "create_connection", no_connect)
    with pytest.raises(ConfigError, match="malformed"):
        DaskRunner("127.0.0.1:8786")


@pytest.mark.parametrize("scheme", ["tls", "tcp"])
def test_unreachable_scheduler_fails_fast(scheme: str, other_creds: Path) -> None:
    address = f"{scheme}://127.0.0.1:{_free_port()}"
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        if scheme == "tls":
            DaskRunner(address, credentials=other_creds, timeout=2)
        else:
            DaskRunner(address, insecure_plain_tcp=True, timeout=2)
    assert time.perf_counter() - start < 3
    msg = str(info.value)
    assert address in msg and "\n" not in msg
    assert info.value.__suppress_context__       # raised `from None`: no chained traceback


def test_silent_listener_times_out(other_creds: Path) -> None:
    """A port that accepts but never speaks TLS or Dask: bounded by ``timeout``, not a hang."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        address = f"tls://127.0.0.1:{srv.getsockname()[1]}"
        start = time.perf_counter()
        with pytest.raises(ConfigError, match="no answer within 0.5 s") as info:
            DaskRunner(address, credentials=other_creds, timeout=0.5)
        # Not a hang: the bound is 120x the timeout so that a loaded CI machine cannot fail it.
        assert time.perf_counter() - start < 60
        assert address in str(info.value)


def test_bad_options_refused() -> None:
    for kw in ({"workers": 0}, {"threads_per_worker": 0}, {"timeout": 0}, {"resources": {"GPU": 0}},
               {"resources": {"2 GPUs": 1}}):
        with pytest.raises(ConfigError):
            DaskRunner(**kw)


# -- the local cluster ------------------------------------------------------------------------

def test_info(runner: DaskRunner) -> None:
    assert runner.local
    assert runner.workers == 2 and runner.cores == 2
    line = runner.describe()
    assert line.startswith("local Dask cluster tls://127.0.0.1:")
    assert line.endswith("2 workers, 2 threads") and "\n" not in line


def test_map_preserves_chunk_order(runner: DaskRunner) -> None:
    xs = list(range(12))
    assert runner.map_chunks(slow_square, xs) == [x * x for x in xs]
    assert runner.map_chunks(slow_square, iter(xs[:3])) == [0, 1, 4]   # any iterable
    assert runner.map_chunks(slow_square, []) == []


def test_map_chunks_are_single_arguments(runner: DaskRunner) -> None:
    # A tuple with a callable first is data, not a task.
    assert runner.map_chunks(len, [(pow, 2), [1, 2, 3], "abcd"]) == [2, 3, 4]


def test_resources_no_worker_declares_are_refused_at_once(runner: DaskRunner) -> None:
    assert all(r == {} for r in runner.worker_resources().values())
    with pytest.raises(ConfigError, match="no Dask worker declares resource GPU=1.*--resources GPU=1"):
        runner.map_chunks(slow_square, [1, 2], resources={"GPU": 1})


def test_reduce(runner: DaskRunner) -> None:
    xs = list(range(10))
    assert runner.map_chunks(slow_square, xs, reduce=operator.add) == sum(x * x for x in xs)
    assert runner.map_chunks(slow_square, xs, reduce=operator.add, initial=1000) == 1000 + 285
    assert runner.map_chunks(slow_square, [], reduce=operator.add, initial=7) == 7
    with pytest.raises(ConfigError, match="initial"):
        runner.map_chunks(slow_square, [], reduce=operator.add)


def test_chunks_in_flight_are_bounded_and_results_unchanged(runner: DaskRunner) -> None:
    """At most max_in_flight futures are alive at once -- counted here, and by Dask's own
    client (its table of futures held) at every fold, where a collected future's release is
    asynchronous (a callback on the client's event loop) and may lag by one or two; submitting
    all 40 at once would show 40 -- and the results are those of an unbounded run."""
    xs = list(range(40))
    live: list[int] = []

    def add_and_count(acc: int, v: int) -> int:
        live.append(len(runner.client.futures))
        return acc + v

    assert runner.map_chunks(slow_square, xs, reduce=add_and_count, initial=0, max_in_flight=3) == sum(x * x for x in xs)
    assert len(live) == 40 and max(live) <= 3 + 2
    assert runner.peak_in_flight == 3          # the first fill: 40 chunks, a window of 3
    assert runner.map_chunks(slow_square, xs, max_in_flight=2) == [x * x for x in xs]
    assert runner.peak_in_flight == 2
    assert runner.map_chunks(slow_square, xs) == [x * x for x in xs]   # default window: 2 x threads
    assert runner.peak_in_flight <= 2 * runner.cores
    deadline = time.monotonic() + 10
    while runner.client.futures and time.monotonic() < deadline:           # released asynchronously
        time.sleep(0.05)
    assert not runner.client.futures                                     # nothing left behind
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ConfigError, match="max_in_flight"):
            runner.map_chunks(slow_square, xs, max_in_flight=bad)


def test_worker_error_keeps_type_and_message(runner: DaskRunner) -> None:
    with pytest.raises(ConfigError, match="^chunk 3 is bad$") as info:
        runner.map_chunks(fail_on_three, range(6))
    assert isinstance(info.value, CryptoffloadError)
    with pytest.raises(ConfigError, match="chunk 3 is bad"):
        runner.map_chunks(fail_on_three, range(6), reduce=operator.add)
    with pytest.raises(ValueError, match="invalid literal for int"):
        runner.map_chunks(fail_builtin, range(3))
    assert runner.map_chunks(slow_square, [1, 2]) == [1, 4]   # the cluster is still fine


def test_retries_accepted(runner: DaskRunner) -> None:
    assert runner.map_chunks(slow_square, [3], retries=2) == [9]
    with pytest.raises(ConfigError):
        runner.map_chunks(slow_square, [3], retries=-1)


def test_progress_runs(runner: DaskRunner) -> None:
    assert runner.map_chunks(slow_square, range(5), progress="squaring") == [0, 1, 4, 9, 16]
    assert runner.map_chunks(slow_square, range(5), progress=True, reduce=operator.add) == 30


def test_scatter_shared_input(runner: DaskRunner) -> None:
    shared = runner.scatter({"offset": 100})
    assert runner.map_chunks(add_shared, [(shared, i) for i in range(4)]) == [100, 101, 102, 103]


def test_remote_client_on_running_scheduler(runner: DaskRunner) -> None:
    with DaskRunner(runner.scheduler_address, workers=2, credentials=runner.credentials) as remote:
        assert not remote.local
        assert remote.describe().startswith(f"remote Dask scheduler {runner.scheduler_address}: 2 workers")
        assert remote.map_chunks(slow_square, range(4)) == [0, 1, 4, 9]
    # closing a remote runner leaves the cluster running
    assert runner.map_chunks(slow_square, [5]) == [25]


def test_closing_leaves_nothing_running() -> None:
    before = {p.pid for p in _worker_children()}
    with pytest.raises(KeyboardInterrupt):
        with DaskRunner(workers=1) as r:
            assert r.map_chunks(slow_square, [2]) == [4]
            started = [p for p in _worker_children() if p.pid not in before]
            assert started, "the local cluster should run worker processes"
            raise KeyboardInterrupt
    _, alive = psutil.wait_procs(started, timeout=5)
    assert not alive
    assert {p.pid for p in _worker_children()} <= before
    assert r.client is None and r.cluster is None
    with pytest.raises(RuntimeError, match="closed"):
        r.map_chunks(slow_square, [1])
    r.close()   # idempotent


# -- pinned tasks -----------------------------------------------------------------------------

def where_am_i(tag: Any = None, *, suffix: str = "") -> tuple[str, Any]:
    from distributed import get_worker

    return get_worker().address, f"{tag}{suffix}"


def test_worker_addresses_and_pinned_submit(runner: DaskRunner) -> None:
    addrs = runner.worker_addresses()
    assert addrs == sorted(addrs) and len(addrs) == 2 and addrs == runner.worker_addresses()
    for addr in addrs:
        futures = [runner.submit(where_am_i, i, worker=addr, suffix="!") for i in range(4)]
        assert runner.gather(futures) == [(addr, f"{i}!") for i in range(4)]
    # a dependency produced on one worker is moved to the pinned consumer on the other
    first = runner.submit(where_am_i, "a", worker=addrs[0])
    second = runner.submit(where_am_i, first, worker=addrs[1])
    runner.wait([first, second])
    assert runner.gather(second) == (addrs[1], f"{(addrs[0], 'a')}")
    assert runner.gather(runner.submit(where_am_i, 7))[1] == "7"   # unpinned


def test_submit_refuses_unknown_worker(runner: DaskRunner) -> None:
    with pytest.raises(ConfigError, match="no Dask worker at 'tcp://127.0.0.1:1'"):
        runner.submit(where_am_i, 1, worker="tcp://127.0.0.1:1")


def collect(*parts: Any) -> list[Any]:
    return list(parts)


def test_submit_graph_pins_and_resolves_keys(runner: DaskRunner) -> None:
    w0, w1 = runner.worker_addresses()
    tasks = {"g-a": (where_am_i, 1), "g-b": (where_am_i, "g-a"), "g-c": (collect, ["g-a", "g-b"], 5)}
    futures = runner.submit_graph(tasks, workers={"g-a": w0, "g-b": w1, "g-c": w1},
                                  priorities={"g-a": 2, "g-b": 1})
    assert list(futures) == list(tasks)
    a, b, c = runner.gather([futures[k] for k in tasks])
    assert a == (w0, "1") and b == (w1, f"{(w0, '1')}") and c == [[a, b], 5]
    with pytest.raises(ConfigError, match="no Dask worker at 'tcp://127.0.0.1:1'"):
        runner.submit_graph({"g-x": (where_am_i, 1)}, workers={"g-x": "tcp://127.0.0.1:1"})
    with pytest.raises(TypeError, match="must be a tuple"):
        runner.submit_graph({"g-y": [where_am_i, 1]})  # type: ignore[dict-item]


def test_a_scheduler_without_workers_is_an_error_within_the_timeout() -> None:
    """``--scheduler`` on a scheduler that has no workers: without ``workers`` the runner
    still waits for one, bounded, instead of handing tasks to nobody and waiting forever."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None, processes=True,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as empty:
        address = empty.scheduler_address
        with pytest.raises(ConfigError) as info:
            DaskRunner(address, timeout=1, insecure_plain_tcp=True)
    msg = str(info.value)
    assert msg == (f"only 0 of 1 Dask worker(s) joined {address} within 1 s "
                   f"(start one there: `dask worker {address}`)")


# -- the boundary: who may run code on the cluster ---------------------------------------------

def _listeners(runner: DaskRunner) -> list[list[str]]:
    """Every Dask listener of the cluster and the handler that runs a pickled function there."""
    info = runner.client.scheduler_info(n_workers=-1)["workers"]
    out = [["scheduler", runner.scheduler_address, "run_function"]]
    out += [[f"worker {i}", a, "run"] for i, a in enumerate(sorted(info))]
    out += [[f"nanny {i}", info[a]["nanny"], "run"] for i, a in enumerate(sorted(info))]
    return out


def _attack(tmp_path: Path, runner: DaskRunner, other: Path, modes: list[str]) -> tuple[dict[str, str], list[str]]:
    """Run tests/engines/dask_attacker.py in a second process; its verdicts and the marker
    files its functions wrote (one per attempt that ran)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    real = runner.credentials
    assert real is not None
    spec = {"targets": _listeners(runner), "modes": modes, "marker_dir": str(markers), "timeout": 3,
            "real": {k: str(real / f"{k}.pem") for k in ("ca", "cert", "key")},
            "other": {k: str(other / f"{k}.pem") for k in ("ca", "cert", "key")}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    proc = subprocess.run([sys.executable, str(ATTACKER), str(tmp_path / "spec.json")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), sorted(os.listdir(markers))


def test_the_local_cluster_listens_on_tls_only(runner: DaskRunner) -> None:
    for kind, address, _ in _listeners(runner):
        assert address.startswith("tls://127.0.0.1:"), (kind, address)
    sec = runner.client.security
    assert sec.require_encryption and sec.tls_min_version.name == "TLSv1_3"


ATTACKS = ["client-plain", "client-tcp", "tcp", "tls-no-cert", "other-ca", "other-ca-trusting"]


def test_a_second_process_without_the_credentials_runs_nothing(runner: DaskRunner, other_creds: Path,
                                                               tmp_path: Path) -> None:
    """Another program on the machine dials the scheduler, each worker and each nanny (which
    lives in *this* process, beside its keys): without TLS, over TLS without a certificate,
    with a certificate of another CA (trusting that CA, or ours). Each attempt is refused at
    the handshake, and no function it sent ran (its marker file does not exist)."""
    verdicts, ran = _attack(tmp_path, runner, other_creds, ATTACKS)
    listeners = len(_listeners(runner))
    assert len(verdicts) == 2 + (len(ATTACKS) - 2) * listeners   # the Client modes dial the scheduler only
    assert all(v.startswith("refused: ") for v in verdicts.values()), verdicts
    assert ran == []
    assert runner.map_chunks(slow_square, [3]) == [9]      # the cluster is unharmed


def test_the_attacker_succeeds_with_the_runs_credentials(runner: DaskRunner, other_creds: Path,
                                                         tmp_path: Path) -> None:
    """The control: the same attacker holding this run's credentials (which only this user can
    read, in a 0700 folder) does run its code on every listener -- so the refusals above are
    the credentials' doing, not a broken attack."""
    verdicts, ran = _attack(tmp_path, runner, other_creds, ["real"])
    assert set(verdicts.values()) == {"ran"}
    assert len(ran) == len(_listeners(runner))


def test_http_servers_serve_nothing(runner: DaskRunner) -> None:
    """Dask always starts an HTTP server (no TLS, no authentication) in the scheduler and each
    worker; the local cluster gives them no routes, so they tell nothing about the run."""
    info = runner.client.scheduler_info(n_workers=-1)
    ports = [info["services"]["dashboard"]] + [w["services"]["dashboard"] for w in info["workers"].values()]
    assert len(ports) == 3
    for port in ports:
        for path in ("/health", "/metrics", "/info/main/workers.html", "/json/counts.json",
                     "/statics/images/dask-logo.svg", "/"):
            with pytest.raises(urllib.error.HTTPError) as info_:
                urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5)
            assert info_.value.code == 404, (port, path)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/sitemap.json", timeout=5) as page:   # always there
            assert json.load(page) == {"paths": ["/sitemap.json"]}


def test_the_credentials_folder_is_private_and_removed_on_close() -> None:
    with DaskRunner(workers=1) as r:
        folder = r.credentials
        assert folder is not None and folder.name.startswith(RUN_PREFIX)
        st = folder.lstat()
        assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
        for name in ("ca.pem", "cert.pem", "key.pem"):
            assert stat.S_IMODE((folder / name).lstat().st_mode) == 0o600
        assert stat.S_IMODE((folder / "scratch").lstat().st_mode) == 0o700
        assert (folder / "scratch" / "dask-scratch-space").is_dir()   # spilled task data stays private
    assert not folder.exists() and r.credentials is None


def test_a_killed_runs_folder_is_removed_by_the_next_run() -> None:
    """SIGKILL runs no cleanup: the key stays behind until the next runner sweeps it."""
    code = ("from cryptoffload.engines.dask import DaskRunner\n"
            "r = DaskRunner(workers=1)\nprint(r.credentials, flush=True)\nimport time\ntime.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        folder = Path(proc.stdout.readline().strip())
        assert (folder / "key.pem").is_file()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)    # the group this test started: the runner and its workers
        proc.wait(timeout=30)
    assert (folder / "key.pem").is_file()       # left behind
    with DaskRunner(workers=1) as r:
        assert r.credentials != folder
        assert not folder.exists()


def test_a_plain_tcp_scheduler_is_refused_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_connect(*a: Any, **k: Any) -> None:
        raise AssertionError("tried to connect")
    monkeypatch.setattr(socket, "create_connection", no_connect)
    with pytest.raises(ConfigError) as info:
        DaskRunner("tcp://10.0.0.1:8786")
    msg = str(info.value)
    assert "\n" not in msg and "runs code as you and reads your keys" in msg
    assert "--scheduler tls://10.0.0.1:8786 --dask-credentials DIR" in msg and "--insecure-plain-tcp-scheduler" in msg
    with pytest.raises(ConfigError, match="needs the cluster's TLS credentials: pass --dask-credentials DIR"):
        DaskRunner("tls://10.0.0.1:8786")


def test_credentials_of_another_cluster_are_refused_in_one_line(runner: DaskRunner, other_creds: Path) -> None:
    with pytest.raises(ConfigError) as info:
        DaskRunner(runner.scheduler_address, credentials=other_creds, timeout=3)
    msg = str(info.value)
    assert "\n" not in msg and runner.scheduler_address in msg and "--dask-credentials" in msg


def _dask_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([str(Path(sys.executable).with_name("dask")), *args], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env}, start_new_session=True)


def _logged(proc: subprocess.Popen[str], word: str, deadline: float) -> str:
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if word in line:
            return line.split(word, 1)[1].strip()
    raise AssertionError(f"no {word!r} line")


def test_the_documented_recipe_for_a_tls_cluster_runs(tmp_path: Path) -> None:
    """docs/engines.md: `cryptoffload dask credentials`, then `dask scheduler` and `dask worker`
    with the three files (and no HTTP routes), then a runner with --dask-credentials."""
    creds = write_credentials(tmp_path / "creds")
    tls = ["--tls-ca-file", str(creds / "ca.pem"), "--tls-cert", str(creds / "cert.pem"),
           "--tls-key", str(creds / "key.pem")]
    started: list[subprocess.Popen[str]] = []
    try:
        sched = _dask_cli(["scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                           "--dashboard-address", "127.0.0.1:0", *tls],
                          {"DASK_DISTRIBUTED__SCHEDULER__HTTP__ROUTES": "[]"})
        started.append(sched)
        deadline = time.monotonic() + 60
        address = _logged(sched, "Scheduler at:", deadline)
        http = _logged(sched, "dashboard at:", deadline)
        assert address.startswith("tls://127.0.0.1:")
        started.append(_dask_cli(["worker", address, "--nthreads", "1", "--no-dashboard", *tls],
                                 {"DASK_DISTRIBUTED__WORKER__HTTP__ROUTES": "[]"}))
        with DaskRunner(address, workers=1, credentials=creds, timeout=60) as r:
            assert r.map_chunks(operator.neg, [1, 2, 3]) == [-1, -2, -3]
            assert r.describe().startswith(f"remote Dask scheduler {address}: 1 worker")
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://{http.split('//')[1].split('/')[0]}/info/main/workers.html", timeout=5)
        assert info.value.code == 404
    finally:
        for p in started:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
