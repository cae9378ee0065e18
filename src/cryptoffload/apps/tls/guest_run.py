"""The TLS-offload study's fetch series, run *inside* a Linux guest whose kernel has kTLS.

Why a separate program: this machine's kernel has no ``tls`` module, so kTLS can only run in a
guest (:mod:`.guest` boots Debian's kernel under QEMU with this machine's root filesystem
read-only). This module is what that guest executes (``python -m
cryptoffload.apps.tls.guest_run``): it loads the ``tls`` module, serves seeded random files with
one nginx per (mode, TLS version) -- plain HTTP, user-space TLS and kTLS, TLS 1.2 and 1.3 --
fetches each with curl one fetch at a time, and around *every* fetch reads the worker's CPU
(user and system apart: kTLS moves the encryption into the worker's ``sendfile``, i.e. into
system time) and the kernel's kTLS counters, so each kTLS fetch is verified by the counters,
never by the request. ``--probe`` runs only the detection code and one verified kTLS fetch: the
positive path of :mod:`.detect`, which this machine cannot show.

The guest's shell prints :data:`BOOTED` first (the host's proof that the boot finished); this
program writes its result as JSON to ``--out`` (a folder shared read-write with the host).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from cryptoffload.checks import JsonDict
from cryptoffload.procfs import CLK_TCK, read_proc_stat
from cryptoffload.apps.tls.detect import KtlsSupport, detect_ktls, read_tls_stat, tls_stat_delta, verify_mode
from cryptoffload.apps.tls.measure import fetch_series, file_sha256, make_files, size_label, verify_download
from cryptoffload.apps.tls.nginx import AccessEntry, NginxServer

#: The first line the guest prints: the host waits for it to know the boot finished.
BOOTED = "cryptoffload-guest: booted"
#: How the guest's progress lines start (the host shows them).
PROGRESS = "cryptoffload-guest: "
#: (mode, TLS version) of each server; plain HTTP has no TLS version.
CONFIGS: tuple[tuple[str, Optional[str]], ...] = (("plain", None), ("tls", "TLSv1.2"), ("tls", "TLSv1.3"),
                                                   ("ktls", "TLSv1.2"), ("ktls", "TLSv1.3"))
#: What :func:`~cryptoffload.apps.tls.detect.verify_mode` says of a fetch the kernel encrypted.
KTLS_ENGAGED = "requested ktls, ran kTLS in the kernel"
LOG_WAIT_S = 5.0  # nginx logs a request when it ends, a moment after curl has its last byte


def config_name(mode: str, version: Optional[str]) -> str:
    """``"ktls TLSv1.3"``, ``"plain"``: the key of a server in the result."""
    return mode if version is None else f"{mode} {version}"


@dataclass
class FetchRecord:
    """One fetch: curl's time, the worker's CPU during it, the kTLS counters' change, the
    access log's word on the protocol, and what :func:`verify_mode` concluded."""

    seconds: float
    cpu_ns: Optional[int]
    user_ms: float
    system_ms: float
    tls_stat_delta: dict[str, int]
    ssl_protocol: str
    verified: str

    @property
    def ktls_engaged(self) -> bool:
        return self.verified.startswith(KTLS_ENGAGED)


@dataclass
class GuestCell:
    """All fetches of one (mode, TLS version, file)."""

    mode: str
    tls_version: Optional[str]
    file: str
    size: int
    sha256_ok: bool = False
    fetches: list[FetchRecord] = field(default_factory=list)

    def to_dict(self) -> JsonDict:
        d = asdict(self)
        for f, rec in zip(d["fetches"], self.fetches):
            f["ktls_engaged"] = rec.ktls_engaged
        d["ktls_fetches_engaged"] = sum(r.ktls_engaged for r in self.fetches)
        return d


