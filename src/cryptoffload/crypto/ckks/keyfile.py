"""The key file: a secret context laid out to be read in place (``save_key_file`` /
``load_key_file`` of a backend).

Why: ``he-cnn infer`` spent 1.5 s of a 3-s call (quiet machine) reading its key set back. A
secret context is made to travel: SEAL stores its Galois keys *seeded* (half of every key
replaced by a seed) and zstd-compressed, 112 MB for the 28 keys of the he-cnn at N = 16384,
and reading it back means hashing and inflating the stream and regenerating half of every key
from its seed. Kept on the user's own disk, the same keys can be stored whole and
uncompressed (294 MiB), and the library reads them at the speed of a copy, straight from the
file. Disk space pays for it: the compact form is kept beside them for the one use that needs
it (a public context), read only then.

Layout (little-endian)::

    0            regions  the library's objects, each as the library reads it; the first
                          (SEAL: the Galois keys, uncompressed and unseeded) starts at byte 0,
                          so the library can read it through the file itself
    F            frame    the rest of the secret context, framed by :mod:`.framing` (header,
                          JSON, sections, BLAKE2b checksum); its JSON header lists the regions:
                          ``"regions": {"galois": [offset, bytes, digest], ...}``
    end - 24     trailer  <Q F> <Q frame bytes> <8s b"CKKSKEY1">

The same layout holds a backend's encoded plaintexts (``save_plaintext_file``): one region, the
objects one after another, their sizes listed in the frame (:func:`listed_sizes`).

Reading: the file is opened once under the rule for secrets
(:func:`~cryptoffload.private_files.open_private`: ours, 0600, no link, in folders only we or
root can write); the frame is read and checked whole; a region is checked (its digest) before
the library reads it -- through ``/proc/self/fd/N`` of that very descriptor, so what was checked
is what is read and nothing is copied (elsewhere, through a private staging copy).

A region's digest: BLAKE2b of the 64-bit sums (mod 2^64) of its 4 KiB pages, the last one
zero-padded. Why not BLAKE2b of the bytes: that takes 0.3 s for 294 MiB, a fifth of the call
this layout exists to shorten; the page sums take one NumPy pass (0.06 s). What the digest
catches: a region truncated, cut short, zeroed, its pages moved or reordered, and random
corruption but with probability 2^-64. What it does not: a deliberate change -- whoever can
write a private file can write its digest as well; the rule for secrets keeps others out.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from cryptoffload.checks import JsonDict, JsonValue, strict_json
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.errors import CryptoffloadError
from cryptoffload.private_files import open_private, write_private

__all__ = ["KEY_FILE_MAGIC", "KEY_FILE_WHAT", "PAGE", "PLAINTEXT_FILE_WHAT", "KeyFile", "Region", "frame_header",
           "listed_sizes", "open_key_file", "read_region", "region_digest", "write_key_file"]

KEY_FILE_MAGIC = b"CKKSKEY1"
#: what a key file is called in messages ("the CKKS key file /k/seal-16384-....keys is open to others")
KEY_FILE_WHAT = "CKKS key"
#: a file of encoded plaintexts in the same layout (a backend's ``save_plaintext_file``)
PLAINTEXT_FILE_WHAT = "CKKS plaintext"
_TRAILER = struct.Struct("<QQ8s")  # frame offset, frame bytes, magic
PAGE = 4096
_WORDS = PAGE // 8


@dataclass(frozen=True)
class Region:
    """A library object in a key file: where it lies and its digest."""

    offset: int
    size: int
    digest: str

    def as_json(self) -> list[JsonValue]:
        return [self.offset, self.size, self.digest]


class _PageSums:
    """The digest of a region fed chunk by chunk (the writer streams what it writes)."""

    def __init__(self) -> None:
        self._sums: list[np.ndarray] = []
        self._tail = b""
        self.size = 0

    def update(self, chunk: bytes | memoryview) -> None:
        self.size += len(chunk)
        data = self._tail + bytes(chunk) if self._tail else chunk
        full = len(data) - len(data) % PAGE
        if full:
            self._sums.append(_page_sums(memoryview(data)[:full]))
        self._tail = bytes(data[full:])

    def hexdigest(self) -> str:
        sums = self._sums + ([_page_sums(self._tail.ljust(PAGE, b"\0"))] if self._tail else [])
        h = hashlib.blake2b(digest_size=16, person=b"ckks-keyfile")
        for s in sums:
            h.update(s.astype("<u8", copy=False).tobytes())
        return h.hexdigest()


def _page_sums(view: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(view, dtype="<u8").reshape(-1, _WORDS).sum(axis=1, dtype=np.uint64)


def region_digest(data: bytes | memoryview | mmap.mmap) -> str:
    """The digest of a region's bytes (see the module docstring)."""
    sums = _PageSums()
    view = memoryview(data)
    full = len(view) - len(view) % PAGE
    if full:
        sums._sums.append(_page_sums(view[:full]))
        sums.size = full
    if full < len(view):
        sums.update(view[full:])
    return sums.hexdigest()


