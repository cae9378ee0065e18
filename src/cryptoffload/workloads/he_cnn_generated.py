"""The in-storage HE paper's CNN shape generated as an HE program (per-channel packing), sizes
from the ring parameters.

Why a generator beside the recorded trace: Suzuki and Yamana do not list their EVA program, so
the CryptoNets-style MNIST net written out op by op (``--model generated``) is a program whose
every op and size is known and whose shape can be changed, the first step from which the
in-storage study's gap table walks to the paper's own numbers.
"""

from __future__ import annotations

import math

from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.workloads.he_program import HEProgram
from cryptoffload.workloads.he_program_builder import ProgramBuilder


DEFAULT_CNN_PARAMS = CkksParams(16384, (50, 48, 48, 48, 48, 48, 48, 48, 52), 30)


def generate_cnn(params: CkksParams | None = None, *, channels: int = 5, kernel: int = 5, stride: int = 2,
                 image: int = 28, hidden: int = 100, classes: int = 10) -> HEProgram:
    """MNIST CNN as Suzuki and Yamana's (conv -> x^2 -> FC -> x^2 -> FC), one ciphertext per channel.

    Per-channel packing (Suzuki and Yamana, section 4.2): the image is one ciphertext; the conv layer
    rotates it once per kernel offset (shared by all channels) and, per output channel, sums
    the rotated copies times a weight plaintext (the weight broadcast over the strided output
    positions) -- so each channel lives in its own ciphertext. FC1 multiplies every channel by
    a weight plaintext per hidden neuron, sums over channels, then over slots with
    ``ceil(log2(image**2))`` power-of-two rotations, and packs the neuron into slot ``j`` with a
    one-hot mask; FC2 does the same over the packed hidden vector. The paper does not give the
    layer sizes; the defaults are the CryptoNets/Ishiyama-style MNIST net (5 channels of 5x5,
    stride 2, 100 hidden, 10 classes). Seven levels are used, one per multiplicative step.
    """
    p = params or DEFAULT_CNN_PARAMS
    for what, v in (("channels", channels), ("kernel", kernel), ("stride", stride), ("image", image),
                    ("hidden", hidden), ("classes", classes)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{what} must be a positive integer, got {v!r}")
    if image * image > p.slots or hidden > p.slots:
        raise ConfigError(f"a {image}x{image} image or {hidden} neurons do not fit in {p.slots} slots")
    if p.levels < 7:
        raise ConfigError(f"the CNN needs 7 levels; the parameters give {p.levels}")
    b = ProgramBuilder(p)
    x = b.input("image")
    # conv: rotations of the input shared by all channels
    b.phase = "conv1"
    offsets = [dy * image + dx for dy in range(kernel) for dx in range(kernel)]
    shifted = {0: x}
    for o in offsets[1:]:
        shifted[o] = b.rotate(x, o)
    conv = []
    for c in range(channels):
        acc = None
        for k, o in enumerate(offsets):
            t = b.mul_plain(shifted[o], f"w_conv[{c},{k}]")
            acc = t if acc is None else b.add(acc, t)
        assert acc is not None, "kernel >= 1: at least one offset"
        acc = b.rescale(acc)
        acc = b.add_plain(acc, f"b_conv[{c}]")
        conv.append(acc)
    b.phase = "act1"
    act = [b.rescale(b.relinearize(b.mul(a, a))) for a in conv]
    # FC1: per neuron, sum over channels then over slots; pack neuron j into slot j
    b.phase = "fc1"
    span = image * image
    steps = [1 << s for s in range(max(1, math.ceil(math.log2(span))))]
    packed = None
    for j in range(hidden):
        acc = None
        for c in range(channels):
            t = b.mul_plain(act[c], f"w_fc1[{j},{c}]")
            acc = t if acc is None else b.add(acc, t)
        assert acc is not None, "channels >= 1"
        acc = b.rescale(acc)
        for s in steps:
            acc = b.add(acc, b.rotate(acc, s))
        one = b.rescale(b.mul_plain(acc, f"mask_fc1[{j}]"))
        packed = one if packed is None else b.add(packed, one)
    assert packed is not None, "hidden >= 1"
    packed = b.add_plain(packed, "b_fc1")
    b.phase = "act2"
    h = b.rescale(b.relinearize(b.mul(packed, packed)))
    b.phase = "fc2"
    steps2 = [1 << s for s in range(max(1, math.ceil(math.log2(hidden))))]
    out = None
    for k in range(classes):
        acc = b.rescale(b.mul_plain(h, f"w_fc2[{k}]"))
        for s in steps2:
            acc = b.add(acc, b.rotate(acc, s))
        one = b.rescale(b.mul_plain(acc, f"mask_fc2[{k}]"))
        out = one if out is None else b.add(out, one)
    assert out is not None, "classes >= 1"
    b.add_plain(out, "b_fc2")
    name = f"cnn-c{channels}-k{kernel}-h{hidden}"
    return HEProgram(name, "generated", p, b.ops, input_bytes={"image": p.ciphertext_bytes(p.levels)},
                     notes=["generated: layer sizes are the CryptoNets/Ishiyama-style MNIST net, not the exact EVA "
                            f"program of {PAPERS['in-storage-he'].cite()} (which the paper does not list)"])


__all__ = ["DEFAULT_CNN_PARAMS", "generate_cnn"]
