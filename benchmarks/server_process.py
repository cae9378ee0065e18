"""A ``cryptoffload`` server in a subprocess, as the memory benchmarks drive it: started with its
arguments, its URL read from its "listening on" line, its resident memory read from ``/proc``.

Shared by ``http_limits.py`` and ``he_cnn_server_memory.py`` (each script imports it from this
folder, which Python puts first on the path of a script it runs).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path


class ServerProcess:
    """``python -m cryptoffload.cli ARGS`` in ``cwd`` (``env``: variables to add)."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None, start_s: float = 180) -> None:
        full = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        self.proc = subprocess.Popen([sys.executable, "-m", "cryptoffload.cli", *args], cwd=cwd, env=full,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + start_s
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if " listening on " in line:
                self.url = line.split(" listening on ", 1)[1].strip()
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{args[:2]} did not start in {start_s:.0f} s")
        else:
            raise RuntimeError(f"{args[:2]} exited at start")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for _ in self.proc.stdout:
            pass

    def memory(self) -> dict[str, int]:
        """Peak (``VmHWM``) and current (``VmRSS``) resident memory, bytes."""
        fields = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0]) * 1024
        return fields

    def reset_peak(self) -> None:
        """Start ``VmHWM`` again from the current resident size."""
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
