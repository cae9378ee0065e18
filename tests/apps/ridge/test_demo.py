"""``ridge demo``: CSP and platform as subprocesses, providers and buyer in process, every
message over a real socket -- TLS with a certificate made for the run unless ``--insecure-http``
-- and the model equals the in-process protocol's exactly. No secret outlives the demo."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from cli_helpers import assert_user_error
from ridge_helpers import cli, in_process, no_process_mentions

from cryptoffload.apps.ridge import RidgeParams
from cryptoffload.workloads.ridge_data import generate


def _demo_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("ridge-demo-*"))


def test_demo_over_tls_equals_in_process(tmp_path: Path, keys: tuple) -> None:
    work = tmp_path / "work"
    before = _demo_dirs()
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--out", "demo.json", "--workdir",
               str(work), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "CSP at https://" in proc.stderr and "platform at https://" in proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    data = generate(200, 4, 1)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys)
    assert out["l2_diff"] <= out["error_bound"]
    assert "scikit-learn" in proc.stdout and "error bound" in proc.stdout
    assert sorted(p.name for p in work.iterdir()) == ["platform.db"]       # no key, token or certificate here
    assert not _demo_dirs() - before, "the demo's private folder (keys, tokens) outlived it"
    assert no_process_mentions(str(work)), "a demo server outlived the demo"


def test_demo_per_provider_three_providers_plain_http(tmp_path: Path, keys: tuple) -> None:
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--providers", "3", "--mode",
               "per-provider", "--seed", "7", "--out", "demo.json", "--no-progress", "--insecure-http")
    assert proc.returncode == 0, proc.stderr
    assert "CSP at http://" in proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    assert out["uploads"] == 3 and out["records"] == 200
    data = generate(200, 4, 7)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys, mode="per-provider", providers=3)


def test_bad_numbers_are_one_line_before_any_server_starts(tmp_path: Path) -> None:
    token = tmp_path / "t.token"
    token.write_text("x.0123456789abcdef0123456789")
    token.chmod(0o600)
    tok = ["--csp-token-file", str(token), "--providers", "a", "--db", "p.db", "--port", "0"]
    cases = [
        (["demo", "--upload-bits", "1023"], "even number of bits"),
        (["demo", "--upload-bits", "100000"], "8192"),
        (["demo", "--batch", "0"], "--batch"),
        (["demo", "--upload-bits", "1024"], "insecure-study-size"),  # 2048 unless a study size is asked for
        (["csp", "--port", "0", "--max-records", "10", "--d", "2", "--upload-bits", "1024"], "insecure-study-size"),
        (["csp", "--port", "0", "--max-records", "10", "--solve-bits", "12"], "bits"),
        (["platform", "--csp", "https://127.0.0.1:9", "--workers", "0", *tok], "--workers"),
        (["platform", "--csp", "https://127.0.0.1:9", "--wait-csp", "nan", *tok], "--wait-csp"),
        (["provider", "--platform", "https://127.0.0.1:9", "--data", "generate:n=5", "--token-file", str(token),
          "--csp-fingerprint", "0" * 64, "--batch", "0"], "--batch"),
        (["buyer", "--platform", "https://127.0.0.1:9", "--csp", "https://127.0.0.1:9", "--buyer-token-file",
          str(token), "--timeout", "-1"], "--timeout"),
    ]
    for args, needle in cases:
        assert_user_error(cli(tmp_path, "ridge", *args), needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.token"]
