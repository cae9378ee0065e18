"""SEAL's serialised objects measured before SEAL inflates them: :func:`inflated_size`.

Why: SEAL compresses what it saves (zstd, or zlib) and, loading, inflates whatever the stream
holds into a buffer that grows without bound. A few MB of zstd can claim gigabytes, and the
limit on a request body (compressed bytes) says nothing about them. So every SEAL object is
checked here first, with about 1 MiB in hand:

* SEAL's 16-byte header (``<HBBBBHQ``: magic ``0xA15E``, header size 16, version major and
  minor, compression mode 0 none / 1 zlib / 2 zstd, reserved 0, the object's stored size
  header included) must be well formed and state exactly the bytes given;
* a zstd frame must declare its content size (SEAL's do) within the caller's limit, and a
  window of at most :data:`MAX_WINDOW` (the decoder allocates the window the frame asks for);
* the stream is then inflated into a fixed buffer that is thrown away, counting: past the
  limit, or past its declared size, or ending early, it is refused.

The caller's limit comes from the parameters (SEAL's in-memory size of the keys or ciphertext
the object may hold, :mod:`.seal`); a refusal over it is :class:`InflateLimit`, every other a
:class:`CkksError`, both before SEAL allocates anything.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import zlib
from dataclasses import dataclass
from typing import Iterator

from cryptoffload.crypto.ckks.errors import CkksError

__all__ = ["COMPR_NONE", "COMPR_ZLIB", "COMPR_ZSTD", "MAX_WINDOW", "InflateLimit", "SealHeader", "inflated_size",
           "parse_seal_header", "seal_header", "uncompressed", "zstd_frame_header"]

SEAL_MAGIC = 0xA15E
_HEADER = struct.Struct("<HBBBBHQ")  # magic, header size, major, minor, compression mode, reserved, size
COMPR_NONE, COMPR_ZLIB, COMPR_ZSTD = 0, 1, 2
COMPR_NAMES = {COMPR_NONE: "none", COMPR_ZLIB: "zlib", COMPR_ZSTD: "zstd"}
#: the largest zstd window accepted (SEAL's frames use 2 MiB; zstd's decoder default is 128 MiB)
MAX_WINDOW = 1 << 23
_ZSTD_MAGIC = 0xFD2FB528
_CHUNK = 1 << 20


class InflateLimit(CkksError):
    """A serialised object that would inflate (by its own claim, or in fact) beyond the limit
    its parameters allow."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True)
class SealHeader:
    major: int
    minor: int
    compr_mode: int
    size: int  # the stored object's bytes, header included


def seal_header(compr_mode: int, size: int, major: int = 4, minor: int = 1) -> bytes:
    """SEAL's header for an object of ``size`` stored bytes (tests, and re-framing)."""
    return _HEADER.pack(SEAL_MAGIC, _HEADER.size, major, minor, compr_mode, 0, size)


def parse_seal_header(blob: bytes | memoryview, what: str, stored: int | None = None) -> SealHeader:
    """SEAL's header of ``blob``, checked: magic, header size, version 3.x/4.x, a known
    compression mode, the reserved field, and a stored size equal to ``len(blob)`` (or to
    ``stored`` when ``blob`` holds only the object's first bytes)."""
    if len(blob) < _HEADER.size:
        raise CkksError(f"{what}: truncated SEAL header ({len(blob)} of {_HEADER.size} bytes)")
    magic, hsize, major, minor, mode, reserved, size = _HEADER.unpack_from(blob)
    if magic != SEAL_MAGIC or hsize != _HEADER.size:
        raise CkksError(f"{what}: not a SEAL object (magic {magic:#06x}, header size {hsize})")
    if major not in (3, 4) or reserved != 0:
        raise CkksError(f"{what}: SEAL header of unsupported version {major}.{minor} (reserved {reserved})")
    if mode not in COMPR_NAMES:
        raise CkksError(f"{what}: unknown SEAL compression mode {mode} (known: none 0, zlib 1, zstd 2)")
    have = len(blob) if stored is None else stored
    if size != have:
        raise CkksError(f"{what}: the SEAL header states {size:,} bytes, the object has {have:,} (truncated, or "
                        "not what SEAL wrote)")
    return SealHeader(major, minor, mode, size)


