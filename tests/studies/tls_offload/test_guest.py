"""The guest's kTLS rows in the TLS-offload study: labelled stored and emulated, beside the
model's kTLS/TLS CPU ratio, with the CPU kTLS saved per request and per byte and where it went."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cryptoffload.errors import InputError
from cryptoffload.report.result import StudyResult
from cryptoffload.studies.frame import add_headline
from cryptoffload.sim.tls import smartnic as nic
from cryptoffload.studies.tls_offload import guest as tg

SMALL, LARGE = 2048, 64 << 20


def cell(mode: str, version: str | None, size: int, cpu_ms: float, user_ms: float, system_ms: float) -> dict:
    fetches = [{"seconds": 0.5, "cpu_ns": int(cpu_ms * 1e6), "user_ms": user_ms, "system_ms": system_ms,
                "ssl_protocol": version or "-", "ktls_engaged": mode == "ktls"} for _ in range(5)]
    return {"mode": mode, "tls_version": version, "file": "2K.bin" if size == SMALL else "64M.bin", "size": size,
            "fetches": fetches}


GUEST = {"kind": "bench", "counts": {"2K": 2, "64M": 2},
         "guest": {"kernel": "6.1.0-56-amd64", "cpu_model": "QEMU TCG CPU version 2.5+"},
         "host": {"emulation": "QEMU TCG (vng --disable-kvm)", "machine": {"cpu": "AMD EPYC"}, "date": "2026-11-27"},
         "cells": [cell("plain", None, SMALL, 1.0, 0.0, 0.0),
                   cell("tls", "TLSv1.3", SMALL, 20.0, 10.0, 10.0), cell("ktls", "TLSv1.3", SMALL, 21.0, 10.0, 10.0),
                   cell("tls", "TLSv1.3", LARGE, 2000.0, 1300.0, 700.0),
                   cell("ktls", "TLSv1.3", LARGE, 1677.0, 0.0, 1680.0)]}


def model() -> nic.TlsCostModel:
    costs = nic.MeasuredCosts({SMALL: 0.2e-3, LARGE: 6.5e-3}, {SMALL: 1.1e-3, LARGE: 42e-3}).with_handshake()
    return nic.TlsCostModel(costs, nic.TlsOffloadParams.from_profile())


def test_rows_say_stored_and_emulated_and_stand_beside_the_models_ratio() -> None:
    res = StudyResult("tls-offload", "t", "quick", 1, "test", {})
    costs = model()
    [res.add(t) for t in tg.guest_tables(GUEST, costs, "simulated", [])]
    t = res.tables["ktls_guest"]
    rows = {(r[0], r[1]): dict(zip(t.columns, r)) for r in t.rows}
    k = rows[("ktls TLSv1.3", "64M.bin")]
    assert k["provenance"] == ("stored (measured in an emulated guest: kernel 6.1.0-56-amd64, QEMU TCG CPU version "
                               "2.5+, QEMU TCG (vng --disable-kvm) on AMD EPYC, 2026-11-27; CPU split and kTLS counters "
                               "measured, times emulated)")
    assert (k["fetches"], k["ktls_verified"], k["worker_cpu_ms"], k["user_ms"], k["system_ms"]) == (5, 5, 1677.0, 0.0,
                                                                                                  1680.0)
    assert k["ktls_over_tls_cpu"] == pytest.approx(0.8385)
    assert k["model_ktls_over_tls_cpu"] == costs.cost("ktls", LARGE).cpu_s / costs.cost("tls", LARGE).cpu_s
    assert t.cell_provenance(0, "model_ktls_over_tls_cpu") == "simulated" and t.cell_provenance(0, "user_ms") == "stored"
    assert rows[("tls TLSv1.3", "64M.bin")]["ktls_verified"] is None
    assert rows[("plain", "2K.bin")]["model_ktls_over_tls_cpu"] is None


def test_saving_per_request_per_byte_and_where_it_went() -> None:
    res = StudyResult("tls-offload", "t", "quick", 1, "test", {})
    [res.add(t) for t in tg.guest_tables(GUEST, model(), "simulated", [])]
    t = res.tables["ktls_guest_saving"]
    rows = [dict(zip(t.columns, r)) for r in t.rows]
    assert [(r["tls_version"], r["file"]) for r in rows] == [("TLSv1.3", "2K.bin"), ("TLSv1.3", "64M.bin")]
    small, large = rows
    assert (small["saved_ms"], small["saved_ns_per_byte"]) == (-1.0, None)
    assert large["saved_ms"] == 323.0 and large["saved_pct"] == pytest.approx(16.15)
    assert large["saved_ns_per_byte"] == pytest.approx(1e6 * 324.0 / (LARGE - SMALL))
    assert (large["user_moved_ms"], large["system_added_ms"]) == (1300.0, 980.0)
    assert large["provenance"].startswith("derived")
    assert res.headline == []
    add_headline(res, tg.guest_claims(GUEST))
    ours = ("kTLS in an emulated guest (TLSv1.3, 64M.bin): 16.1 % less worker CPU than user-space TLS "
            "(4.83 ns/byte, emulated); 1300 ms user time left, 980 ms system time came (the encryption "
            "moved into the kernel)")
    [claim] = res.claims                     # on the card, with its provenance and its table
    assert (claim.ours, claim.provenance, claim.table, claim.key, claim.kind) == (
        ours, "derived", "ktls_guest_saving", ["TLSv1.3", "64M.bin"], "claim")
    assert res.headline == [claim.sentence()]
    # five identical fetches: no noise, the band is the point; the input that moves it is named
    assert claim.band == [pytest.approx(16.15), pytest.approx(16.15)] and claim.most_sensitive == tg.GUEST_NOISE
    # two fetches: a standard error on one degree of freedom is no band at all (issue 35)
    two = {**GUEST, "cells": [dict(c, fetches=c["fetches"][:2]) for c in GUEST["cells"]]}
    res2 = StudyResult("tls-offload", "t", "quick", 1, "test", {})
    add_headline(res2, tg.guest_claims(two))
    assert res2.claims[0].band is None and "fewer than the 5" in res2.claims[0].why


def _varied(mode: str, cpu_ms: list[float]) -> dict:
    c = cell(mode, "TLSv1.3", LARGE, 1.0, 0.0, 0.0)
    c["fetches"] = [dict(c["fetches"][0], cpu_ns=int(ms * 1e6)) for ms in cpu_ms]
    return c


def test_a_savings_band_is_a_t_interval_of_the_runs_own_noise() -> None:
    from cryptoffload.apps.tls.guest import summarize_cell
    k_ms, t_ms = [9000.0, 9500.0, 10000.0, 10500.0, 11000.0], [19900.0, 19950.0, 20000.0, 20050.0, 20100.0]
    ktls, tls = summarize_cell(_varied("ktls", k_ms)), summarize_cell(_varied("tls", t_ms))
    rse = math.hypot(ktls.cpu_rse, tls.cpu_rse)
    b = tg.saving_band(ktls, tls)                 # saved = 1 - 0.5: +- t(4) x hypot of the two relative errors
    t4 = 2.7764451051977934
    assert b is not None and b.fetches == 5
    assert (b.low_pct, b.high_pct) == (pytest.approx(100 * (1 - 0.5 * (1 + t4 * rse))),
                                       pytest.approx(100 * (1 - 0.5 * (1 - t4 * rse))))
    two = summarize_cell(_varied("ktls", [9000.0, 11000.0]))
    assert two.cpu_rse is not None and tg.saving_band(two, tls) is None   # two fetches: no band claimed
    one = summarize_cell(_varied("ktls", [10000.0]))
    assert one.cpu_rse is None and tg.saving_band(one, tls) is None


def test_the_stored_runs_claims_carry_bands() -> None:
    res = StudyResult("tls-offload", "t", "quick", 1, "test", {})
    add_headline(res, tg.guest_claims(tg.load_guest(None)))
    assert [c.key for c in res.claims] == [["TLSv1.2", "64M.bin"], ["TLSv1.3", "64M.bin"]]
    for c in res.claims:  # the stored run has six 64 MB fetches per server (make ktls, issue 35)
        assert c.band is not None and c.band[0] < c.effect < c.band[1] and "5 degrees of freedom" in c.band_method


def test_load_guest(tmp_path: Path) -> None:
    assert tg.load_guest("none") is None
    path = tmp_path / "g.json"
    path.write_text(json.dumps(GUEST))
    assert tg.load_guest(str(path)) == GUEST
    path.write_text(json.dumps({"kind": "probe"}))
    with pytest.raises(InputError, match=r"not a `tls bench --guest` result \(kind 'probe'\)"):
        tg.load_guest(str(path))
    path.write_text("{")
    with pytest.raises(InputError, match="is not acceptable JSON"):
        tg.load_guest(str(path))
    path.write_text("[1]")  # before: AttributeError (list.get), a traceback
    with pytest.raises(InputError, match=r"not a `tls bench --guest` result \(kind 'list'\)"):
        tg.load_guest(str(path))
    path.write_text('{"kind": "bench", "kind": "probe"}')
    with pytest.raises(InputError, match="appears twice"):
        tg.load_guest(str(path))
