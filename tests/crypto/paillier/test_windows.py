"""Windows measured per CPU and cached: the cache is outside input (bounded, owned, validated),
written 0600 atomically, and what it holds is what encryption uses."""

from __future__ import annotations

import json
import os

import pytest

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import windows

pytestmark = pytest.mark.skipif(not native.native_available(), reason="native core not built")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("CRYPTOFFLOAD_CACHE", str(folder))
    windows.forget()
    yield folder / windows.CACHE_NAME
    windows.forget()


def _plant(path, choices: dict, cpu: str | None = None, mode: int = 0o600) -> None:
    path.write_text(json.dumps({"version": windows.CACHE_VERSION, "cpus": {cpu or windows.cpu_key(): choices}}))
    os.chmod(path, mode)


def test_first_use_measures_caches_and_reuses(cache) -> None:
    w = windows.window_for(512, 256, "gmp", True)
    assert windows.WINDOW_LIMITS[True][0] <= w <= windows.WINDOW_LIMITS[True][1]
    assert cache.stat().st_mode & 0o777 == 0o600
    key = windows.choice_key("gmp", True, 1024, 256)
    assert windows.read_cache()[windows.cpu_key()] == {key: w}
    windows.forget()
    _plant(cache, {key: 3})   # a valid cached value is used as it is, not measured again
    assert windows.window_for(512, 256, "gmp", True) == 3
    assert pl.default_window(512, "gmp", True) == 3


@pytest.mark.parametrize("bad", [{"gmp-ct-16w-256b": 99}, {"gmp-ct-16w-256b": "7"}, {"gmp-ct-16w-256b": True},
                                 {"qat-ct-16w-256b": 5}, {"gmp-ct-16w": 5}])
def test_out_of_bounds_or_unknown_values_are_ignored(cache, bad) -> None:
    _plant(cache, bad)
    assert windows.read_cache() == {windows.cpu_key(): {}}


def test_untrusted_cache_files_are_not_read(cache, tmp_path) -> None:
    key = windows.choice_key("gmp", True, 1024, 256)
    _plant(cache, {key: 3}, mode=0o666)            # others could have written it
    assert windows.read_cache() == {}
    cache.unlink()
    target = tmp_path / "elsewhere.json"
    _plant(target, {key: 3})
    cache.symlink_to(target)                        # a link planted in its place
    assert windows.read_cache() == {}
    cache.unlink()
    cache.write_bytes(b"{" * (windows.MAX_CACHE_BYTES + 10))   # too big to be ours
    os.chmod(cache, 0o600)
    assert windows.read_cache() == {}
    assert windows.save_choices({key: 4}) is None   # and never overwritten blindly
    cache.unlink()
    cache.write_text("[1, 2")                       # not JSON
    assert windows.read_cache() == {}


def test_other_cpus_choices_are_kept(cache) -> None:
    key = windows.choice_key("gmp", False, 1024, 256)
    _plant(cache, {key: 9}, cpu="Some Other CPU | 6-85-7-k2")
    windows.save_choices({key: 11})
    cpus = windows.read_cache()
    assert cpus["Some Other CPU | 6-85-7-k2"] == {key: 9} and cpus[windows.cpu_key()] == {key: 11}


def test_calibrate_measures_every_backend_that_runs(cache) -> None:
    rows = windows.calibrate([512], windows.available_backends(), seconds=0.005, rounds=1, max_bytes=1 << 22)
    assert {r["backend"] for r in rows} == set(windows.available_backends()) - ({"ifma"} if not native.ifma_fixed_base_fits(1024) else set())
    for row in rows:
        assert row["window"] in row["rates"] and row["cache"] == str(cache)
    assert len(windows.read_cache()[windows.cpu_key()]) == len(rows)
