"""Study ``paillier-offload``: Paillier on a QAT card with coroutines (Zhou and Hua's QHCS), and on
this machine's engines.

Its room, one concept per module:

* :mod:`.study` -- options, config and ``run``: the study's table of contents (start here).
* :mod:`.qat_model` -- the simulated half: the paper's Table 1 on the DH8970 model.
* :mod:`.qat_bands` -- the headline figures with their bands.
* :mod:`.measured` -- single-core encryption and decryption measured here.

GPU rows (shared with ``ridge``) are :mod:`cryptoffload.studies.paillier_gpu`; the QAT model is
``sim/qat/``.
"""
