"""Benchmark: the HE-CNN server's memory under decompression bombs and many sessions (issue 22,
item 3), measured on the real process.

Issue 22 reported: an authenticated client's ~9 MB session request grew the server from ~130 MiB
to ~2.9 GB resident, and it kept ~2.8 GB after refusing it: the body limit counts compressed
bytes, and SEAL inflates whatever a serialised key holds. This script starts ``cryptoffload
he-cnn serve`` (SEAL, default parameters, plain http on loopback) and sends, with a valid
token: a real session (the reference: ~0.1 GB of context, ~0.5 GB held), contexts whose Galois
section is a bomb (zstd RLE blocks declaring 2 GiB in ~64 KB; zlib inflating to 1 GiB; zstd
that hides its size), a SEAL header lying about its size, a context listing keys the plan does
not use, and session requests past the memory budget (``--memory-budget`` of two sessions).
For each it reads the server's peak resident memory (``VmHWM``, reset through
``/proc/<pid>/clear_refs`` before each case) and resident memory after the answer.

    .venv/bin/python benchmarks/he_cnn_server_memory.py [--baseline SRC]

``--baseline SRC`` also runs the bomb cases against the server of another checkout's ``src``
(e.g. ``/work/main/src``, the code before this change; no budget options there). Writes
benchmarks/results/he_cnn_server_memory.json (with the machine) and prints a table.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import struct
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.table import Table

try:
    from cryptoffload.apps.he_cnn.budget import session_bounds
except ImportError: pass
from cryptoffload.apps.he_cnn.model import load_model
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.bench import save_results
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, KIND_PUBLIC, make_backend
from cryptoffload.crypto.ckks.framing import pack_frame, pack_sections, unpack_frame, unpack_sections
from cryptoffload.machine import machine_info
from server_process import ServerProcess

RESULTS = Path(__file__).resolve().parent / "results"
MiB = 2**20
_SEAL_HEADER = struct.Struct("<HBBBBHQ")
#: SEAL's version in the objects' headers (SEAL refuses another): set from a real context
VERSION = [4, 1]


def seal_object(mode: int, body: bytes) -> bytes:
    """A SEAL object of compression mode ``mode`` (1 zlib, 2 zstd) around ``body``."""
    return _SEAL_HEADER.pack(0xA15E, 16, *VERSION, mode, 0, 16 + len(body)) + body


def zstd_rle_bomb(size: int, declare: bool = True) -> bytes:
    """A zstd frame of ``size`` zero bytes in RLE blocks of 128 KiB (4 bytes each): 2 GiB in
    64 KiB. ``declare``: with its content size in the frame header (as SEAL writes them)."""
    block = 1 << 17
    head = struct.pack("<I", 0xFD2FB528) + bytes([0xC0 if declare else 0x00, (17 - 10) << 3])
    if declare:
        head += struct.pack("<Q", size)
    n = size // block
    blocks = [((block << 3) | (1 << 1) | (i == n - 1)).to_bytes(3, "little") + b"\0" for i in range(n)]
    return head + b"".join(blocks)


def _zstd(name: str) -> Callable[..., int]:
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    fn = getattr(lib, name)
    fn.restype = ctypes.c_size_t
    return fn


def zstd_compress(data: bytes) -> bytes:
    out = ctypes.create_string_buffer(len(data) // 100 + (1 << 20))
    n = _zstd("ZSTD_compress")(out, ctypes.c_size_t(len(out)), data, ctypes.c_size_t(len(data)), 3)
    return out.raw[:n]


def zstd_decompress(frame: bytes) -> bytes:
    size = ctypes.c_uint64(_zstd("ZSTD_getFrameContentSize")(frame, ctypes.c_size_t(len(frame)))).value
    out = ctypes.create_string_buffer(size)
    n = _zstd("ZSTD_decompress")(out, ctypes.c_size_t(size), frame, ctypes.c_size_t(len(frame)))
    return out.raw[:n]


def _zero_key(key: bytes) -> bytes:
    """A seeded SEAL PublicKey (one key-switching component) with its stored polynomial zeroed:
    still valid for SEAL (every residue below its prime), and compressible to nothing."""
    at = key.find(b"\x5e\xa1\x10", 32)                   # the DynArray of the ciphertext's data
    count = struct.unpack_from("<Q", key, at + 16)[0]
    assert struct.unpack_from("<Q", key, at + 8)[0] == 24 + 8 * count
    return key[: at + 24] + bytes(8 * count) + key[at + 24 + 8 * count:]


def structured_bomb(galois: bytes, keys: int) -> bytes:
    """SEAL GaloisKeys (zstd) holding ``keys`` zero-filled seeded keys, built from a real
    ``galois`` section: SEAL loads every one (11 MB each in memory) from a few MB."""
    content = zstd_decompress(galois[16:])
    dim1 = struct.unpack_from("<Q", content, 32)[0]
    pos, parts = 40, []
    while not parts:                                        # the first Galois element with a key
        start, dim2 = pos, struct.unpack_from("<Q", content, pos)[0]
        pos += 8
        for _ in range(dim2):
            size = struct.unpack_from("<Q", content, pos + 8)[0]
            parts.append(_zero_key(content[pos: pos + size]))
            pos += size
        entry = content[start: start + 8] + b"".join(parts)
    dim1 = max(dim1, keys)
    body = content[:32] + struct.pack("<Q", dim1) + entry * keys + bytes(8 * (dim1 - keys))
    return seal_object(2, zstd_compress(body))


def zlib_bomb(size: int) -> bytes:
    c = zlib.compressobj(9)
    zeros = bytes(64 * MiB)
    return b"".join(c.compress(zeros) for _ in range(size // len(zeros))) + c.flush()


def with_section(ctx: bytes, name: str, blob: bytes | None = None, galois: list | None = None,
                 drop: bool = False) -> bytes:
    """``ctx`` with section ``name`` replaced by ``blob`` (or its header's Galois list by
    ``galois``), framed anew: a valid checksum and key id, what an authenticated client can send."""
    payload, key_id, digest = unpack_frame(ctx, KIND_PUBLIC, "seal", None, None)
    header, sections = unpack_sections(payload, "context")
    header.pop("sections")
    if blob is not None:
        sections[name] = blob
    if drop:
        del sections[name]
    if galois is not None:
        header["galois"] = galois
    return pack_frame(KIND_PUBLIC, "seal", digest, key_id, pack_sections(header, list(sections.items())))


def Server(args: list[str], cwd: Path, src: Path) -> ServerProcess:
    """``cryptoffload he-cnn serve`` in a subprocess (``src``: the checkout it runs from)."""
    return ServerProcess(["he-cnn", "serve", *args], cwd, {"PYTHONPATH": str(src)})


def post(url: str, body: bytes | None, token: str, method: str = "POST") -> tuple[int, str]:
    req = urllib.request.Request(url, data=body, method=method, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, resp.read().decode()[:200]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()[:200]


def measure(server: Server, send: Callable[[], list[tuple[int, str]]]) -> dict[str, object]:
    base = server.memory()
    server.reset_peak()
    t0 = time.perf_counter()
    answers = send()
    seconds = time.perf_counter() - t0
    time.sleep(0.5)
    after = server.memory()
    codes = []
    for status, text in answers:
        code = text.split('"error": "', 1)[1].split('"', 1)[0] if '"error": "' in text else ""
        codes.append(f"{status} {code}".strip())
    return {"answers": ", ".join(codes), "seconds": round(seconds, 2), "rss_before_mib": round(base["VmRSS"] / MiB),
            "peak_mib": round(after["VmHWM"] / MiB), "rss_after_mib": round(after["VmRSS"] / MiB)}


def bombs(ctx: bytes, galois: list, section: bytes) -> list[tuple[str, bytes]]:
    """The hostile contexts: ~9 MB or less each, a valid frame around a bad Galois section."""
    return [
        ("250 zero Galois keys (zstd, 1.4 GB inflated)", with_section(ctx, "galois", structured_bomb(section, 250))),
        ("zstd bomb: declares 2 GiB in 64 KiB", with_section(ctx, "galois", seal_object(2, zstd_rle_bomb(2 << 30)))),
        ("zstd bomb hiding its size (2 GiB)", with_section(ctx, "galois",
                                                          seal_object(2, zstd_rle_bomb(2 << 30, declare=False)))),
        ("zlib bomb: 1 GiB in ~1 MB", with_section(ctx, "galois", seal_object(1, zlib_bomb(1 << 30)))),
        ("SEAL header claims 1 TiB", with_section(ctx, "galois", _SEAL_HEADER.pack(0xA15E, 16, *VERSION, 2, 0, 1 << 40)
                                                  + seal_object(2, zstd_rle_bomb(1 << 20))[16:])),
        ("real keys, no relinearisation key", with_section(ctx, "relin", drop=True)),
        ("28 + 1000 Galois keys listed", with_section(ctx, "galois", galois=galois + [[4000 + i, f"galois:{4000 + i}"]
                                                                                     for i in range(1000)])),
    ]


def run(src: Path, label: str, ctx: bytes, extra: list[str], budget_cases: bool) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    header, sections = unpack_sections(unpack_frame(ctx, KIND_PUBLIC, "seal", None, None)[0], "context")
    VERSION[:] = sections["galois"][3:5]
    with tempfile.TemporaryDirectory(prefix="he-cnn-memory-") as tmp:
        work = Path(tmp)
        server = Server(["--port", "0", "--token-dir", str(work), "--insecure-http", "--clients", "a,b,c", *extra],
                        work, src)
        try:
            tok = {c: (work / f"{c}.token").read_text().strip() for c in "abc"}
            sessions = f"{server.url}/v1/sessions"

            def add(case: str, send: Callable[[], list[tuple[int, str]]]) -> None:
                rows.append({"code": label, "case": case, **measure(server, send)})
                print(f"  {label}: {case}: {rows[-1]}", flush=True)

            for name, body in bombs(ctx, header["galois"], sections["galois"]):
                add(f"{name} ({len(body) / MiB:.1f} MiB body)", lambda body=body: [post(sessions, body, tok["a"])])
            if budget_cases:
                opened: list[str] = []

                def open_one(client: str) -> list[tuple[int, str]]:
                    status, text = post(sessions, ctx, tok[client])
                    if status == 200:
                        opened.append(text.split('"session": "', 1)[1].split('"', 1)[0])
                    return [(status, text)]

                add("a real session (reference)", lambda: open_one("a"))
                add("a second session, client b", lambda: open_one("b"))
                add("a third session, client c: past the budget", lambda: open_one("c"))
                add("both sessions closed", lambda: [post(f"{sessions}/{sid}", None, tok[c], "DELETE")
                                                     for sid, c in zip(opened, "ab")])
                add("a session again (SEAL's memory pool reused)", lambda: open_one("c"))
        finally:
            server.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, help="also run the bomb cases on this checkout's src (the code before)")
    args = ap.parse_args()
    plan = PerChannelPlan(load_model(DEFAULT_WEIGHTS), DEFAULT_PARAMS)
    be = make_backend("seal", DEFAULT_PARAMS)
    be.keygen(plan.rotation_steps())
    ctx = be.public_context()
    del be
    here = Path(__file__).resolve().parents[1] / "src"
    budget = -(-2 * session_bounds(DEFAULT_PARAMS, plan, 1 << 20).total // MiB)   # MiB: two sessions' bounds
    rows = run(here, "this branch", ctx, ["--memory-budget", str(budget)], True)
    if args.baseline is not None:
        rows += run(args.baseline.resolve(), "before", ctx, [], False)
    table = Table(title="HE-CNN server: hostile session requests, server memory (measured, SEAL, default params)")
    cols = ["code", "case", "answers", "seconds", "rss_before_mib", "peak_mib", "rss_after_mib"]
    for c in cols:
        table.add_column(c)
    for r in rows:
        table.add_row(*(str(r[c]) for c in cols))
    Console(width=190).print(table)
    out = {"benchmark": "he_cnn_server_memory", "machine": machine_info(), "provenance": "measured",
           "context_bytes": len(ctx), "memory_budget_mib": budget, "rows": rows,
           "reported_in_issue_22": {"rss_before_mib": 130, "peak_gb": 2.9, "kept_after_refusal_gb": 2.8,
                                    "request_mb": 9}}
    save_results(out, RESULTS / "he_cnn_server_memory.json", print)


if __name__ == "__main__":
    main()