def inflated_size(blob: bytes | memoryview, limit: int, what: str) -> int:
    """The bytes SEAL would inflate ``blob`` (one serialised SEAL object) to, refused with
    :class:`InflateLimit` past ``limit`` (declared or actual), with :class:`CkksError` when
    malformed; at most ~1 MiB of output is ever held."""
    head = parse_seal_header(blob, what)
    body = memoryview(blob)[_HEADER.size:]
    if head.compr_mode == COMPR_NONE:
        _over(len(body), limit, what, "holds")
        return len(body)
    if head.compr_mode == COMPR_ZLIB:
        return _zlib_size(body, limit, what)
    declared, window = zstd_frame_header(body, what)
    _over(declared, limit, what, "declares")
    if window > MAX_WINDOW:
        raise CkksError(f"{what}: the zstd frame asks for a {window:,}-byte window (at most {MAX_WINDOW:,})")
    actual = _zstd_size(blob if isinstance(blob, bytes) else bytes(blob), declared, what)
    if actual != declared:
        more = "more than " if actual > declared else ""
        raise CkksError(f"{what}: the zstd frame declares {declared:,} bytes and inflates to {more}{actual:,}")
    return actual


def _over(size: int, limit: int, what: str, verb: str) -> None:
    if size > limit:
        raise InflateLimit(f"{what} {verb} {size:,} bytes uncompressed, above the {limit:,} bytes its parameters "
                           "allow; send the keys or ciphertext these parameters make (GET /v1/info)", limit)


def zstd_frame_header(frame: bytes | memoryview, what: str) -> tuple[int, int]:
    """``(content size, window size)`` of a zstd frame's header (RFC 8878, 3.1.1.1); a frame
    that does not declare its content size is refused."""
    if len(frame) < 6 or struct.unpack_from("<I", frame)[0] != _ZSTD_MAGIC:
        raise CkksError(f"{what}: not a zstd frame (SEAL's compression mode says zstd)")
    fhd = frame[4]
    fcs_flag, single, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    if fhd & 0x08:
        raise CkksError(f"{what}: zstd frame header with its reserved bit set")
    pos = 5
    window = 0
    if not single:
        wd = frame[pos]
        exponent, mantissa = wd >> 3, wd & 7
        base = 1 << (10 + exponent)
        window = base + (base >> 3) * mantissa
        pos += 1
    pos += (0, 1, 2, 4)[dict_flag]
    fcs_len = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if fcs_len == 0:
        raise CkksError(f"{what}: the zstd frame does not declare its content size")
    if len(frame) < pos + fcs_len:
        raise CkksError(f"{what}: truncated zstd frame header")
    size = int.from_bytes(frame[pos: pos + fcs_len], "little") + (256 if fcs_len == 2 else 0)
    return size, (size if single else window)


def _zlib_size(body: memoryview, limit: int, what: str) -> int:
    d = zlib.decompressobj()
    total = pos = 0
    try:
        while pos < len(body) and not d.eof:
            chunk: bytes | memoryview = body[pos: pos + (1 << 16)]
            pos += len(chunk)
            while chunk and not d.eof:
                total += len(d.decompress(chunk, _CHUNK))
                _over(total, limit, what, "inflates to more than")
                chunk = d.unconsumed_tail
    except zlib.error as exc:
        raise CkksError(f"{what}: garbled zlib stream ({exc})") from None
    if not d.eof:
        raise CkksError(f"{what}: the zlib stream is truncated")
    if d.unused_data or pos < len(body):
        raise CkksError(f"{what}: bytes after the end of the zlib stream")
    return total


