"""The Paillier benchmark script runs end to end (tiny durations) and writes its JSON.

Not a timing test: it only guards the script against rot, so `make bench` keeps working."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_script_smoke(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "paillier.py"), "--seconds", "0.01", "--rounds", "1",
                           "--bits", "1024", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    block = data["sizes"]["1024"]
    assert block["encryption_ops"]["phe"] > 0
    ours = [rate for name, rate in block["encryption_ops"].items() if name.startswith("ours ")]
    assert ours and max(ours) > block["encryption_ops"]["phe"]   # every path ran; the fastest beats phe
    assert block["encryption_path"] and block["targets"]
    assert "machine" in data and data["machine"]["cores"] >= 1
