"""Study ``bsgs-multidevice``: baby-step giant-step tuned for N devices (Ha, Jung and Paek).

Its room, one concept per module:

* :mod:`.study` -- options, config and ``run``: the study's table of contents (start here).
* :mod:`.paper` -- the paper's setup: the U280 model and Table 1 (also ``plan bsgs``).
* :mod:`.bands` -- Table 1's figures with their bands over the profile's ranges.
* :mod:`.bootstrap` -- CoeffToSlot/SlotToCoeff as sparse BSGS stages, and the stored OpenFHE runs.
* :mod:`.measured` -- real BSGS products with SEAL ciphertexts on Dask workers beside the model;
  :mod:`.measured_claims` the claims they support, with bands from the run's own noise.
* :mod:`.bootstrap_split` -- a whole bootstrap's stages split over Dask workers beside the model
  (issue 33); :mod:`.split_record` its stored record, read and checked once where it enters.

The op-DAG scheduler it drives is ``sim/op_dag.py``; the Dask runs are ``engines/bsgs_run.py`` and
``engines/bootstrap_run.py``.
"""