def load_tls_module() -> str:
    """``modprobe tls`` (the guest sees the kernel package's modules); its outcome in words."""
    try:
        proc = subprocess.run(["modprobe", "tls"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"modprobe tls failed: {exc}"
    return "modprobe tls: ok" if proc.returncode == 0 else f"modprobe tls: exit {proc.returncode}: {proc.stderr.strip()}"


def _worker_ticks(srv: NginxServer) -> tuple[int, int]:
    """(utime, stime) clock ticks of the server's workers."""
    user = system = 0
    for pid in srv.worker_pids():
        st = read_proc_stat(pid)
        if st is not None:
            user, system = user + st.utime, system + st.stime
    return user, system


def _new_entries(srv: NginxServer, seen: int) -> list[AccessEntry]:
    """The access log's entries after the first ``seen``, waiting for the fetch's own line."""
    deadline = time.monotonic() + LOG_WAIT_S
    entries = srv.access_entries()[seen:]
    while not entries and time.monotonic() < deadline:
        time.sleep(0.05)
        entries = srv.access_entries()[seen:]
    return entries


def measured_fetch(srv: NginxServer, fname: str, support: KtlsSupport) -> FetchRecord:
    """One timed curl fetch with the worker's CPU (ns, and user/system ticks) and the kTLS
    counters read just before and after it, verified on its own."""
    seen = len(srv.access_entries())
    ns0, (u0, s0), st0 = srv.worker_cpu_ns(), _worker_ticks(srv), read_tls_stat()
    stats = fetch_series(srv.url + fname, "curl", 1, 0.0, srv.cert_path)
    entries = _new_entries(srv, seen)
    ns1, (u1, s1), st1 = srv.worker_cpu_ns(), _worker_ticks(srv), read_tls_stat()
    verified = verify_mode(srv.mode, st0, st1, access_entries=entries, support=support)
    return FetchRecord(seconds=stats.samples[0], cpu_ns=None if ns0 is None or ns1 is None else ns1 - ns0,
                       user_ms=1e3 * (u1 - u0) / CLK_TCK, system_ms=1e3 * (s1 - s0) / CLK_TCK,
                       tls_stat_delta=tls_stat_delta(st0, st1),
                       ssl_protocol=",".join(sorted({e.ssl_protocol for e in entries})) or "?", verified=verified)


def fetch_order(keys: Sequence[tuple[str, str]], counts: dict[str, int], seed: int) -> list[tuple[str, str]]:
    """Rounds of one fetch of every (server, file) still short of its count, each round in a
    seeded random order, so a slow minute of the emulator hits every mode alike."""
    rng = random.Random(seed)
    left = {k: counts[k[1]] for k in keys}
    out: list[tuple[str, str]] = []
    while any(left.values()):
        todo = [k for k in keys if left[k]]
        rng.shuffle(todo)
        for k in todo:
            left[k] -= 1
            out.append(k)
    return out


def run_series(docroot: Path, sizes: Sequence[int], counts: Sequence[int], seed: int,
               support: KtlsSupport) -> list[GuestCell]:
    """Every (mode, TLS version, file) fetched ``counts`` times (per size), interleaved; each
    combination's bytes checked once (sha256, untimed) first."""
    paths = make_files(docroot, sizes, seed)
    per_file = {p.name: n for p, n in zip(paths, counts)}
    sha = {p.name: file_sha256(p) for p in paths}
    with ExitStack() as stack:
        servers = {config_name(m, v): stack.enter_context(NginxServer(m, docroot, protocols=v or "TLSv1.3 TLSv1.2"))
                   for m, v in CONFIGS}
        cells = {(config_name(m, v), p.name): GuestCell(m, v, p.name, p.stat().st_size) for m, v in CONFIGS
                 for p in paths}
        for (name, fname), cell in cells.items():
            srv = servers[name]
            verify_download(srv.url + fname, "curl", srv.cert_path, sha[fname])
            cell.sha256_ok = True
        order = fetch_order(list(cells), per_file, seed)
        for i, (name, fname) in enumerate(order, 1):
            cells[(name, fname)].fetches.append(measured_fetch(servers[name], fname, support))
            print(f"{PROGRESS}fetch {i}/{len(order)}: {name} {fname}", flush=True)
    return list(cells.values())


def guest_facts() -> JsonDict:
    """The guest's kernel and (emulated) CPU, so the result says where it ran."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"kernel": os.uname().release, "cpu_model": model, "cpus": os.cpu_count(), "clk_tck": CLK_TCK}


def probe(docroot: Path) -> JsonDict:
    """The detection code's positive path: what :func:`detect_ktls` finds after ``modprobe
    tls``, and one 2 KB kTLS fetch (TLS 1.3) verified by the counters."""
    module = load_tls_module()
    support = detect_ktls()
    (path,) = make_files(docroot, [2048], 1)
    with NginxServer("ktls", docroot, protocols="TLSv1.3") as srv:
        record = measured_fetch(srv, path.name, support)
    return {"kind": "probe", "guest": guest_facts(), "modprobe": module, "support": support.to_dict(),
            "kernel_ktls": support.kernel_ktls, "fallback_reason": support.fallback_reason(),
            "fetch": asdict(record), "ktls_engaged": record.ktls_engaged}


def bench(docroot: Path, sizes: Sequence[int], counts: Sequence[int], seed: int) -> JsonDict:
    """The fetch series of every server, with what the guest is and what detection found."""
    t0 = time.perf_counter()
    module = load_tls_module()
    support = detect_ktls()
    cells = run_series(docroot, sizes, counts, seed, support)
    return {"kind": "bench", "guest": guest_facts(), "modprobe": module, "support": support.to_dict(),
            "configs": [config_name(m, v) for m, v in CONFIGS], "files": {size_label(s): s for s in sizes},
            "counts": {size_label(s): n for s, n in zip(sizes, counts)}, "seed": seed, "client": "curl",
            "cells": [c.to_dict() for c in cells], "elapsed_in_guest_s": time.perf_counter() - t0}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point inside the guest (which has printed :data:`BOOTED`): run, write ``OUT/guest.json``."""
    ap = argparse.ArgumentParser(prog="cryptoffload.apps.tls.guest_run")
    ap.add_argument("--out", type=Path, required=True, help="Folder shared with the host.")
    ap.add_argument("--probe", action="store_true", help="Detection and one kTLS fetch only.")
    ap.add_argument("--sizes", default="2048,67108864", help="File sizes in bytes.")
    ap.add_argument("--counts", default="10,2", help="Fetches per server for each size.")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    docroot = Path("/tmp/cryptoffload-guest-docroot")
    try:
        if args.probe:
            result = probe(docroot)
        else:
            sizes = [int(s) for s in args.sizes.split(",")]
            counts = [int(n) for n in args.counts.split(",")]
            result = bench(docroot, sizes, counts, args.seed)
    except Exception as exc:  # the host reports it: a traceback in the guest's console is lost
        result = {"kind": "error", "error": f"{type(exc).__name__}: {exc}"}
    (args.out / "guest.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"cryptoffload-guest: done ({result['kind']})", flush=True)
    return 0 if result["kind"] != "error" else 1


if __name__ == "__main__":
    sys.exit(main())
