"""Boot a Linux guest whose kernel has kTLS and run :mod:`.guest_run` in it.

Why a guest: this machine's kernel has no ``tls`` module, so kTLS never engages here and
:mod:`.detect` has only ever seen the negative case. Debian's own kernel (package
``linux-image-amd64``) has it; virtme-ng (``vng``, in its own venv ``.venv-guest``) boots that
kernel under QEMU with this machine's root filesystem shared read-only, so the guest runs this
very checkout, nginx, curl and OpenSSL. ``/dev/kvm`` here is a nested paravirtual KVM that
cannot boot a stock kernel, so the guest always runs under QEMU's TCG emulation
(``--disable-kvm``; never ``-enable-kvm``): every instruction is emulated, which inflates times
but not where the CPU goes (user or system, which process).

:func:`run_in_guest` starts vng in its own process group, waits for the guest's
:data:`~.guest_run.BOOTED` line within the boot timeout and for the end within the run timeout,
always kills the whole group on the way out, and reads ``guest.json`` from a folder shared
read-write with the guest. Missing tools or a boot that does not finish raise
:class:`GuestUnavailable` with one line saying what is missing and how to get it.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import shlex
import shutil
import signal
from types import FrameType
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Optional, Sequence

from cryptoffload.apps.tls.guest_run import BOOTED, PROGRESS
from cryptoffload.errors import BackendUnavailable
from cryptoffload.machine import machine_info

#: The venv virtme-ng is installed in (``make ktls``), relative to the checkout.
GUEST_VENV = ".venv-guest"
#: Where Debian's kernel package puts its kernels.
KERNEL_GLOB = "/boot/vmlinuz-*"
QEMU = "qemu-system-x86_64"
SETUP_HINT = "run `make ktls` (apt: qemu-system-x86 linux-image-amd64 busybox-static; pip: virtme-ng in .venv-guest)"
BOOT_TIMEOUT_S = 300.0  # a TCG boot takes 15 s on an idle core, ~100 s on this shared machine
RUN_TIMEOUT_S = 1800.0  # six 64 MB fetches per server under TCG: ~12 min on a shared 2-core machine
TAIL_LINES = 5


class GuestUnavailable(BackendUnavailable):
    """The guest cannot be had: a tool or the kernel is missing, or it did not boot in time."""


@dataclass(frozen=True)
class GuestTools:
    """What booting the guest needs: vng (and its virtme-run beside it), QEMU and a kernel."""

    vng: str
    qemu: str
    kernel: str


def _checkout_root() -> Path:
    """The checkout this package runs from (src layout: three folders up)."""
    return Path(__file__).resolve().parents[4]


def kernel_with_ktls(pattern: str = KERNEL_GLOB, modules: str = "/lib/modules") -> Optional[str]:
    """The newest installed kernel whose config has ``CONFIG_TLS`` (module or built in) and whose
    modules are installed (the guest loads ``tls`` from them)."""
    found = []
    for image in glob.glob(pattern):
        release = Path(image).name[len("vmlinuz-"):]
        config = Path(image).with_name(f"config-{release}")
        try:
            text = config.read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        if re.search(r"^CONFIG_TLS=[ym]$", text, re.M) and os.path.isdir(f"{modules}/{release}"):
            found.append(image)
    return sorted(found, key=_release_key)[-1] if found else None


def _release_key(image: str) -> list[int | str]:
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", image)]


def find_guest_tools(venv: Optional[Path] = None, kernel_glob: str = KERNEL_GLOB) -> GuestTools:
    """vng, QEMU and a kTLS kernel, or :class:`GuestUnavailable` naming the first one missing."""
    venv = venv if venv is not None else Path(os.environ.get("CRYPTOFFLOAD_GUEST_VENV", _checkout_root() / GUEST_VENV))
    qemu = shutil.which(QEMU)
    if qemu is None:
        raise GuestUnavailable(f"no {QEMU} (Debian package qemu-system-x86): {SETUP_HINT}")
    kernel = kernel_with_ktls(kernel_glob)
    if kernel is None:
        raise GuestUnavailable(f"no kernel with CONFIG_TLS and its modules under {kernel_glob} "
                               f"(Debian package linux-image-amd64): {SETUP_HINT}")
    vng = venv / "bin" / "vng"
    if not os.access(vng, os.X_OK):
        vng_path = shutil.which("vng")
        if vng_path is None:
            raise GuestUnavailable(f"no vng (virtme-ng) in {venv} or on PATH: {SETUP_HINT}")
        vng = Path(vng_path)
    if shutil.which("busybox") is None:
        raise GuestUnavailable(f"no busybox (Debian package busybox-static; virtme-ng builds its initramfs with it): "
                               f"{SETUP_HINT}")
    return GuestTools(str(vng), qemu, kernel)


def guest_program(out: Path, args: Sequence[str]) -> str:
    """The shell command the guest runs: :data:`BOOTED` at once (importing the package takes
    most of a minute under emulation, which is not the boot), then this checkout's
    :mod:`.guest_run` on this Python."""
    src = Path(__file__).resolve().parents[3]
    cmd = ["env", f"PYTHONPATH={src}", "PYTHONDONTWRITEBYTECODE=1", sys.executable, "-m",
           "cryptoffload.apps.tls.guest_run", "--out", str(out), *args]
    return f"echo {shlex.quote(BOOTED)}; " + " ".join(shlex.quote(c) for c in cmd)


def vng_command(tools: GuestTools, program: str, rwdir: Path, cpus: int = 2, memory: str = "2G") -> list[str]:
    """vng booting ``tools.kernel`` under TCG (``--disable-kvm``: the nested KVM here cannot boot
    it) with ``rwdir`` writable, running ``program``."""
    return [tools.vng, "--disable-kvm", "--run", tools.kernel, "--cpus", str(cpus), "--memory", memory,
            f"--rwdir={rwdir}", "--exec", program]


class _Console:
    """The guest's console, read on a thread: its lines, when :data:`BOOTED` appeared, and
    its progress lines handed to ``echo``."""

    def __init__(self, stream: IO[str], echo: Optional[Callable[[str], None]] = None) -> None:
        self.lines: list[str] = []
        self.booted = threading.Event()
        self.echo = echo
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))
            if BOOTED in line:
                self.booted.set()
            at = line.find(PROGRESS)
            if self.echo is not None and at >= 0:
                self.echo(line[at:].rstrip())

    def tail(self) -> str:
        return " | ".join(ln.strip() for ln in self.lines[-TAIL_LINES:] if ln.strip()) or "no output"


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """TERM, then KILL, the vng process group (vng, virtme-run, QEMU): nothing outlives the run."""
    for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            if sig == signal.SIGTERM:
                os.killpg(proc.pid, signal.SIGKILL)  # any child left behind by the leader
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _exit_on_sigterm() -> Callable[[int, FrameType | None], object] | int | None:
    """SIGTERM raises SystemExit while the guest runs, so the ``finally`` that kills vng's group
    (its own session: a signal to ours never reaches it) still runs; the previous handler, or
    None off the main thread (where handlers cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_exit)


