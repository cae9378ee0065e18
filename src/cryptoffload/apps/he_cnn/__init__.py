"""Encrypted MNIST inference with CKKS, traced op by op (the workload of Suzuki and Yamana's in-storage HE paper).

A CryptoNets-style CNN (conv 5x5 stride 2 with 5 channels, x^2, FC 845->100, x^2, FC 100->10)
trained in numpy, evaluated on encrypted images with per-channel packing (one image per
ciphertext, 45 rotations) or CryptoNets' per-pixel batching (a slot per image), on any
:mod:`cryptoffload.crypto.ckks` backend, with a client/server split over HTTP. See
``docs/he-cnn.md``.

Modules: :mod:`.data` (the MNIST training and held-out sets, read by :mod:`.mnist_csv` and
:mod:`.mnist_idx`, checked by :mod:`.mnist_checks`), :mod:`.model` (architecture, forward pass,
files), :mod:`.train` (numpy training), :mod:`.packing` (per-channel packing) and
:mod:`.batching` (per-pixel batching), :mod:`.digit_image` (a PNG or JPEG digit of one's own as
an MNIST image, decoded by :mod:`.image_decode` within a memory budget once :mod:`.png_check` or
:mod:`.jpeg_check` -- with :mod:`.jpeg_scan`, its Huffman walk -- checked the whole file), :mod:`.infer` (``infer_image``), :mod:`.benchmark`
(``bench``), :mod:`.accuracy` (``evaluate``), :mod:`.server` (``serve``) and :mod:`.client`
(``client_infer``).
"""

from cryptoffload.apps.he_cnn.data import MnistData, load_mnist
from cryptoffload.apps.he_cnn.mnist_checks import check_image
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig, load_model
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS, TrainResult, train_model

__all__ = [
    "DEFAULT_WEIGHTS", "CnnModel", "MnistData", "ModelConfig", "TrainResult", "check_image", "load_mnist",
    "load_model", "train_model",
]
