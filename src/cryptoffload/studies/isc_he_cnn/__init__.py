"""Study ``isc-he-cnn``: homomorphic CNN inference on computational storage (Suzuki and Yamana).

Its room, one concept per module:

* :mod:`.study` -- options, config and ``run``: the study's table of contents (start here).
* :mod:`.paper` -- the paper's numbers, as printed.
* :mod:`.tables` -- Table 2 (latency vs source bandwidth), Table 3 (devices), the CPU reference.
* :mod:`.gap` -- where the prediction parts from Table 2, input by input.
* :mod:`.bands` -- the predicted figures with their bands.
* :mod:`.claims` -- verdicts and claims on the paper's program; :mod:`.trace_claims` the same on
  another program (the report's recorded trace).
* :mod:`.figures` -- the PNGs.
* :mod:`.plan_table` -- the capacity plan (``policies/isc_plan.py``) as a table (also ``plan isc``).

The models it drives live in ``sim/isc/``.
"""
