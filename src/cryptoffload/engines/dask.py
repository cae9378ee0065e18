"""Spread chunks of work over cores and machines with Dask distributed.

Why Dask: a study or a bulk encryption splits into independent chunks, and the same code
should use every core of this machine or every core of a few machines. ``distributed``
already schedules tasks, ships arguments and results, retries, and brings back worker
exceptions; so there is no cluster manager of our own here, only :class:`DaskRunner`, a thin
context manager around a ``distributed.Client``:

* ``DaskRunner()`` starts a ``LocalCluster`` in-process: worker *processes* (one per core,
  one thread each, so Python-side work never contends for one GIL), no dashboard (no port to
  claim), logging silenced to warnings. It is closed with the runner. It is secured by
  default (:mod:`.dask_tls`): the scheduler, the workers and their nannies listen on
  ``tls://127.0.0.1`` and require a client certificate from a CA made for this run alone
  (mutual TLS 1.3, encryption required), so another process on the machine cannot connect,
  let alone run code. The credentials and the workers' scratch space (spilled task data) live
  in a 0700 folder removed on close (swept by the next run after a SIGKILL), and the
  scheduler's and workers' HTTP servers, which Dask always starts, serve no routes.
* ``DaskRunner("tls://host:8786", credentials=DIR)`` (the CLI's ``--scheduler`` with
  ``--dask-credentials``) connects to a running cluster with the credentials in ``DIR``
  (``ca.pem``, ``cert.pem``, ``key.pem``: owned by you, the key 0600, never read through a
  link) and leaves the cluster running on exit. ``cryptoffload dask credentials --out DIR``
  makes a set; then, with ``T="--tls-ca-file DIR/ca.pem --tls-cert DIR/cert.pem --tls-key
  DIR/key.pem"``::

      dask scheduler --protocol tls $T                             # prints tls://HOST:8786
      dask worker tls://HOST:8786 --nworkers 8 --nthreads 1 $T     # on each machine

  A plain ``tcp://`` address is refused unless ``insecure_plain_tcp=True``
  (``--insecure-plain-tcp-scheduler``): anyone who reaches such a port runs code as you.
  A malformed address is refused before connecting (:func:`parse_scheduler`); an
  unreachable one fails within ``timeout`` seconds with a one-line
  :class:`~cryptoffload.errors.ConfigError` naming it.

GPUs: a worker that owns a GPU declares it as a Dask *resource*, and tasks that need one ask
for it (``map_chunks(..., resources={"GPU": 1})``), so the scheduler sends GPU work only to
such workers, one task per GPU slot at a time, and several GPUs or machines share one run::

      CUDA_VISIBLE_DEVICES=0 dask worker tls://HOST:8786 --nthreads 1 --resources GPU=1 $T
      CUDA_VISIBLE_DEVICES=1 dask worker tls://HOST:8786 --nthreads 1 --resources GPU=1 $T

  A local cluster gets the same with ``DaskRunner(resources={"GPU": 1})`` (every local worker
  declares it; :func:`cryptoffload.engines.gpu.worker_device_index` maps worker i to GPU i).
  Several workers may declare a slot on the same GPU: CUDA time-slices them. Asking for a
  resource no worker declares is refused at once (a task would otherwise wait for ever).

Functions given to :meth:`DaskRunner.map_chunks` must be top-level functions of an importable
module (``cryptoffload...`` or another installed package): they are pickled by reference,
so the code they call has to be installed on every worker, at the same version. Worker
processes are started with ``spawn``; a script using the runner needs the usual
``if __name__ == "__main__":`` guard. Large inputs shared by all chunks (a public key, a
table) go out once with :meth:`DaskRunner.scatter`; put the returned future inside each
chunk, e.g. ``[(pk_future, c) for c in chunks]``, and Dask hands the worker the object.
"""

from __future__ import annotations

import logging
import os
import re
import socket
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import (TYPE_CHECKING, Callable, Generic, Hashable, Iterable, Mapping, Sequence, TypeAlias, TypeVar, cast,
                    overload)

from cryptoffload.engines.dask_tls import CREDENTIALS_FLAG, Pems, RunCredentials, new_pems, scheduler_credentials
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:   # distributed is imported only when a runner starts
    from distributed import Client, Future, LocalCluster, Security
    from rich.progress import Progress

