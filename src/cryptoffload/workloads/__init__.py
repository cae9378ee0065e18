"""Workloads: what arrives at the devices -- request streams, HE programs, BSGS op DAGs, data sets.

What flows in and out: seeds, profiles and user files (logs, recorded HE traces, CSV data) come
in; immutable, validated values go out -- a ``Trace``, an ``HEProgram``, an ``OpDag``, a
``RidgeData`` -- which ``sim/`` prices, ``engines/`` and ``apps/`` run, and ``policies/`` decide
over. Workloads import only ``crypto/`` and the base library; they know nothing of devices.

Where to start reading: :mod:`.request_trace` (the ``Trace`` every request model agrees on),
then :mod:`.he_program` (an HE program as ops with the bytes each touches), then
:mod:`.bsgs` (a BSGS product as an op DAG split over devices).

Request streams (fpga-reconfig study):
  * ``request_trace`` -- ``Trace``: ``(time, client, cipher, size)`` per request, immutable.
  * ``web_trace`` -- ``generate_trace``: the paper's synthetic trace (seed in, ``Trace`` out).
  * ``client_population`` -- the clients behind a log: how many, how active, which cipher.
  * ``population_fit`` -- fitting that population to the paper's Fc and Table 7.
  * ``trace_log`` -- a user's CSV or Common Log Format file in, ``Trace`` out (and back to CSV).

HE programs (isc-he-cnn study):
  * ``he_program`` -- ``HEOp``, ``HEProgram``: ops in program order with levels, inputs, bytes.
  * ``he_program_builder`` -- ``ProgramBuilder``: write a program op by op, sizes from the ring.
  * ``he_cnn_generated`` -- the CryptoNets-style MNIST CNN generated op by op.
  * ``he_cnn_eva`` -- the paper's CNN from its stated inputs, compiled the way EVA does.
  * ``he_cnn_fitted`` -- the paper's totals spread over phases fitted to its Table 2.
  * ``he_trace`` -- a recorded trace (JSON from ``crypto.ckks.RecordingBackend``) in, program out.
  * ``he_models`` -- which program a ``--model`` name means.

Others:
  * ``bsgs`` -- BSGS shapes, splits over devices, ``build_dag`` -> ``OpDag`` (bsgs-multidevice).
  * ``ridge_data`` -- data sets of the private ridge regression app.
"""
