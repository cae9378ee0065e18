"""What runs inside the guest, tested here where it can be: the interleaved order, the names
of the servers, and that a fetch counts as kTLS only when verify_mode saw the kernel encrypt."""

from __future__ import annotations

from cryptoffload.apps.tls.guest_run import (CONFIGS, KTLS_ENGAGED, FetchRecord, GuestCell, config_name,
                                             fetch_order)
from cryptoffload.apps.tls.detect import verify_mode


def record(verified: str) -> FetchRecord:
    return FetchRecord(1.0, 2_000_000, 0.0, 10.0, {"TlsTxSw": 1}, "TLSv1.2", verified)


def test_servers_are_plain_and_both_tls_versions_of_tls_and_ktls() -> None:
    assert [config_name(m, v) for m, v in CONFIGS] == ["plain", "tls TLSv1.2", "tls TLSv1.3", "ktls TLSv1.2",
                                                       "ktls TLSv1.3"]


def test_fetch_order_interleaves_rounds_until_each_has_its_count() -> None:
    keys = [("plain", "2K.bin"), ("ktls TLSv1.2", "2K.bin"), ("plain", "64M.bin")]
    order = fetch_order(keys, {"2K.bin": 3, "64M.bin": 1}, seed=1)
    assert order == fetch_order(keys, {"2K.bin": 3, "64M.bin": 1}, seed=1)
    assert sorted(order) == sorted([keys[0]] * 3 + [keys[1]] * 3 + [keys[2]])
    assert set(order[:3]) == set(keys)  # the first round has one fetch of each
    assert order[3:] != [] and set(order[3:]) == {keys[0], keys[1]}


def test_a_fetch_is_ktls_only_when_the_kernel_counters_rose() -> None:
    engaged = verify_mode("ktls", {"TlsTxSw": 4}, {"TlsTxSw": 5})
    assert engaged.startswith(KTLS_ENGAGED) and record(engaged).ktls_engaged
    fallback = verify_mode("ktls", {"TlsTxSw": 5}, {"TlsTxSw": 5})
    assert fallback.startswith("requested ktls, ran user-space TLS") and not record(fallback).ktls_engaged
    cell = GuestCell("ktls", "TLSv1.2", "2K.bin", 2048, True, [record(engaged), record(fallback)])
    d = cell.to_dict()
    assert d["ktls_fetches_engaged"] == 1 and [f["ktls_engaged"] for f in d["fetches"]] == [True, False]
