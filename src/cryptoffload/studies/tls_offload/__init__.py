"""Study ``tls-offload``: TLS offload for a management node, nginx in four modes (Miyakawa et al.).

Its room, one concept per module:

* :mod:`.study` -- options, config and ``run``: the study's table of contents (start here).
* :mod:`.model` -- the modelled half: why offload made the paper's single fetches slower.
* :mod:`.bands` -- the predicted single-fetch ratios with their bands.
* :mod:`.guest` -- mode 3 (kTLS) as measured in a Linux guest, beside the model.

The node and NIC models live in ``sim/tls/``; the real servers in ``apps/tls/``.
"""
