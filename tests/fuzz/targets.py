"""Every parser of outside input, in one table: how to make valid seeds, and how to parse.

Why one table: the fuzz test (``test_fuzz_parsers.py``) and the replay of inputs that once
crashed a parser (``corpus/<target>/``) are written once against it; a new parser of outside
input is one entry here, not a new test. Each target writes the input where the real command
reads it (a file under a private folder: the key and token readers check ownership and mode),
then parses it the way the product does. The contract: a value, or a
:class:`~cryptoffload.errors.CryptoffloadError` -- anything else (a ``KeyError``, a
``ValueError``, a ``MemoryError``, an assertion) is a crash, a bug.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np

PRIVATE = 0o600


class Context:
    """What the targets share in one test process: a private folder, small keys (made once,
    insecure study sizes: the parsers' code paths do not depend on the size), a CKKS backend."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.folder = folder

    def write(self, name: str, data: bytes) -> Path:
        """``data`` as the private file ``name`` (replacing the previous input)."""
        path = self.folder / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, PRIVATE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(path, PRIVATE)
        return path

    @cached_property
    def paillier(self) -> tuple[Any, Any]:
        from cryptoffload.crypto.paillier import generate_keypair

        return generate_keypair(512, insecure_study_size=True)

    @cached_property
    def ckks(self) -> Any:
        from cryptoffload.crypto.ckks import CkksParams, make_backend

        # within the 128-bit bound at N = 2048 (54 bits): a secret context is read back without a study flag
        backend = make_backend("gpu-twin", CkksParams(2048, (18, 18, 18), 18))
        backend.keygen()
        return backend

    @cached_property
    def dask_pems(self) -> Any:
        from cryptoffload.engines.dask_tls import new_pems

        return new_pems()


@dataclass(frozen=True)
class Target:
    """``seeds(ctx)``: valid inputs; ``parse(ctx, data)``: the product's reader on ``data``."""

    seeds: Callable[[Context], list[bytes]]
    parse: Callable[[Context, bytes], object]


# -- Paillier ---------------------------------------------------------------------------------
def _key_seeds(ctx: Context) -> list[bytes]:
    from cryptoffload.crypto.paillier import save_key

    pk, sk = ctx.paillier
    out = []
    for key, name in ((pk, "seed.pub"), (sk, "seed.key")):
        path = ctx.folder / name
        if path.exists():
            path.unlink()
        save_key(key, path)
        out.append(path.read_bytes())
    return out


def _key_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.crypto.paillier import load_key

    return load_key(ctx.write("key.json", data), insecure_study_size=True)


def _ciphertext_seeds(ctx: Context) -> list[bytes]:
    from cryptoffload.crypto import paillier as pl

    pk, _ = ctx.paillier
    cts = [pl.Ciphertext(pk, c) for c in pl.ENCRYPTION.encryptor(pk).encrypt_raw([0, 1, 5, pk.n - 1])]
    return [pl.ciphertexts_to_bytes(cts, pk), pl.ciphertexts_to_bytes(cts[:1], pk, bound=7),
            pl.ciphertexts_to_bytes([], pk)]


def _ciphertext_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps import paillier_files as pf

    return pf.read_frame(ctx.paillier[0], ctx.write("c.bin", data))


def _decrypt_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps import paillier_files as pf

    pk, sk = ctx.paillier
    return pf.decrypt_file(sk, ctx.write("c.bin", data))


def _integers_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps import paillier_files as pf

    return pf.read_integers(ctx.write("ints.txt", data))


def _decimals_parse(ctx: Context, data: bytes) -> object:
    """``paillier encrypt --fixed-point 16 --in FILE`` (issue 37): decimals read exactly."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto.paillier import FixedPoint

    return pf.read_integers(ctx.write("decimals.txt", data), fixed_point=FixedPoint(16))


def _integers_csv_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps import paillier_files as pf

    return pf.read_integers(ctx.write("ints.csv", data), "amount")


# -- CKKS -------------------------------------------------------------------------------------
def _ckks_seeds(ctx: Context) -> list[bytes]:
    b = ctx.ckks
    ct = b.encrypt(np.linspace(-1, 1, 8))
    return [b.serialize_ciphertext(ct), b.serialize_ciphertext(b.add(ct, b.negate(ct)))]


def _ckks_parse(ctx: Context, data: bytes) -> object:
    return ctx.ckks.deserialize_ciphertext(data)


def _ckks_secret_seeds(ctx: Context) -> list[bytes]:
    path = ctx.folder / "seed.ctx"
    if path.exists():
        path.unlink()
    ctx.ckks.save_secret_context(path)
    return [path.read_bytes()]


def _ckks_secret_parse(ctx: Context, data: bytes) -> object:
    return type(ctx.ckks).load_secret_context(ctx.write("secret.ctx", data))


def _seal_key_file_seeds(ctx: Context) -> list[bytes]:
    from cryptoffload.crypto.ckks import CkksParams, make_backend

    seal = make_backend("seal", CkksParams(4096, (30, 20, 30), 20))
    seal.keygen([1, 3])
    path = ctx.folder / "seed.keys"
    if path.exists():
        path.unlink()
    seal.save_key_file(path)
    return [path.read_bytes()]


def _seal_key_file_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.crypto.ckks import SealBackend

    return SealBackend.load_key_file(ctx.write("secret.keys", data))


# -- tokens and TLS credentials ----------------------------------------------------------------
def _token_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps.serving import read_secret

    return read_secret(ctx.write("party.token", data), "party token")


def _dask_parse(which: int) -> Callable[[Context, bytes], object]:
    def parse(ctx: Context, data: bytes) -> object:
        from cryptoffload.engines.dask_tls import CA_FILE, CERT_FILE, KEY_FILE, read_credentials

        folder = ctx.folder / "dask"
        folder.mkdir(mode=0o700, exist_ok=True)
        p = ctx.dask_pems
        pems = [p.ca, p.cert, p.key]
        pems[which] = data
        for name, pem in zip((CA_FILE, CERT_FILE, KEY_FILE), pems):
            sub = Context(folder)
            sub.write(name, pem)
        return read_credentials(folder)
    return parse


# -- traces and profiles -------------------------------------------------------------------
def _trace_log_seeds(ctx: Context) -> list[bytes]:
    return [b"time,client,bytes,cipher\n0.0,1,1024,0\n0.5,10.0.0.2,2048,1\n1.25,2,64,\n",
            b"# comment\n0,1,100\n0.001,2,200\n",
            b'10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326\n'
            b'10.0.0.2 - - [10/Oct/2000:13:55:37 -0700] "GET /b HTTP/1.1" 200 512 "-" "curl"\n']


def _trace_log_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.workloads.trace_log import load_trace

    return load_trace(ctx.write("trace.log", data))


def _he_trace_seeds(ctx: Context) -> list[bytes]:
    from he_trace_helpers import small_ops, trace_of

    return [json.dumps(trace_of(small_ops())).encode()]


def _he_trace_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.workloads.he_trace import load_trace

    return load_trace(ctx.write("trace.json", data))


def _profile_seeds(ctx: Context) -> list[bytes]:
    from cryptoffload.profiles.loader import builtin_profile_path

    return [builtin_profile_path(name).read_bytes() for name in ("virtex2_ciphers", "qat_dh8970", "bsgs_u280")]


def _profile_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.profiles.loader import load_profile

    return load_profile(ctx.write("profile.toml", data))


# -- data sets and images --------------------------------------------------------------------------
def _ridge_csv_seeds(ctx: Context) -> list[bytes]:
    return [b"x1,x2,y\n0.5,-0.25,1.0\n0.1,0.2,-0.3\n", b"0.5,0.25,1\n-0.5,0.75,0\n"]


def _ridge_csv_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.workloads.ridge_data import load_csv

    return load_csv(ctx.write("data.csv", data))


def _mnist_csv_seeds(ctx: Context) -> list[bytes]:
    row = ",".join(["7"] + [str((i * 37) % 256) for i in range(784)])
    return [("label," + ",".join(f"p{i}" for i in range(784)) + "\n" + row + "\n").encode()]


def _mnist_csv_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps.he_cnn.mnist_csv import load_csv

    return load_csv(ctx.write("mnist.csv", data))


def _idx_seeds(ctx: Context) -> list[bytes]:
    images = bytes([0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 28, 0, 0, 0, 28]) + bytes(range(256)) * 6 + bytes(32)
    labels = bytes([0, 0, 8, 1, 0, 0, 0, 2, 3, 9])
    return [images, labels]


def _idx_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps.he_cnn.mnist_idx import load_idx_images, load_idx_labels
    from cryptoffload.errors import CryptoffloadError

    path = ctx.write("images.idx", data)
    try:
        return load_idx_images(path)
    except CryptoffloadError:
        return load_idx_labels(path)


def _image_seeds(ctx: Context) -> list[bytes]:
    from PIL import Image

    out = []
    img = Image.new("L", (40, 40), 255)
    for i in range(10, 30):
        img.putpixel((20, i), 0)
    for fmt in ("PNG", "JPEG"):
        buf = io.BytesIO()
        img.save(buf, fmt)
        out.append(buf.getvalue())
    buf = io.BytesIO()
    img.convert("RGBA").save(buf, "PNG")
    out.append(buf.getvalue())
    return out


def _image_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps.he_cnn.digit_image import load_digit_image

    return load_digit_image(ctx.write("digit.png", data))


def _model_seeds(ctx: Context) -> list[bytes]:
    from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS

    return [DEFAULT_WEIGHTS.read_bytes()]


def _model_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps.he_cnn.model import load_model

    return load_model(ctx.write("model.npz", data))


# -- study results ------------------------------------------------------------------------------
def _study_result_seeds(ctx: Context) -> list[bytes]:
    """A small result as the studies write it: tables with a paper, a claim, a verdict."""
    from cryptoffload.report.result import Claim, StudyResult, Table
    from cryptoffload.report.verdicts import Verdict

    t = Table("t", "a table", ["k", "ours"], [[1, 2.0]], "simulated", paper=[[1, 2.1]])
    verdict = Verdict("ours at 1", "t", [1], "ours", 2.0, 2.1, "simulated", "Table 1", 1.0, "no offload",
                      [1.0, 3.0], "inconclusive")
    res = StudyResult(study="s", title="S", mode="quick", seed=1, version="0", machine={"cpu": "x"},
                      tables={"t": t}, figures=[], profiles=[], notes=["n"],
                      claims=[Claim(paper="p", ours="o", provenance="simulated")], verdicts=[verdict])
    return [json.dumps(res.to_contract()).encode()]


def _study_result_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.report.result import load_result

    return load_result(ctx.write("result.json", data))


# -- HTTP bodies ---------------------------------------------------------------------------------
def _ridge_message_seeds(ctx: Context) -> list[bytes]:
    from cryptoffload.apps.ridge import messages as m
    from cryptoffload.crypto import paillier as pl

    pk = ctx.paillier[0]
    cts = m.encode_ciphertexts(pl.ENCRYPTION.encryptor(pk).encrypt_raw([1, 2]), pk)
    return [m.dumps(m.new_message("upload", pk.fingerprint, upload_id="u1", records=3, vectors=1, ciphertexts=cts)),
            m.dumps(m.new_message("status", pk.fingerprint))]


def _ridge_message_parse(ctx: Context, data: bytes) -> object:
    from cryptoffload.apps.ridge import messages as m

    msg = m.parse_message(data, {"upload": None, "status": None})
    if msg["type"] == "upload":
        m.int_field(msg, "records", 1, 10**9)
        m.str_field(msg, "upload_id")
        m.decode_ciphertexts(msg.get("ciphertexts"), ctx.paillier[0], name="ciphertexts")
    return msg


TARGETS: dict[str, Target] = {
    "paillier-key": Target(_key_seeds, _key_parse),
    "paillier-ciphertexts": Target(_ciphertext_seeds, _ciphertext_parse),
    "paillier-decrypt": Target(_ciphertext_seeds, _decrypt_parse),
    "paillier-integers": Target(lambda ctx: [b"1\n-2\n\n300\n", b"9" * 1000 + b"\n"], _integers_parse),
    "paillier-decimals": Target(lambda ctx: [b"1.5\n-2.25e3\n\n.5\n", b"9" * 200 + b".5e-3\n"], _decimals_parse),
    "paillier-integers-csv": Target(lambda ctx: [b"id,amount\n1,10\n2,-20\n", b'amount,"x, y"\n5,"a"\n'],
                                    _integers_csv_parse),
    "ckks-ciphertext": Target(_ckks_seeds, _ckks_parse),
    "ckks-secret-context": Target(_ckks_secret_seeds, _ckks_secret_parse),
    "ckks-seal-key-file": Target(_seal_key_file_seeds, _seal_key_file_parse),
    "token-file": Target(lambda ctx: [b"platform.abcdefghijklmnopqrstuvwxyz0123456789\n"], _token_parse),
    "dask-ca": Target(lambda ctx: [ctx.dask_pems.ca], _dask_parse(0)),
    "dask-cert": Target(lambda ctx: [ctx.dask_pems.cert], _dask_parse(1)),
    "dask-key": Target(lambda ctx: [ctx.dask_pems.key], _dask_parse(2)),
    "trace-log": Target(_trace_log_seeds, _trace_log_parse),
    "he-trace": Target(_he_trace_seeds, _he_trace_parse),
    "profile": Target(_profile_seeds, _profile_parse),
    "ridge-csv": Target(_ridge_csv_seeds, _ridge_csv_parse),
    "mnist-csv": Target(_mnist_csv_seeds, _mnist_csv_parse),
    "mnist-idx": Target(_idx_seeds, _idx_parse),
    "digit-image": Target(_image_seeds, _image_parse),
    "he-cnn-model": Target(_model_seeds, _model_parse),
    "ridge-message": Target(_ridge_message_seeds, _ridge_message_parse),
    "study-result": Target(_study_result_seeds, _study_result_parse),
}
