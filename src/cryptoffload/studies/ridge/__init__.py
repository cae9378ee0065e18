"""Study ``ridge``: privacy-preserving ridge regression for data trading, Paillier only (Zhou and
Hua, part 2).

Its room, one concept per module:

* :mod:`.study` -- options, config and ``run``: the study's table of contents (start here).
* :mod:`.bands` -- the phase times and accuracy with their bands.
* :mod:`.verdicts` -- every phase at 1,000,000 records beside the paper's.

The protocol's parties are ``apps/ridge/``; GPU rows are :mod:`cryptoffload.studies.paillier_gpu`.
"""