log = logging.getLogger("cryptoffload.dask")
T = TypeVar("T")
R = TypeVar("R")
A = TypeVar("A")
#: A task of a graph: ``(fn, *args)``; an argument that is another task's key is its result.
Task: TypeAlias = tuple[object, ...]
#: The futures of submitted tasks still held (dropping them lets Dask release the results).
Pending: TypeAlias = "list[Future[object]]"

DEFAULT_PORT = 8786
_TLS_HINT = " with TLS, and are these its credentials"
_TLS_WORKER = " --tls-ca-file DIR/ca.pem --tls-cert DIR/cert.pem --tls-key DIR/key.pem"


class _Missing:
    """The type of :data:`_MISSING`: no initial value given."""


_MISSING = _Missing()

_TCP_RE = re.compile(
    r"^(?P<scheme>tcp|tls)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r":(?P<port>[0-9]{1,5})$")
_ADDRESS_HELP = "expected tls://HOST:PORT, tcp://HOST:PORT or inproc://..."
#: what the scheduler and workers serve over HTTP (no TLS, no authentication there): nothing
_NO_HTTP_ROUTES: dict[str, list[str]] = {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}


def parse_scheduler(text: str) -> str:
    """The scheduler address ``text`` names, normalised (spaces stripped, scheme in lower
    case): ``tcp://HOST:PORT``, ``tls://HOST:PORT`` (IPv6 hosts in brackets) or
    ``inproc://...``. Anything else raises :class:`ConfigError` without connecting."""
    raw = text.strip() if isinstance(text, str) else text
    if not isinstance(raw, str) or not raw:
        raise ConfigError(f"malformed Dask scheduler address {text!r}: {_ADDRESS_HELP}")
    scheme, sep, rest = raw.partition("://")
    if sep:
        raw = f"{scheme.lower()}://{rest}"
    if raw.startswith("inproc://") and len(raw) > len("inproc://"):
        return raw
    m = _TCP_RE.match(raw)
    if m and 1 <= int(m["port"]) <= 65535:
        return raw
    hint = ""
    if not sep and re.fullmatch(r"[A-Za-z0-9.\-\[\]:]+", raw):
        hint = f" (did you mean tls://{raw if ':' in raw else f'{raw}:{DEFAULT_PORT}'}?)"
    elif m:
        hint = " (port out of range)"
    raise ConfigError(f"malformed Dask scheduler address {text!r}: {_ADDRESS_HELP}{hint}")


def _host_port(address: str) -> tuple[str, int] | None:
    m = _TCP_RE.match(address)
    if not m:
        return None
    return m["host"].strip("[]"), int(m["port"])


def _default_workers() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


@cache
def _make_client_class() -> type[Client]:   # distributed is imported only when a runner starts
    from distributed import Client

    class _Client(Client):
        """A Client whose connection attempt as a whole is bounded by its ``timeout`` (the
        stock one waits forever on a port that accepts but never answers the handshake), and
        that stops its event-loop thread when it fails to connect (the stock one leaves it
        running, and the caller never gets the object to close)."""

        def start(self, **kwargs: object) -> None:
            if not self.asynchronous and "callback_timeout" not in kwargs:
                kwargs["callback_timeout"] = self._timeout   # consumed by utils.sync
            try:
                super().start(**kwargs)
            except BaseException:
                with suppress(Exception):
                    self.status = "closed"
                    self._loop_runner.stop()
                raise

    return _Client


class DaskRunner:
    """A ``distributed.Client`` on a local cluster (``scheduler=None``) or on a running one.

    ``workers``: local worker processes (default: one per usable core); with a remote
    ``scheduler``, wait (up to ``timeout``) until that many workers have joined.
    ``credentials``: the folder of a ``tls://`` scheduler's credentials (see the module
    docstring), or what :func:`~.dask_tls.scheduler_credentials` read from it;
    ``insecure_plain_tcp``: accept a ``tcp://`` scheduler (no TLS: anyone who reaches it runs
    code as you). ``threads_per_worker`` and ``memory_limit`` (per worker;
    ``"auto"`` splits this machine's memory, ``None`` for no limit) and ``resources`` (what
    every local worker declares, e.g. ``{"GPU": 1}``) apply to a local cluster only.
    ``timeout``: seconds to reach the scheduler. Connects on construction; use as a context
    manager, or call :meth:`close`. ``client`` is the underlying ``distributed.Client`` (not
    set as the global default, so other Dask code in the process is unaffected).
    """

    def __init__(self, scheduler: str | None = None, workers: int | None = None, *,
                 credentials: str | os.PathLike[str] | Pems | None = None, insecure_plain_tcp: bool = False,
                 threads_per_worker: int = 1, memory_limit: str | int | None = "auto",
                 timeout: float = 5.0, resources: Mapping[str, float] | None = None) -> None:
        self.address = parse_scheduler(scheduler) if scheduler is not None else None
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ConfigError(f"workers must be a positive integer, got {workers!r}")
        if not isinstance(threads_per_worker, int) or threads_per_worker < 1:
            raise ConfigError(f"threads_per_worker must be a positive integer, got {threads_per_worker!r}")
        if not timeout > 0:
            raise ConfigError(f"timeout must be positive, got {timeout!r}")
        self.resources = _check_resources(resources)
        pems = scheduler_credentials(self.address, credentials, insecure_plain_tcp is True)
        self.timeout = float(timeout)
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None
        self._tls: RunCredentials | None = None
        self._known_workers: frozenset[str] = frozenset()   # for submit(worker=) without a round trip
        self.peak_in_flight = 0   # chunks submitted and not yet collected, at most, in the last map_chunks
        try:
            if self.address is None:
                self._tls = RunCredentials(new_pems())
                self._start_local(workers or _default_workers(), threads_per_worker, memory_limit, self.resources)
            else:
                self._tls = RunCredentials(pems) if pems is not None else None
                if self.address.startswith("tcp://"):
                    log.warning("Dask scheduler %s: plain tcp, no TLS and no authentication (--insecure-plain-tcp-"
                                "scheduler): anyone who can reach it runs code as you", self.address)
                self._connect(self.address, workers)
        except BaseException:
            self.close()
            raise

    # -- start and stop -------------------------------------------------------------------

    @property
    def credentials(self) -> Path | None:
        """The folder holding this run's copy of the cluster's TLS credentials (``ca.pem``,
        ``cert.pem``, ``key.pem``; 0700, removed on close): what another client or worker of
        this user needs to join a local cluster. ``None`` without TLS or once closed."""
        return self._tls.folder if self._tls is not None else None

    def _security(self) -> Security | None:
        return self._tls.security() if self._tls is not None else None

    def _start_local(self, workers: int, threads_per_worker: int, memory_limit: str | int | None,
                     resources: dict[str, float] | None) -> None:
        import dask
        from distributed import LocalCluster

        assert self._tls is not None
        extra = {"resources": resources} if resources else {}
        security = self._tls.security()
        with dask.config.set(_NO_HTTP_ROUTES):   # read by the scheduler and the nannies as they start
            self.cluster = LocalCluster(**extra,
                n_workers=workers, threads_per_worker=threads_per_worker, processes=True,
                memory_limit=memory_limit, host="127.0.0.1", dashboard_address=None,
                security=security, protocol="tls://", local_directory=str(self._tls.scratch),
                # no dashboard; the scheduler's small HTTP server still starts (with no routes),
                # so give it any free local port instead of 8787 (taken when two clusters run)
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.WARNING)
        self.client = _make_client_class()(self.cluster, set_as_default=False, timeout=self.timeout,
                                           security=security)

    def _connect(self, address: str, workers: int | None) -> None:
        hp = _host_port(address)
        if hp is not None:  # fail at once on a refused or unresolvable address
            try:
                socket.create_connection(hp, timeout=self.timeout).close()
            except OSError as e:
                reason = "connection refused" if isinstance(e, ConnectionRefusedError) else (
                    "timed out" if isinstance(e, TimeoutError) else (e.strerror or str(e)))
                raise ConfigError(f"cannot reach the Dask scheduler at {address}: {reason} "
                                  f"(is `dask scheduler` running there?)") from None
        try:
            self.client = _make_client_class()(address, set_as_default=False, timeout=self.timeout,
                                               security=self._security())
        except TimeoutError:
            tls = _TLS_HINT if self._tls else ""
            raise ConfigError(f"cannot connect to the Dask scheduler at {address}: no answer within "
                              f"{self.timeout:g} s (is a Dask scheduler listening there{tls}?)") from None
        except (OSError, TypeError, ValueError) as e:
            msg = " ".join(str(e).split()) or type(e).__name__
            hint = f" (are these the cluster's {CREDENTIALS_FLAG}?)" if self._tls and "TLS" in msg else ""
            raise ConfigError(f"cannot connect to the Dask scheduler at {address}: {msg}{hint}") from None
        self._wait_for_workers(address, workers)

    def _wait_for_workers(self, address: str, workers: int | None) -> None:
        """Every remote run waits for its workers, bounded: ``workers`` of them when given, else
        one (a scheduler with none would take the tasks and wait forever, silently)."""
        need = 1 if workers is None else workers
        log.info("waiting up to %g s for %d Dask worker(s) to join %s", self.timeout, need, address)
        try:
            self._live().wait_for_workers(need, timeout=self.timeout)
        except (TimeoutError, OSError):
            raise ConfigError(
                f"only {self.workers} of {need} Dask worker(s) joined {address} within {self.timeout:g} s "
                f"(start one there: `dask worker {address}{_TLS_WORKER if self._tls else ''}`)") from None

    def close(self) -> None:
        """Close the client, then the local cluster if this runner started one, then remove this
        run's credentials folder (idempotent)."""
        client, cluster, tls = self.client, self.cluster, self._tls
        self.client = self.cluster = self._tls = None
        try:
            if client is not None:
                with suppress(Exception):
                    client.close(timeout=self.timeout)
        finally:
            try:
                if cluster is not None:
                    with suppress(Exception):
                        cluster.close(timeout=self.timeout)
            finally:
                if tls is not None:
                    tls.close()

    def __enter__(self) -> DaskRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _live(self) -> Client:
        if self.client is None:
            raise RuntimeError("DaskRunner is closed")
        return self.client

    # -- information ----------------------------------------------------------------------

    @property
    def local(self) -> bool:
        """True when this runner started (and owns) its cluster."""
        return self.address is None

    @property
    def scheduler_address(self) -> str:
        scheduler = self._live().scheduler
        if scheduler is None:
            raise RuntimeError("DaskRunner: the client has no scheduler connection")
        return str(scheduler.address)

    @property
    def workers(self) -> int:
        """Workers connected now."""
        return len(self._live().nthreads())

    @property
    def cores(self) -> int:
        """Worker threads in all, i.e. chunks that run at once."""
        return sum(self._live().nthreads().values())

    def describe(self) -> str:
        """One line: ``local Dask cluster tcp://127.0.0.1:41234: 2 workers, 2 threads``."""
        nthreads = self._live().nthreads()
        kind = "local Dask cluster" if self.local else "remote Dask scheduler"
        w, c = len(nthreads), sum(nthreads.values())
        return (f"{kind} {self.scheduler_address}: {w} worker{'s' * (w != 1)}, "
                f"{c} thread{'s' * (c != 1)}")

    def __repr__(self) -> str:
        if self.client is None:
            return "<DaskRunner closed>"
        return f"<DaskRunner {self.describe()}>"

    def worker_addresses(self) -> list[str]:
        """Addresses of the workers connected now, sorted (stable while the cluster does not
        change), e.g. ``['tcp://127.0.0.1:40121', 'tcp://127.0.0.1:45011']``."""
        addrs = sorted(self._live().nthreads())
        self._known_workers = frozenset(addrs)
        return addrs

    def worker_resources(self) -> dict[str, dict[str, float]]:
        """What each connected worker declares (``{address: {"GPU": 1.0}}``; empty dicts for
        workers that declare nothing)."""
        workers = self._live().scheduler_info(n_workers=-1).get("workers", {})
        return {addr: dict(info.get("resources") or {}) for addr, info in workers.items()}

    def require_resources(self, resources: Mapping[str, float]) -> None:
        """Refuse (one-line :class:`ConfigError`) when no worker declares enough of each."""
        declared = self.worker_resources().values()
        for name, amount in _checked_resources(resources).items():
            if not any(r.get(name, 0) >= amount for r in declared):
                raise ConfigError(
                    f"no Dask worker declares resource {name}={amount:g}: start workers with "
                    f"`dask worker ... --resources {name}={amount:g}` (one per GPU, with CUDA_VISIBLE_DEVICES), "
                    f"or a local cluster with DaskRunner(resources={{{name!r}: {amount:g}}})")

    # -- work -----------------------------------------------------------------------------

    def submit(self, fn: Callable[..., R], *args: object, worker: str | None = None, **kwargs: object) -> Future[R]:
        """``fn(*args, **kwargs)`` as one task; its future. With ``worker`` (one of
        :meth:`worker_addresses`) the task runs on that worker only (never moved elsewhere,
        even if the worker is busy). Futures among the arguments are resolved to their
        results, moved to the worker by Dask if they live elsewhere. Never cached
        (``pure=False``): two identical submissions run twice. ``fn``: as for
        :meth:`map_chunks`, a top-level function of an importable module. Keyword arguments
        go to ``fn``, except the options of ``Client.submit`` itself (``key``, ``priority``,
        ``retries``, ``resources``, ...), which go to Dask."""
        client = self._live()
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {fn!r}")
        if worker is None:
            return client.submit(fn, *args, pure=False, **kwargs)
        if worker not in self._known_workers and worker not in self.worker_addresses():
            raise ConfigError(f"no Dask worker at {worker!r} (workers: {', '.join(self.worker_addresses())})")
        return client.submit(fn, *args, workers=[worker], allow_other_workers=False, pure=False, **kwargs)

    def submit_graph(self, tasks: Mapping[str, Task], *, workers: Mapping[str, str] | None = None,
                     priorities: Mapping[str, int] | None = None) -> dict[str, Future[object]]:
        """Submit a whole task graph in one message; a future per key.

        ``tasks`` maps a key to ``(fn, *args)``; an argument (or an item of a list argument)
        equal to another key stands for that task's result. ``workers`` pins keys to worker
        addresses (as :meth:`submit` does), ``priorities`` orders the tasks a worker has ready
        (higher first). Why: each :meth:`submit` is its own message, and the client batches
        them every 10 ms, so the tasks of a many-task graph submitted one by one reach the
        workers in waves; in one graph they all leave at once."""
        from dask.highlevelgraph import HighLevelGraph, MaterializedLayer

        self._live()
        workers, priorities = dict(workers or {}), dict(priorities or {})
        unknown = set(workers.values()) - self._known_workers
        if unknown and unknown - set(self.worker_addresses()):
            raise ConfigError(f"no Dask worker at {sorted(unknown - self._known_workers)[0]!r} "
                              f"(workers: {', '.join(self.worker_addresses())})")
        layers, deps = {}, {}
        for key, task in tasks.items():
            if not isinstance(task, tuple) or not task or not callable(task[0]):
                raise TypeError(f"task {key!r} must be a tuple (fn, *args), got {task!r}")
            ann: dict[str, object] = {}
            if key in workers:
                ann = {"workers": [workers[key]], "allow_other_workers": False}
            if key in priorities:
                ann["priority"] = priorities[key]
            layers[key] = MaterializedLayer({key: task}, annotations=ann or None)
            refs = set()
            for arg in task[1:]:
                for item in (arg if isinstance(arg, list) else [arg]):
                    if isinstance(item, str) and item in tasks:
                        refs.add(item)
            deps[key] = refs
        futures = self._live().get(HighLevelGraph(layers, deps), list(tasks), sync=False)
        return dict(zip(tasks, futures))

    @overload
    def gather(self, futures: Future[R]) -> R: ...

    @overload
    def gather(self, futures: Sequence[Future[R]]) -> list[R]: ...

    def gather(self, futures: Future[R] | Sequence[Future[R]]) -> R | list[R]:
        """Results of a future or of a list of futures (a worker's exception is raised here, as
        the original type and message)."""
        return self._live().gather(futures)

    def wait(self, futures: Future[R] | Sequence[Future[R]], timeout: float | None = None) -> None:
        """Block until every future in ``futures`` (one or a list) has finished or failed."""
        from distributed import as_completed

        client = self._live()
        fs = list(futures) if isinstance(futures, (list, tuple, set)) else [futures]
        for _ in as_completed(fs, loop=client.loop, timeout=timeout):   # distributed.wait needs
            pass                                                         # a default client

    @overload   # a list is scattered element by element (a list of futures); anything else whole
    def scatter(self, obj: list[T], broadcast: bool = True, *,  # type: ignore[overload-overlap]
                workers: list[str] | None = None) -> list[Future[T]]: ...

    @overload
    def scatter(self, obj: T, broadcast: bool = True, *, workers: list[str] | None = None) -> Future[T]: ...

    def scatter(self, obj: T | list[T], broadcast: bool = True, *,
                workers: list[str] | None = None) -> Future[T] | list[Future[T]]:
        """Send ``obj`` to the workers once (to every one with ``broadcast``; only to the
        addresses in ``workers`` when given) and return its future; pass that inside chunks
        instead of the object. A list or dict is scattered element by element, as
        ``Client.scatter`` does."""
        if workers is None:
            return self._live().scatter(obj, broadcast=broadcast)
        return self._live().scatter(obj, broadcast=broadcast, workers=list(workers))

    @overload
    def map_chunks(self, fn: Callable[[T], R], chunks: Iterable[T], *, progress: bool | str = False,
                   reduce: None = None, retries: int = 0, initial: _Missing = _MISSING,
                   resources: Mapping[str, float] | None = None, max_in_flight: int | None = None) -> list[R]: ...

    @overload
    def map_chunks(self, fn: Callable[[T], R], chunks: Iterable[T], *, progress: bool | str = False,
                   reduce: Callable[[A, R], A], retries: int = 0, initial: A | _Missing = _MISSING,
                   resources: Mapping[str, float] | None = None, max_in_flight: int | None = None) -> A: ...

    def map_chunks(self, fn: Callable[[T], R], chunks: Iterable[T], *,
                   progress: bool | str = False, reduce: Callable[[A, R], A] | None = None,
                   retries: int = 0, initial: A | _Missing = _MISSING,
                   resources: Mapping[str, float] | None = None, max_in_flight: int | None = None) -> list[R] | A:
        """``fn(chunk)`` for each chunk on the workers; the results in chunk order.

        ``fn`` must be a top-level function of an importable module (see the module
        docstring); each chunk must pickle. ``progress``: draw a ``rich`` bar on stderr,
        labelled with it when a string. ``retries``: re-runs of a chunk whose worker failed
        or raised. A worker's exception is raised here as the original type and message;
        the chunks not yet done are cancelled. ``resources`` (e.g. ``{"GPU": 1}``): each chunk
        runs only on a worker declaring them (refused at once when none does).

        At most ``max_in_flight`` chunks (default: twice the worker threads, at least 2) are
        submitted and not yet collected at any time; the next is submitted as one completes,
        so the results waiting on the workers are bounded by the work in flight, not by the
        number of chunks. :attr:`peak_in_flight` is the most there were in the last call.

        With ``reduce``, results are folded as they complete instead of listed —
        ``value = reduce(value, result)``, starting from ``initial`` or else the first result
        to arrive — so only the running value is held here, and each worker's copy is
        released as soon as it is folded. Completion order is arbitrary, so ``reduce`` must
        be associative and commutative (sums, products mod n, element-wise adds). With no
        chunks, the result is ``[]``, or ``initial`` (a ConfigError when missing).
        """
        client = self._live()
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {fn!r}")
        _check_chunk_options(retries, max_in_flight)
        items: list[T | None] = list(chunks)
        self.peak_in_flight = 0
        if not items:
            if reduce is None:
                return []
            if isinstance(initial, _Missing):
                raise ConfigError("cannot reduce over no chunks without an initial value")
            return initial
        extra: dict[str, object] = {"pure": False, "retries": retries or None}
        if resources:
            self.require_resources(resources)
            extra["resources"] = dict(resources)
        window = _Window(client, fn, items, max_in_flight or max(2, 2 * self.cores), extra)
        del items
        label = progress if isinstance(progress, str) else "chunks"
        bar = _progress_bar() if progress else None
        try:
            if bar is not None:
                bar.start()
                task = bar.add_task(label, total=window.total)
            window.fill()
            self.peak_in_flight = window.peak
            if reduce is None:
                results: list[R | None] = [None] * window.total
                for batch in window.done.batches():   # one gather per batch of completed chunks
                    for i, v in window.collect(batch, client.gather(batch)):
                        results[i] = v
                    window.fill()
                    self.peak_in_flight = window.peak
                    if bar is not None:
                        bar.advance(task, len(batch))
                return cast("list[R]", results)   # every chunk's slot is filled
            acc = initial
            for f in window.done:
                [(_, v)] = window.collect([f], [f.result()])
                del f
                window.fill()
                self.peak_in_flight = window.peak
                acc = cast(A, v) if isinstance(acc, _Missing) else reduce(acc, v)   # no initial: A is R
                del v
                if bar is not None:
                    bar.advance(task, 1)
            if isinstance(acc, _Missing):   # window.total > 0: one result at least was folded
                raise AssertionError("no chunk result was folded")
            return acc
        finally:
            window.cancel()
            if bar is not None:
                bar.stop()


class _Window(Generic[T, R]):
    """Chunks submitted a few at a time: at most ``limit`` futures held (submitted and not yet
    collected); :meth:`fill` tops the window up, :meth:`collect` drops collected futures, so
    Dask releases their results on the workers."""

    def __init__(self, client: Client, fn: Callable[[T], R], items: list[T | None], limit: int,
                 extra: dict[str, object]) -> None:
        from distributed import as_completed

        self.client, self.fn, self.items, self.limit, self.extra = client, fn, items, limit, extra
        self.total = len(items)
        self.next = 0
        self.index: dict[Hashable, int] = {}
        self.pending: dict[Hashable, Future[R]] = {}      # our references; dropping one frees the result
        self.peak = 0
        self.done = as_completed(loop=client.loop)

    def fill(self) -> None:
        while self.next < self.total and len(self.pending) < self.limit:
            f = self.client.submit(self.fn, self.items[self.next], **self.extra)
            self.items[self.next] = None       # the chunk's description is no longer needed here
            self.index[f.key], self.pending[f.key] = self.next, f
            self.next += 1
            self.done.add(f)
        self.peak = max(self.peak, len(self.pending))

    def collect(self, futures: Sequence[Future[R]], values: Sequence[R]) -> list[tuple[int, R]]:
        out = []
        for f, v in zip(futures, values):
            out.append((self.index.pop(f.key), v))
            del self.pending[f.key]
        return out

    def cancel(self) -> None:
        if self.pending:    # an error or an interrupt: stop the rest
            with suppress(Exception):
                self.done.clear()
                self.client.cancel(list(self.pending.values()))
            self.pending.clear()
        self.next = self.total


def _check_chunk_options(retries: object, max_in_flight: object) -> None:
    """:meth:`DaskRunner.map_chunks`' options, refused before anything is submitted."""
    if not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries must be a non-negative integer, got {retries!r}")
    if max_in_flight is not None and (isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int)
                                      or max_in_flight < 1):
        raise ConfigError(f"max_in_flight must be a positive integer, got {max_in_flight!r}")


def _check_resources(resources: Mapping[str, float] | None) -> dict[str, float] | None:
    return None if resources is None else _checked_resources(resources)


def _checked_resources(resources: Mapping[str, float]) -> dict[str, float]:
    """The resources as floats; a one-line :class:`ConfigError` for a bad name or amount."""
    out: dict[str, float] = {}
    for name, amount in dict(resources).items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", name):
            raise ConfigError(f"a Dask resource name must be a word like GPU, got {name!r}")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not 0 < amount < 1e6:
            raise ConfigError(f"resource {name} must be a positive number, got {amount!r}")
        out[name] = float(amount)
    return out


def _progress_bar() -> Progress:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=False)


__all__ = ["DaskRunner", "parse_scheduler", "DEFAULT_PORT"]
