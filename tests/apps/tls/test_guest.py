"""The guest launcher: missing tools and a boot that never finishes are one-line errors, the
guest's whole process group is gone afterwards, its JSON comes back; and the detection code's
positive path, run in a real guest whose kernel has kTLS (skipped, with the reason, where the
guest cannot be had; 90 s on this shared 2-core machine under TCG)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import stat
import time
from pathlib import Path

import pytest

from cryptoffload.procfs import read_proc_stat
from cryptoffload.apps.tls import guest
from cryptoffload.apps.tls.guest import (GuestTools, GuestUnavailable, find_guest_tools, guest_program, kernel_with_ktls,
                                         run_in_guest, summarize_cell, unverified_ktls, vng_command)
from cryptoffload.apps.tls.guest_run import BOOTED
from cryptoffload.errors import BackendUnavailable

try:
    TOOLS = find_guest_tools()
    WHY_NO_GUEST = ""
except GuestUnavailable as exc:
    TOOLS, WHY_NO_GUEST = None, str(exc)


def fake_vng(tmp_path: Path, body: str) -> GuestTools:
    """A stand-in for vng: a shell script given vng's arguments (``--rwdir=DIR`` among them)."""
    script = tmp_path / "vng"
    script.write_text("#!/bin/sh\nfor a; do case $a in --rwdir=*) RW=${a#--rwdir=};; esac; done\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return GuestTools(str(script), "/usr/bin/true", "/boot/vmlinuz-test")


def test_vng_command_boots_under_tcg_with_the_shared_folder() -> None:
    tools = GuestTools("/v/bin/vng", "/usr/bin/qemu-system-x86_64", "/boot/vmlinuz-6.1.0-56-amd64")
    assert vng_command(tools, "env X=1 python -m m", Path("/tmp/g"), 2, "2G") == [
        "/v/bin/vng", "--disable-kvm", "--run", "/boot/vmlinuz-6.1.0-56-amd64", "--cpus", "2", "--memory", "2G",
        "--rwdir=/tmp/g", "--exec", "env X=1 python -m m"]


def test_guest_program_says_booted_first_then_runs_this_checkout() -> None:
    src = Path(guest.__file__).resolve().parents[3]
    assert guest_program(Path("/out/g"), ["--probe"]) == (
        f"echo 'cryptoffload-guest: booted'; env PYTHONPATH={src} PYTHONDONTWRITEBYTECODE=1 {sys.executable} "
        "-m cryptoffload.apps.tls.guest_run --out /out/g --probe")


def test_no_qemu_is_one_line_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guest, "QEMU", "qemu-system-nonexistent")
    with pytest.raises(GuestUnavailable, match=r"^no qemu-system-nonexistent \(Debian package qemu-system-x86\): "
                                               r"run `make ktls`"):
        find_guest_tools()


def test_no_kernel_with_ktls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guest.shutil, "which", lambda name: f"/usr/bin/{name}")
    (tmp_path / "vmlinuz-9.9-x").write_bytes(b"")
    (tmp_path / "config-9.9-x").write_text("CONFIG_TLS is not set\n")
    with pytest.raises(GuestUnavailable, match=r"^no kernel with CONFIG_TLS .*linux-image-amd64"):
        find_guest_tools(kernel_glob=str(tmp_path / "vmlinuz-*"))
    assert kernel_with_ktls(str(tmp_path / "vmlinuz-*")) is None


def test_kernel_with_ktls_takes_the_newest_with_config_and_modules(tmp_path: Path) -> None:
    for release, config in (("6.1.0-9-amd64", "CONFIG_TLS=m"), ("6.1.0-10-amd64", "CONFIG_TLS=y"),
                            ("6.1.0-11-amd64", "# CONFIG_TLS is not set")):
        (tmp_path / f"vmlinuz-{release}").write_bytes(b"")
        (tmp_path / f"config-{release}").write_text(config + "\n")
        (tmp_path / "modules" / release).mkdir(parents=True)
    found = kernel_with_ktls(str(tmp_path / "vmlinuz-*"), modules=str(tmp_path / "modules"))
    assert found == str(tmp_path / "vmlinuz-6.1.0-10-amd64")


def test_result_comes_back_from_the_shared_folder(tmp_path: Path) -> None:
    tools = fake_vng(tmp_path, f'echo "{BOOTED}"\necho \'{{"kind": "bench", "cells": []}}\' > "$RW/guest.json"\n')
    result = run_in_guest(["--probe"], tools=tools, boot_timeout_s=20, timeout_s=30)
    assert result["kind"] == "bench" and result["cells"] == []
    assert result["host"]["emulation"] == "QEMU TCG (vng --disable-kvm)"