class _Buffer(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


_zstd_lib: ctypes.CDLL | None = None


def _zstd() -> ctypes.CDLL:
    global _zstd_lib
    if _zstd_lib is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
        except OSError:
            raise CkksError("checking a zstd-compressed SEAL object needs the zstd library (libzstd.so.1: "
                            "apt-get install libzstd1)") from None
        lib.ZSTD_createDStream.restype = ctypes.c_void_p
        lib.ZSTD_freeDStream.argtypes = [ctypes.c_void_p]
        lib.ZSTD_DCtx_setParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        lib.ZSTD_DCtx_setParameter.restype = ctypes.c_size_t
        lib.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Buffer), ctypes.POINTER(_Buffer)]
        lib.ZSTD_decompressStream.restype = ctypes.c_size_t
        lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        lib.ZSTD_isError.restype = ctypes.c_uint
        lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
        lib.ZSTD_getErrorName.restype = ctypes.c_char_p
        _zstd_lib = lib
    return _zstd_lib


def _zstd_chunks(blob: bytes, declared: int, what: str) -> Iterator[memoryview]:
    """Inflate into one reused buffer, chunk by chunk (each view valid until the next one);
    stop one chunk past ``declared``."""
    lib = _zstd()
    # the frame after SEAL's header, read in place (bytes do not move; no copy of the object)
    start = ctypes.cast(ctypes.c_char_p(blob), ctypes.c_void_p).value or 0
    src = _Buffer(start + _HEADER.size, len(blob) - _HEADER.size, 0)
    out = ctypes.create_string_buffer(_CHUNK)
    dst = _Buffer(ctypes.cast(out, ctypes.c_void_p), _CHUNK, 0)
    ds = lib.ZSTD_createDStream()
    if not ds:
        raise MemoryError("ZSTD_createDStream")
    total, ret = 0, 1
    try:
        lib.ZSTD_DCtx_setParameter(ds, 100, MAX_WINDOW.bit_length() - 1)  # ZSTD_d_windowLogMax
        while total <= declared:
            dst.pos = 0
            ret = lib.ZSTD_decompressStream(ds, ctypes.byref(dst), ctypes.byref(src))
            if lib.ZSTD_isError(ret):
                raise CkksError(f"{what}: garbled zstd stream ({lib.ZSTD_getErrorName(ret).decode()})")
            total += dst.pos
            yield memoryview(out)[: dst.pos]
            if src.pos == src.size and (ret == 0 or dst.pos < dst.size):
                break
    finally:
        lib.ZSTD_freeDStream(ds)
    if total <= declared and ret != 0:
        raise CkksError(f"{what}: the zstd stream is truncated")


def _zstd_size(blob: bytes, declared: int, what: str) -> int:
    return sum(len(chunk) for chunk in _zstd_chunks(blob, declared, what))


def uncompressed(blob: bytes, limit: int, what: str) -> Iterator[bytes]:
    """One serialised SEAL object as SEAL's *uncompressed* stream (compression mode none), in
    chunks: its header, then the inflated body -- what SEAL reads back at the speed of a copy
    (the key file's Galois keys, :mod:`.keyfile`), where inflating a zstd stream costs a
    second per 300 MB. Checked as :func:`inflated_size` checks (``limit``), so a stream that
    inflates past its declared size is refused midway: the caller writes nothing it has not
    seen whole (a private file is linked into place only once complete)."""
    head = parse_seal_header(blob, what)
    if head.compr_mode != COMPR_ZSTD:
        inflated_size(blob, limit, what)  # bounded before anything is held inflated
    if head.compr_mode == COMPR_NONE:
        yield bytes(blob)
        return
    if head.compr_mode == COMPR_ZLIB:
        body = zlib.decompress(memoryview(blob)[_HEADER.size:])
        yield seal_header(COMPR_NONE, _HEADER.size + len(body), head.major, head.minor) + body
        return
    declared, window = zstd_frame_header(memoryview(blob)[_HEADER.size:], what)
    _over(declared, limit, what, "declares")
    if window > MAX_WINDOW:
        raise CkksError(f"{what}: the zstd frame asks for a {window:,}-byte window (at most {MAX_WINDOW:,})")
    yield seal_header(COMPR_NONE, _HEADER.size + declared, head.major, head.minor)
    total = 0
    for chunk in _zstd_chunks(blob, declared, what):
        total += len(chunk)
        if total > declared:
            raise CkksError(f"{what}: the zstd frame declares {declared:,} bytes and inflates to more")
        yield bytes(chunk)
    if total != declared:
        raise CkksError(f"{what}: the zstd frame declares {declared:,} bytes and inflates to {total:,}")
