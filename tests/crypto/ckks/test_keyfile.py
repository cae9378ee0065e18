"""The key file (crypto/ckks/keyfile.py): the region digest catches what storage does to bytes
(a changed word, a truncation, zeroed or reordered pages) and does not depend on how the bytes
were cut into chunks; a key file round-trips its regions and frame, under the rule for
secrets; a garbled trailer or a region outside the file is refused. SEAL's key file itself is
tested in test_seal.py."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import CkksError
from cryptoffload.crypto.ckks.keyfile import PAGE, open_key_file, read_region, region_digest, write_key_file
from cryptoffload.errors import ConfigError

blobs = st.binary(min_size=1, max_size=3 * PAGE + 100)


@settings(max_examples=60, deadline=None)
@given(blobs, st.data())
def test_the_digest_does_not_depend_on_the_chunks(tmp_path_factory: pytest.TempPathFactory, data: bytes,
                                                  draw: st.DataObject) -> None:
    cuts = sorted(draw.draw(st.lists(st.integers(0, len(data)), max_size=6)))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    written: dict[str, list[object]] = {}

    def frame(spec: dict[str, list[object]]) -> bytes:
        written.update(spec)
        return b"frame"

    folder = tmp_path_factory.mktemp("chunks")
    os.chmod(folder, 0o700)
    write_key_file(folder / "k", [("r", chunks)], frame, "test key")
    assert written["r"] == [0, len(data), region_digest(data)]


@settings(max_examples=80, deadline=None)
@given(blobs, st.integers(min_value=0), st.integers(1, 255))
def test_any_changed_byte_changes_the_digest(data: bytes, at: int, flip: int) -> None:
    changed = bytearray(data)
    changed[at % len(data)] ^= flip
    assert region_digest(bytes(changed)) != region_digest(data)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2 * PAGE, 4 * PAGE))
def test_truncated_zeroed_or_reordered_pages_change_the_digest(seed: int, size: int) -> None:
    data = random.Random(seed).randbytes(size)
    digest = region_digest(data)
    assert region_digest(data[:-1]) != digest or data[-1:] == b"\0"  # a zero tail pads alike: the size says it
    assert region_digest(data[PAGE:] + data[:PAGE]) != digest or data[PAGE:2 * PAGE] == data[:PAGE]
    if any(data[:PAGE]):
        assert region_digest(bytes(PAGE) + data[PAGE:]) != digest


def _write(folder: Path, regions: list[tuple[str, bytes]], frame: bytes = b'{"frame": 1}') -> Path:
    folder.mkdir(mode=0o700, exist_ok=True)
    seen: dict[str, list[object]] = {}

    def frame_for(spec: dict[str, list[object]]) -> bytes:
        seen.update(spec)
        return frame

    path = write_key_file(folder / "k.keys", [(n, [b]) for n, b in regions], frame_for, "test key")
    assert list(seen) == [n for n, _ in regions]
    return path


def test_regions_and_frame_round_trip_in_a_private_file(tmp_path: Path) -> None:
    a, b = os.urandom(PAGE + 17), os.urandom(300)
    path = _write(tmp_path / "keys", [("a", a), ("b", b)])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with open_key_file(path, "test key", max_bytes=1 << 20) as kf:
        assert kf.is_key_file and kf.frame() == b'{"frame": 1}'
        header = {"regions": {"a": [0, len(a), region_digest(a)], "b": [len(a), len(b), region_digest(b)]}}
        ra, rb = kf.region(header, "a"), kf.region(header, "b")
        kf.check(ra, "a")
        kf.check(rb, "b")
        assert kf.read(ra) == a and kf.read(rb) == b and bytes(kf.view(rb)) == b
        assert kf.library_path(ra) in (f"/proc/self/fd/{kf.fd}", None) and kf.library_path(rb) is None
        identity = kf.identity
    assert read_region(path, identity, rb, "test key", max_bytes=1 << 20) == b


def test_a_corrupted_region_or_one_outside_the_file_is_refused(tmp_path: Path) -> None:
    a = os.urandom(2 * PAGE)
    path = _write(tmp_path / "keys", [("a", a)])
    raw = bytearray(path.read_bytes())
    raw[PAGE + 3] ^= 0x40
    path.write_bytes(bytes(raw))
    with open_key_file(path, "test key", max_bytes=1 << 20) as kf:
        with pytest.raises(CkksError, match="corrupted .its a region does not match its digest.; remove it"):
            kf.check(kf.region({"regions": {"a": [0, len(a), region_digest(a)]}}, "a"), "a")
        for bad in ([0, len(a) + 1, "x"], [-1, 3, "x"], [0, True, "x"], "a", [0, 1]):
            with pytest.raises(CkksError, match="lists no valid 'a' region"):
                kf.region({"regions": {"a": bad}}, "a")


def test_a_garbled_trailer_or_another_format(tmp_path: Path) -> None:
    path = _write(tmp_path / "keys", [("a", os.urandom(100))])
    raw = path.read_bytes()
    path.write_bytes(raw[:50] + raw[60:])  # ten bytes gone: the trailer no longer adds up
    with pytest.raises(CkksError, match="truncated or garbled"):
        with open_key_file(path, "test key", max_bytes=1 << 20):
            pass
    path.write_bytes(b"not a key file")
    with open_key_file(path, "test key", max_bytes=1 << 20) as kf:
        assert not kf.is_key_file and kf.whole() == b"not a key file"
    with pytest.raises(ConfigError, match="at most 4"):
        with open_key_file(path, "test key", max_bytes=4, error=ConfigError):
            pass


def test_the_rule_for_secrets_and_a_replaced_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "keys", [("a", b"x" * 10)])
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match="open to others .mode 0644.; run: chmod 600"):
        with open_key_file(path, "test key", max_bytes=1 << 20, error=ConfigError):
            pass
    os.chmod(path, 0o600)
    with open_key_file(path, "test key", max_bytes=1 << 20) as kf:
        identity, region = kf.identity, kf.region({"regions": {"a": [0, 10, region_digest(b"x" * 10)]}}, "a")
    _write(tmp_path / "keys", [("a", b"x" * 10)])  # a new file under the same name
    with pytest.raises(CkksError, match="was replaced since its keys were read"):
        read_region(path, identity, region, "test key", max_bytes=1 << 20)
