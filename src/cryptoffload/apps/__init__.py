"""End-to-end programs (layer 7): the papers' applications, really run on this machine.

What flows in and out: the CLI's arguments (``cli/``) and data sets in; running servers and
clients (HTTP over TLS, loopback by default), trained models, measurements and results out,
which the studies (``studies/``) use beside the simulations. Built on ``crypto/`` (Paillier,
CKKS) and ``engines/``.

Packages and modules:

* :mod:`.ridge` -- privacy-preserving ridge regression over Paillier, one module per party
  (provider, platform, CSP, buyer); start with its ``__init__`` and ``protocol.py``;
* :mod:`.he_cnn` -- encrypted MNIST inference with CKKS (train, pack, infer, serve); start with
  its ``__init__`` and ``packing.py``;
* :mod:`.tls` -- a real nginx in the SmartNIC TLS paper's four modes, and what kTLS really ran;
* shared by the servers: :mod:`._http` (aiohttp servers: bind, TLS, JSON refusals, limits),
  :mod:`._listen` (accepting connections), :mod:`._credentials` (bearer tokens),
  :mod:`._private_tmp` (the folder a server keeps its secrets in).
* :mod:`.serving` -- what the CLI sets and checks of them (connection limits, a server URL, a
  token file): the one public door to those private modules.

Where to start reading: :mod:`._http`, then the party you care about.
"""
