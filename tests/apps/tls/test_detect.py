"""Detection of kernel TLS support, and the rule that kTLS is never claimed without a counter
that rose: on this kernel (no CONFIG_TLS) a kTLS request must be reported as its fallback."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tls_helpers import HAVE_NGINX, KERNEL_HAS_TLS

from cryptoffload.apps.tls import detect
from cryptoffload.apps.tls.detect import (NO_TLS_ULP, detect_ktls, nic_tls_features, parse_ethtool_features,
                                          parse_nginx_v, predict_mode, read_tls_stat, verify_mode)
from cryptoffload.apps.tls.nginx import AccessEntry, NginxServer
from cryptoffload.errors import ConfigError

needs_no_ktls = pytest.mark.skipif(KERNEL_HAS_TLS, reason="this kernel has the tls ULP; the fallback test needs one without")

TLS = AccessEntry(0.0, 200, 0.001, "TLSv1.3", "TLS_AES_256_GCM_SHA384", 2302, "GET / HTTP/1.1")
PLAIN = AccessEntry(0.0, 200, 0.001, "-", "-", 2302, "GET / HTTP/1.1")


@needs_no_ktls
def test_detect_on_this_machine_reports_no_tls_ulp() -> None:
    s = detect_ktls()
    assert s.tls_ulp.value is False
    assert NO_TLS_ULP in s.tls_ulp.reason and "ENOENT" in s.tls_ulp.reason
    assert s.tls_stat.value == {} and "absent" in s.tls_stat.reason
    assert s.fallback_reason() == NO_TLS_ULP
    assert read_tls_stat() == {}
    assert predict_mode("ktls", s) == f"requested ktls, will run user-space TLS ({NO_TLS_ULP})"
    # every finding says why
    for name, value, reason in s.rows():
        assert reason, name
    assert verify_mode("ktls", {}, {}) == f"requested ktls, ran user-space TLS ({NO_TLS_ULP})"
    assert verify_mode("ktls-nic", {}, {}, support=s).startswith(f"requested ktls-nic, ran user-space TLS ({NO_TLS_ULP}")


@pytest.mark.skipif(not HAVE_NGINX, reason="nginx not installed")
@needs_no_ktls
def test_real_ktls_request_is_reported_as_fallback(tmp_path: Path) -> None:
    (tmp_path / "f.bin").write_bytes(os.urandom(4096))
    before = read_tls_stat()
    with NginxServer("ktls", tmp_path, debug_log=True) as srv:
        subprocess.run(["curl", "-s", "-f", "-o", os.devnull, "--cacert", str(srv.cert_path), srv.url + "f.bin"],
                       check=True, timeout=30)
    evidence = srv.ktls_debug_evidence()
    assert evidence is not None
    assert evidence["ktls_send"] == 0 and evidence["ssl_sendfile"] == 0 and evidence["ssl_write"] > 0
    text = verify_mode("ktls", before, read_tls_stat(), access_entries=srv.access_entries(), nginx_debug=evidence)
    assert text.startswith(f"requested ktls, ran user-space TLS ({NO_TLS_ULP}")
    assert "TLSv1.3" in text


def test_verify_mode_needs_counter_evidence() -> None:
    # counters present but unchanged: never kTLS
    assert verify_mode("ktls", {"TlsTxSw": 5, "TlsTxDevice": 0}, {"TlsTxSw": 5, "TlsTxDevice": 0},
                       access_entries=[TLS]).startswith("requested ktls, ran user-space TLS (kTLS counters")
    assert "ran kTLS in the kernel, software crypto (TlsTxSw +2" in verify_mode(
        "ktls", {"TlsTxSw": 1}, {"TlsTxSw": 3})
    nic_sw = verify_mode("ktls-nic", {"TlsTxSw": 1, "TlsTxDevice": 0}, {"TlsTxSw": 2, "TlsTxDevice": 0})
    assert "software crypto" in nic_sw and "NIC did not encrypt" in nic_sw
    assert "ran kTLS with NIC offload (TlsTxDevice +4" in verify_mode(
        "ktls-nic", {"TlsTxDevice": 0}, {"TlsTxDevice": 4})
    assert verify_mode("tls", {"TlsTxSw": 0}, {"TlsTxSw": 0}).startswith("user-space TLS (OpenSSL) (verified")
    # requests without TLS in a TLS mode, or none at all
    assert "1 of 2 requests had no TLS" in verify_mode("tls", {}, {}, access_entries=[TLS, PLAIN])
    assert "not verified" in verify_mode("ktls", {}, {}, access_entries=[])


def test_verify_plain_from_access_log() -> None:
    assert verify_mode("plain", {}, {}, access_entries=[PLAIN, PLAIN]) == \
        "plain HTTP (verified: 2 requests logged without TLS)"
    assert "but 1 of 2 requests used TLS" in verify_mode("plain", {}, {}, access_entries=[PLAIN, TLS])
    with pytest.raises(ConfigError, match="unknown TLS mode"):
        verify_mode("dtls", {}, {})


def test_read_tls_stat(tmp_path: Path) -> None:
    p = tmp_path / "tls_stat"
    p.write_text("TlsCurrTxSw                     \t0\nTlsTxSw                         \t7\nTlsTxDevice 2\n")
    assert read_tls_stat(p) == {"TlsCurrTxSw": 0, "TlsTxSw": 7, "TlsTxDevice": 2}
    assert read_tls_stat(tmp_path / "absent") == {}


def test_parse_ethtool_and_nginx_v() -> None:
    feats = parse_ethtool_features("Features for eth0:\nrx-checksumming: on\ntls-hw-tx-offload: on\n"
                                   "tls-hw-rx-offload: off [fixed]\ntls-hw-record: off [fixed]\n")
    assert feats["tls-hw-tx-offload"] == "on" and feats["tls-hw-rx-offload"] == "off [fixed]"
    info = parse_nginx_v("nginx version: nginx/1.22.1\nbuilt with OpenSSL 3.0.22 25 Aug 2026 "
                         "(running with OpenSSL 3.0.19 27 Jan 2026)\nTLS SNI support enabled\n"
                         "configure arguments: --with-http_ssl_module --with-openssl-opt=enable-ktls\n")
    assert info["version"] == "1.22.1"
    assert info["built_with"] == "OpenSSL 3.0.22 25 Aug 2026"
    assert info["running_with"] == "OpenSSL 3.0.19 27 Jan 2026"
    assert "enable-ktls" in info["configure"]
    assert parse_nginx_v("nginx version: nginx/1.24.0\nbuilt with OpenSSL 3.0.13 30 Jan 2024\n")["running_with"] \
        == "OpenSSL 3.0.13 30 Jan 2024"


def test_missing_ethtool_is_tolerated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(detect, "ETHTOOL_PATHS", ())
    feats, why = nic_tls_features()
    assert feats is None and "Debian package ethtool" in why
    s = detect_ktls()
    assert s.nic_tx_offload.value is None and "ethtool" in s.nic_tx_offload.reason
