"""cryptoffload: run, simulate and plan the offload of cryptographic work onto accelerators.

The same cryptographic work can be executed for real on this machine or simulated on hardware
we do not have; real runs calibrate the simulator (see ARCHITECTURE in the shared docs).

Packages, top to bottom (each imports only those below it; ``tests/test_architecture.py``
holds it): ``cli`` (what the user types) > ``api`` (the Python API, a facade) > ``studies``
(one module per paper) > ``apps``
(end-to-end programs: encrypted MNIST, private ridge regression, nginx TLS) > ``policies``
(decisions) > ``calibrate`` (measured profiles) > ``engines`` | ``sim`` (where work runs for
real | discrete-event models) > ``workloads`` (traces, op DAGs) > ``crypto`` (Paillier, CKKS,
ciphers, native code) > ``profiles`` (TOML cost tables) > the base library (``errors``,
``papers``, ``cuda``, ``machine``, ``checks``, ``io``, ``bench``, ``report``). Each package's
docstring is its map. Where to start reading: ``studies/registry.py`` (how a study is found and
run), then one study, e.g. ``studies/isc_he_cnn/study.py``, whose ``run`` reads as its table of contents.

The Python API (``cryptoffload.api``; start there to use the package rather than read it)::

    from cryptoffload import paillier, ckks, he_cnn, study, plan

These names are resolved on first use (PEP 562 ``__getattr__`` below): this module is the base
of every layer, so it imports none of them itself, and ``import cryptoffload`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: the modules of the public API, each ``cryptoffload.api.<name>``, reachable as ``cryptoffload.<name>``
API_MODULES = ("paillier", "ckks", "he_cnn", "study", "plan")

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports on first use
    from cryptoffload.api import ckks as ckks
    from cryptoffload.api import he_cnn as he_cnn
    from cryptoffload.api import paillier as paillier
    from cryptoffload.api import plan as plan
    from cryptoffload.api import study as study

__all__ = ["__version__", *API_MODULES]


def __getattr__(name: str) -> Any:
    if name in API_MODULES:
        module = importlib.import_module(f"cryptoffload.api.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'cryptoffload' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *API_MODULES})
