"""benchmarks/he_cnn_cli.py, the instrument behind the README's he-cnn times: it runs, the first
call makes the keys and the later ones read them, and it writes its JSON with the machine. On
the emulator, one later call and one API image, to stay fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_records_first_and_later_calls(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "he_cnn_cli.py"), "--backend", "emulator",
                           "--calls", "1", "--images", "1", "--out", str(out)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["first"]["keys"] == "made" and [c["keys"] for c in doc["later"]] == ["reused"]
    assert doc["api"]["keys_reused"] and doc["machine"]["cores"] >= 1 and doc["summary"]["later_calls_median_s"] > 0
    assert "later calls: median" in proc.stdout