def write_key_file(path: str | os.PathLike[str], regions: Sequence[tuple[str, Iterable[bytes | memoryview]]],
                   frame_for: Callable[[JsonDict], bytes], what: str) -> Path:
    """Write a key file: ``regions`` (name, chunks) in order from byte 0, then the frame that
    ``frame_for`` makes from the regions' ``[offset, bytes, digest]``, then the trailer; as a
    private file (:func:`~cryptoffload.private_files.write_private`: 0600 from creation,
    linked into place only once whole)."""
    spec: JsonDict = {}

    def chunks() -> Iterator[bytes | memoryview]:
        offset = 0
        for name, parts in regions:
            sums = _PageSums()
            for part in parts:
                sums.update(part)
                yield part
            spec[name] = Region(offset, sums.size, sums.hexdigest()).as_json()
            offset += sums.size
        frame = frame_for(spec)
        yield frame
        yield _TRAILER.pack(offset, len(frame), KEY_FILE_MAGIC)

    return write_private(path, chunks(), what, overwrite=True, error=CkksError)


class KeyFile:
    """A key file open under the rule for secrets (:func:`open_key_file`)."""

    def __init__(self, fd: int, st: os.stat_result, path: Path, what: str) -> None:
        self.fd, self.path, self.what = fd, path, what
        self.identity = (st.st_dev, st.st_ino)
        self.size = st.st_size
        self.frame_offset = self.frame_size = 0
        self._map: mmap.mmap | None = None
        tail = os.pread(fd, _TRAILER.size, self.size - _TRAILER.size) if self.size >= _TRAILER.size else b""
        if len(tail) == _TRAILER.size and tail.endswith(KEY_FILE_MAGIC):
            self.frame_offset, self.frame_size, _ = _TRAILER.unpack(tail)
            if self.frame_offset + self.frame_size + _TRAILER.size != self.size:
                raise CkksError(f"the {what} file {path} is truncated or garbled (its trailer does not match its "
                                f"size); remove it")

    @property
    def is_key_file(self) -> bool:
        """False for a file without the key file's trailer (a plain secret context, say)."""
        return self.frame_size > 0

    def frame(self) -> bytes:
        return self.read(Region(self.frame_offset, self.frame_size, ""))

    def read(self, region: Region) -> bytes:
        data = os.pread(self.fd, region.size, region.offset)
        if len(data) != region.size:
            raise CkksError(f"the {self.what} file {self.path} changed while it was read; read it again")
        return data

    def whole(self) -> bytes:
        return self.read(Region(0, self.size, ""))

    def region(self, header: JsonDict, name: str) -> Region:
        """The region ``name`` the frame's header lists, checked to lie before the frame."""
        regions = header.get("regions")
        spec = regions.get(name) if isinstance(regions, dict) else None
        if isinstance(spec, list) and len(spec) == 3:
            offset, size, digest = spec
            if (type(offset) is int and type(size) is int and isinstance(digest, str) and 0 <= offset and 0 <= size
                    and offset + size <= self.frame_offset):
                return Region(offset, size, digest)
        raise CkksError(f"the {self.what} file {self.path} lists no valid {name!r} region; remove it")

    def view(self, region: Region) -> memoryview:
        """The region's bytes in place (memory-mapped, read-only)."""
        if self._map is None:
            self._map = mmap.mmap(self.fd, self.frame_offset, prot=mmap.PROT_READ)
        return memoryview(self._map)[region.offset: region.offset + region.size]

    def check(self, region: Region, name: str) -> None:
        """Refuse a region whose bytes are not what was written (digest)."""
        view = self.view(region)
        try:
            ok = region_digest(view) == region.digest
        finally:
            view.release()
        if not ok:
            raise CkksError(f"the {self.what} file {self.path} is corrupted (its {name} region does not match its "
                            f"digest); remove it")

    def library_path(self, region: Region) -> str | None:
        """A path the library can open to read ``region`` from this very descriptor (the
        region must start at byte 0), or None where the system has no ``/proc/self/fd``."""
        if region.offset != 0 or not os.path.isdir("/proc/self/fd"):
            return None
        return f"/proc/self/fd/{self.fd}"

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None


