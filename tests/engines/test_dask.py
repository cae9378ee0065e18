"""Dask runner: a 2-worker LocalCluster (started once for the module), order, reduce, errors,
progress, scatter, a second client on the same scheduler, bad and unreachable addresses,
and that closing leaves no worker process behind."""

from __future__ import annotations

import operator
import socket
import time
from typing import Any, Iterator

import psutil
import pytest

from cryptoffload.engines.dask import DaskRunner, parse_scheduler
from cryptoffload.errors import ConfigError, CryptoffloadError


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
    with pytest.raises(ConfigError, match=r"did you mean tcp://localhost:8786\?"):
        parse_scheduler("localhost:8786")


def test_malformed_address_refused_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_connect(*a: Any, **k: Any) -> None:
        raise AssertionError("tried to connect")
    monkeypatch.setattr(socket, "create_connection", no_connect)
    with pytest.raises(ConfigError, match="malformed"):
        DaskRunner("127.0.0.1:8786")


def test_unreachable_scheduler_fails_fast() -> None:
    address = f"tcp://127.0.0.1:{_free_port()}"
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        DaskRunner(address, timeout=2)
    assert time.perf_counter() - start < 3
    msg = str(info.value)
    assert address in msg and "\n" not in msg
    assert info.value.__suppress_context__       # raised `from None`: no chained traceback


def test_silent_listener_times_out() -> None:
    """A port that accepts but never speaks Dask: bounded by ``timeout``, not a hang."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        address = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
        start = time.perf_counter()
        with pytest.raises(ConfigError, match="no answer within 0.5 s") as info:
            DaskRunner(address, timeout=0.5)
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
    assert line.startswith("local Dask cluster tcp://127.0.0.1:")
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
    with DaskRunner(runner.scheduler_address, workers=2) as remote:
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
            DaskRunner(address, timeout=1)
    msg = str(info.value)
    assert msg == (f"only 0 of 1 Dask worker(s) joined {address} within 1 s "
                   f"(start one there: `dask worker {address}`)")