def test_boot_timeout_is_one_error_and_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    tools = fake_vng(tmp_path, f'echo starting\nsleep 300 &\necho $! > {pidfile}\nwait\n')
    t0 = time.monotonic()
    with pytest.raises(GuestUnavailable, match=r"^the guest did not boot within 1 s \(.*vng --disable-kvm --run "
                                               r"/boot/vmlinuz-test \.\.\.\): starting$"):
        run_in_guest([], tools=tools, boot_timeout_s=1, timeout_s=30)
    assert time.monotonic() - t0 < 15
    child = read_proc_stat(int(pidfile.read_text()))
    assert child is None or child.state == "Z"  # the guest's child (QEMU, in real life) is gone too


def test_sigterm_to_the_host_stops_the_guest(tmp_path: Path) -> None:
    """vng runs in a session of its own, so a SIGTERM to us must be passed on by killing it."""
    pidfile = tmp_path / "child.pid"
    tools = fake_vng(tmp_path, f'echo "{BOOTED}"\nsleep 300 &\necho $! > {pidfile}\nwait\n')
    code = (f"from cryptoffload.apps.tls.guest import GuestTools, run_in_guest\n"
            f"run_in_guest([], tools=GuestTools({tools.vng!r}, 'q', 'k'), boot_timeout_s=120, timeout_s=180)\n")
    host = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    deadline = time.monotonic() + 120  # a bound for a hang: the host's import alone took 20 s at load 8
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline and host.poll() is None
        time.sleep(0.1)
    host.send_signal(signal.SIGTERM)
    assert host.wait(timeout=30) == 128 + signal.SIGTERM
    child = read_proc_stat(int(pidfile.read_text()))
    assert child is None or child.state == "Z"


def test_guest_error_and_missing_result(tmp_path: Path) -> None:
    tools = fake_vng(tmp_path, f'echo "{BOOTED}"\necho \'{{"kind": "error", "error": "OSError: x"}}\' > "$RW/guest.json"\n')
    with pytest.raises(BackendUnavailable, match=r"^the guest run failed: OSError: x$"):
        run_in_guest([], tools=tools, boot_timeout_s=20, timeout_s=30)
    tools = fake_vng(tmp_path, f'echo "{BOOTED}"\necho last words\n')
    with pytest.raises(BackendUnavailable, match=r"^the guest wrote no result \(guest.json\): .*last words$"):
        run_in_guest([], tools=tools, boot_timeout_s=20, timeout_s=30)


def cell(mode: str, engaged: list[bool]) -> dict:
    return {"mode": mode, "tls_version": "TLSv1.3", "file": "64M.bin", "size": 64 << 20, "fetches": [
        {"seconds": 2.0 + i, "cpu_ns": 1_000_000 * (10 + i), "user_ms": 10.0 * i, "system_ms": 20.0,
         "ssl_protocol": "TLSv1.3", "ktls_engaged": e} for i, e in enumerate(engaged)]}


def test_summaries_average_per_fetch_and_name_unverified_ktls() -> None:
    s = summarize_cell(cell("ktls", [True, False]))
    assert (s.name, s.fetches, s.ktls_engaged, s.fetch_ms, s.cpu_ms, s.user_ms, s.system_ms, s.ssl_protocol) == (
        "ktls TLSv1.3", 2, 1, 2500.0, 10.5, 5.0, 20.0, "TLSv1.3")
    assert unverified_ktls([s, summarize_cell(cell("ktls", [True, True])), summarize_cell(cell("tls", [False]))]) == [
        "ktls TLSv1.3 64M.bin: 1 of 2"]


@pytest.mark.skipif(TOOLS is None, reason=f"the guest cannot be had here: {WHY_NO_GUEST}")
def test_detection_positive_path_in_a_guest_with_ktls() -> None:
    """detect_ktls and verify_mode on a kernel where kTLS engages: the case this machine never shows."""
    result = run_in_guest(["--probe"], tools=TOOLS)
    assert result["modprobe"] == "modprobe tls: ok"
    assert result["kernel_ktls"] is True and result["fallback_reason"] is None
    support = result["support"]
    assert support["tls_ulp"]["reason"].startswith("setsockopt TCP_ULP 'tls' succeeded")
    assert support["tls_stat"]["value"]["TlsTxSw"] >= 0 and support["nginx_ktls"]["value"] is True
    fetch = result["fetch"]
    assert fetch["verified"].startswith("requested ktls, ran kTLS in the kernel, software crypto (TlsTxSw +1; "
                                        "TLSv1.3 TLS_AES_256_GCM_SHA384)"), fetch["verified"]
    assert fetch["tls_stat_delta"]["TlsTxSw"] == 1 and fetch["tls_stat_delta"].get("TlsTxDevice", 0) == 0
    assert result["ktls_engaged"] is True
    json.dumps(result)
