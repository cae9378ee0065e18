"""Cipher calibration: the measured profile it writes, never how fast this machine is."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from cryptoffload.crypto import ciphers
from cryptoffload.errors import BackendUnavailable, ConfigError
from cryptoffload.machine import cpu_model
from cryptoffload.profiles import load_profile, write_profile
from cryptoffload.calibrate import ciphers as calibrate
from cryptoffload.calibrate.ciphers import CipherMeasurement

TINY = 0.004  # seconds per measurement: enough to exercise the code, far too short to matter


@pytest.fixture(scope="module")
def profile_path(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("cal") / "sub" / "ciphers.toml"
    return calibrate.calibrate_ciphers(out, seconds=TINY, progress=False, repeats=2)


def test_profile_has_every_available_cipher(profile_path) -> None:
    prof = load_profile(profile_path)
    assert prof.kind == "measured"
    assert prof.name == "measured-ciphers"
    avail = ciphers.available_ciphers()
    assert avail, "no cipher at all on this machine"
    for name in avail:
        assert prof.value(f"ciphers.{name}.software_mbps") > 0
        assert prof.value(f"ciphers.{name}.software_mbps_bulk") > 0
        for b in ciphers.backends_for(name):
            assert prof.value(f"ciphers.{name}.software_mbps_{b}") > 0
            assert prof.value(f"ciphers.{name}.software_mbps_bulk_{b}") > 0
        # the headline value is the fastest backend's
        per_backend = [prof.value(f"ciphers.{name}.software_mbps_{b}")
                       for b in ciphers.backends_for(name)]
        assert prof.value(f"ciphers.{name}.software_mbps") == max(per_backend)
        src = prof.source(f"ciphers.{name}.software_mbps")
        assert src.startswith(f"measured on {cpu_model()}, 1 core, ")
        assert "24 KiB messages incl. key setup" in src
        assert "no key setup" in prof.source(f"ciphers.{name}.software_mbps_bulk")
    assert set(prof.section("ciphers")) == set(avail)


def test_unavailable_ciphers_are_listed_with_a_reason(profile_path) -> None:
    meta = load_profile(profile_path).meta
    assert "rc6-ecb" in meta["unavailable"]
    assert meta["unavailable"] == [n for n in ciphers.CIPHERS
                                   if n not in ciphers.available_ciphers()]
    assert "libgcrypt" in meta["unavailable_reasons"]["rc6-ecb"]


def test_meta_records_machine_and_libraries(profile_path) -> None:
    meta = load_profile(profile_path).meta
    assert meta["cipher_ids"] == list(ciphers.CIPHERS)
    assert meta["cpu"] == cpu_model()
    assert meta["cores"] >= 1
    assert meta["message_bytes"] == 24 * 1024
    assert set(meta["libraries"]) >= {b for n in ciphers.available_ciphers()
                                       for b in ciphers.backends_for(n)}
    assert len(meta["date"]) == 10  # ISO date


def test_progress_prints_the_comparison_table(tmp_path) -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=120, color_system=None)
    path = calibrate.calibrate_ciphers(
        tmp_path / "c.toml", seconds=TINY, progress=True, repeats=1, console=console
    )
    text = buf.getvalue()
    assert path.is_file()
    assert "AES-ECB" in text and "266.7" in text  # paper's Pentium 4 figure beside ours
    assert "RC6-ECB" in text and "unavailable" in text


def _fake_profile(tmp_path):
    results = [
        CipherMeasurement("aes-ecb", "openssl", 2000.0, 4000.0),
        CipherMeasurement("aes-ecb", "libgcrypt", 1000.0, 5000.0),
        CipherMeasurement("des-ecb", "libgcrypt", 258.0, 300.0),
    ]
    meta, values = calibrate.build_profile(results, date="2026-01-02")
    return load_profile(write_profile(tmp_path / "fake.toml", meta, values))


def test_build_profile_picks_fastest_per_request_and_best_bulk(tmp_path) -> None:
    prof = _fake_profile(tmp_path)
    assert prof.value("ciphers.aes-ecb.software_mbps") == 2000.0
    assert "OpenSSL" in prof.source("ciphers.aes-ecb.software_mbps")
    assert prof.value("ciphers.aes-ecb.software_mbps_bulk") == 5000.0
    assert "libgcrypt" in prof.source("ciphers.aes-ecb.software_mbps_bulk")
    assert prof.value("ciphers.aes-ecb.software_mbps_libgcrypt") == 1000.0
    assert "2026-01-02" in prof.source("ciphers.des-ecb.software_mbps")
    assert "serpent" in prof.meta["unavailable"]  # not measured -> listed, not dropped


def test_comparison_table_ratio_against_pentium4(tmp_path) -> None:
    buf = io.StringIO()
    Console(file=buf, width=140, color_system=None).print(
        calibrate.comparison_table(_fake_profile(tmp_path))
    )
    text = buf.getvalue()
    assert "2.0x" in text  # 258 / 129 (DES-ECB on the Pentium 4)
    assert "7.5x" in text  # 2000 / 266.7 (AES-ECB)
    assert "TWOFISH" in text


def test_measure_cipher_returns_positive_mbps() -> None:
    name = ciphers.available_ciphers()[0]
    backend = ciphers.backends_for(name)[0]
    for setup in (True, False):
        v = calibrate.measure_cipher(name, backend, 4096, TINY, include_setup=setup, repeats=1)
        assert v > 0


def test_measure_cipher_argument_errors() -> None:
    with pytest.raises(ConfigError, match="multiple"):
        calibrate.measure_cipher("aes-ecb", "openssl", 1000, TINY)
    with pytest.raises(ConfigError, match="seconds"):
        calibrate.measure_cipher("aes-ecb", "openssl", 1024, 0)
    with pytest.raises(ConfigError, match="message_bytes must be a positive integer"):
        calibrate.measure_cipher("aes-ecb", "openssl", 1024.0, TINY)
    with pytest.raises(ConfigError, match="repeats must be a positive integer"):
        calibrate.measure_cipher("aes-ecb", "openssl", 1024, TINY, repeats=0)
    with pytest.raises(ConfigError, match="unknown cipher"):
        calibrate.measure_cipher("rc5", "openssl", 1024, TINY)
    with pytest.raises(BackendUnavailable):
        calibrate.measure_cipher("rc6-ecb", "libgcrypt", 1024, TINY)


def test_paper_table_covers_all_ciphers() -> None:
    assert list(calibrate.PAPER_P4_MBPS) == list(ciphers.CIPHERS)
    assert calibrate.PAPER_P4_MBPS["serpent"] == 842.8


def test_main_quiet_writes_a_loadable_profile(tmp_path) -> None:
    out = tmp_path / "m.toml"
    assert calibrate.main(["--out", str(out), "--seconds", str(TINY), "--repeats", "1",
                           "--quiet"]) == 0
    assert load_profile(out).kind == "measured"
    assert calibrate.main(["--out", str(out), "--seconds", "-1", "--quiet"]) == 2