def _guest_env(tools: GuestTools) -> dict[str, str]:
    """vng runs virtme-run from PATH: its venv's bin first."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(tools.vng).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _wait(proc: subprocess.Popen[str], console: _Console, boot_timeout_s: float, timeout_s: float,
          cmd: Sequence[str]) -> None:
    """Until the guest ends: :class:`GuestUnavailable` if it does not boot in time, a
    :class:`~cryptoffload.errors.BackendUnavailable` if it does not finish in time."""
    t0 = time.monotonic()
    while not console.booted.wait(0.5):
        if proc.poll() is not None:
            raise GuestUnavailable(f"the guest ended before booting (exit {proc.returncode}): {console.tail()}")
        if time.monotonic() - t0 > boot_timeout_s:
            raise GuestUnavailable(f"the guest did not boot within {boot_timeout_s:g} s "
                                   f"({shlex.join(cmd[:4])} ...): {console.tail()}")
    try:
        proc.wait(timeout=max(1.0, timeout_s - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        raise BackendUnavailable(f"the guest booted but did not finish within {timeout_s:g} s: {console.tail()}") from None


def run_in_guest(args: Sequence[str], *, tools: Optional[GuestTools] = None, boot_timeout_s: float = BOOT_TIMEOUT_S,
                 timeout_s: float = RUN_TIMEOUT_S, cpus: int = 2, memory: str = "2G",
                 echo: Optional[Callable[[str], None]] = None) -> dict[str, Any]:
    """Boot the guest, run :mod:`.guest_run` with ``args`` in it and return its JSON (with the
    host's wall time added); the guest and everything vng started are stopped on every path.
    ``echo`` gets the guest's progress lines as they come."""
    tools = tools if tools is not None else find_guest_tools()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cryptoffload-guest-") as tmp:
        rwdir = Path(tmp)
        cmd = vng_command(tools, guest_program(rwdir, args), rwdir, cpus, memory)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", env=_guest_env(tools), start_new_session=True)
        previous = _exit_on_sigterm()
        try:
            console = _Console(proc.stdout, echo) if proc.stdout is not None else None
            assert console is not None
            _wait(proc, console, boot_timeout_s, timeout_s, cmd)
        finally:
            _kill_group(proc)
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        result = _read_result(rwdir / "guest.json", console)
    result["host"] = {"wall_s": time.perf_counter() - t0, "kernel_image": tools.kernel, "cpus": cpus,
                      "memory": memory, "emulation": "QEMU TCG (vng --disable-kvm)", "command": shlex.join(cmd[:-2]),
                      # a stored run names its machine and date (provenance "stored")
                      "machine": machine_info(), "date": time.strftime("%Y-%m-%d", time.gmtime())}
    return result


def _read_result(path: Path, console: _Console) -> dict[str, Any]:
    try:
        result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise BackendUnavailable(f"the guest wrote no result ({path.name}): {console.tail()}") from None
    if result.get("kind") == "error":
        raise BackendUnavailable(f"the guest run failed: {result.get('error')}")
    return result


@dataclass(frozen=True)
class GuestCellSummary:
    """One (mode, TLS version, file) of a guest bench, averaged per fetch: curl's time, the
    worker's CPU (``cpu_ms`` from schedstat; ``user_ms``/``system_ms`` from clock ticks, so
    10 ms steps per fetch) and how many kTLS fetches the counters showed in the kernel;
    ``cpu_rse`` the worker CPU's run-to-run noise (relative standard error of its mean)."""

    mode: str
    tls_version: Optional[str]
    file: str
    size: int
    fetches: int
    ktls_engaged: int
    fetch_ms: float
    cpu_ms: Optional[float]
    user_ms: float
    system_ms: float
    ssl_protocol: str
    cpu_rse: Optional[float] = None

    @property
    def name(self) -> str:
        return self.mode if self.tls_version is None else f"{self.mode} {self.tls_version}"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _relative_se(values: Sequence[float]) -> Optional[float]:
    """The mean's standard error over the mean: the run's own noise of a per-fetch mean
    (``None`` below two fetches, where one run says nothing about the next)."""
    if len(values) < 2 or not _mean(values):
        return None
    return statistics.stdev(values) / math.sqrt(len(values)) / _mean(values)


def summarize_cell(cell: dict[str, Any]) -> GuestCellSummary:
    """A guest cell's fetches (``guest.json``) as per-fetch means."""
    fetches = cell.get("fetches") or []
    ns = [f["cpu_ns"] for f in fetches if f.get("cpu_ns") is not None]
    return GuestCellSummary(cell["mode"], cell.get("tls_version"), cell["file"], int(cell["size"]), len(fetches),
                            sum(bool(f.get("ktls_engaged")) for f in fetches), 1e3 * _mean([f["seconds"] for f in fetches]),
                            _mean(ns) / 1e6 if ns and len(ns) == len(fetches) else None,
                            _mean([f["user_ms"] for f in fetches]), _mean([f["system_ms"] for f in fetches]),
                            ",".join(sorted({f.get("ssl_protocol", "?") for f in fetches})),
                            _relative_se(ns) if len(ns) == len(fetches) else None)


def summarize(result: dict[str, Any]) -> list[GuestCellSummary]:
    """Every cell of a guest bench result, as :func:`summarize_cell` gives it."""
    if result.get("kind") != "bench":
        raise BackendUnavailable(f"not a guest bench result (kind {result.get('kind')!r})")
    return [summarize_cell(c) for c in result.get("cells", [])]


def unverified_ktls(cells: Sequence[GuestCellSummary]) -> list[str]:
    """kTLS cells with a fetch the counters did not show in the kernel (``"ktls TLSv1.2 64M: 2 of 3"``)."""
    return [f"{c.name} {c.file}: {c.ktls_engaged} of {c.fetches}" for c in cells
            if c.mode == "ktls" and c.ktls_engaged != c.fetches]
