"""Study ``fpga-reconfig``: FPGA reconfiguration hidden by overlap and request prediction (Niwa,
Maeda and Yamaguchi).

Its room, one concept per module:

* :mod:`.study` -- options, config and ``run``: the study's table of contents (start here).
* :mod:`.paper` -- the paper's own numbers (Tables 6-8, Fig. 7).
* :mod:`.sweep` -- one seed's traces, intervals and policy runs, and many seeds.
* :mod:`.tables` -- the paper's tables beside ours.
* :mod:`.bands` -- the headline figures with their bands over the trace seed.
* :mod:`.verdicts` -- a verdict for every cell beside the paper's.

The server model it drives lives in ``sim/reconfig/``; the policies in ``policies/reconfig.py``.
"""