@contextmanager
def open_key_file(path: str | os.PathLike[str], what: str, *, max_bytes: int,
                  error: type[CryptoffloadError] = CkksError) -> Iterator[KeyFile]:
    """The private file ``path`` open as a key file (check ``is_key_file``: a file without
    the trailer is another format, read whole by :meth:`KeyFile.whole`). A refusal by the rule
    for secrets is ``error``; a garbled key file a :class:`CkksError`."""
    path = Path(path)
    with open_private(path, what, error=error) as (fd, st):
        if st.st_size > max_bytes:
            raise error(f"the {what} file {path} is {st.st_size:,} bytes; a {what} file is at most {max_bytes:,}")
        kf = KeyFile(fd, st, path, what)
        try:
            yield kf
        finally:
            kf.close()


def read_region(path: Path, identity: tuple[int, int], region: Region, what: str, *, max_bytes: int) -> bytes:
    """A region of a key file read again later (the compact keys a public context carries),
    refused unless the file is still the one read before (same device and inode: a new key
    set written meanwhile replaces the file) and the region matches its digest."""
    with open_key_file(path, what, max_bytes=max_bytes) as kf:
        if kf.identity != identity:
            raise CkksError(f"the {what} file {path} was replaced since its keys were read (a new key set?); "
                            "read the keys again")
        data = kf.read(region)
    if region_digest(data) != region.digest:
        raise CkksError(f"the {what} file {path} is corrupted (a region does not match its digest); remove it")
    return data


def frame_header(payload: bytes, what: str) -> JsonDict:
    """The JSON object a key file's frame holds (strict JSON: no NaN, no key twice)."""
    try:
        header = strict_json(payload)
    except ValueError as exc:  # JsonRefused included
        raise CkksError(f"{what}: malformed header ({exc}); remove it") from None
    if not isinstance(header, dict):
        raise CkksError(f"{what}: malformed header; remove it")
    return header


def listed_sizes(header: JsonDict, total: int, limit: int, what: str) -> list[int]:
    """The sizes of the objects one region holds one after another, as the frame lists them:
    integers from 16 (a SEAL header) to ``limit`` each, adding up to the region's ``total``."""
    sizes = header.get("sizes")
    if not (isinstance(sizes, list) and all(type(n) is int and 16 <= n <= limit for n in sizes)
            and sum(sizes) == total):
        raise CkksError(f"{what}: its object sizes do not add up; remove it")
    return sizes
