"""cryptoffload: run, simulate and plan the offload of cryptographic work onto accelerators.

The same cryptographic work can be executed for real on this machine or simulated on hardware
we do not have; real runs calibrate the simulator (see ARCHITECTURE in the shared docs).

Packages, top to bottom (each imports only those below it; ``tests/test_architecture.py``
holds it): ``cli`` (what the user types) > ``studies`` (one module per paper) > ``apps``
(end-to-end programs: encrypted MNIST, private ridge regression, nginx TLS) > ``policies``
(decisions) > ``calibrate`` (measured profiles) > ``engines`` | ``sim`` (where work runs for
real | discrete-event models) > ``workloads`` (traces, op DAGs) > ``crypto`` (Paillier, CKKS,
ciphers, native code) > ``profiles`` (TOML cost tables) > the base library (``errors``,
``papers``, ``cuda``, ``machine``, ``checks``, ``io``, ``bench``, ``report``). Each package's
docstring is its map. Where to start reading: ``studies/registry.py`` (how a study is found and
run), then one study, e.g. ``studies/isc_he_cnn.py``, whose ``run`` reads as its table of contents.
"""

__version__ = "0.1.0"
