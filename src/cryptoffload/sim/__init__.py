"""The simulator: models of devices and links that answer "what if" for hardware we do not
have (FPGAs, CSDs, QAT cards, SmartNICs, several CKKS devices), driven by profiles.

What flows in and out: a model takes a *workload* (a request ``Trace`` or an HE program or BSGS
``OpDag`` from ``workloads/``), a *platform* or cost table built from a profile
(``profiles/*.toml``: cited, fitted, or measured by ``calibrate/``), and for the request
models a *policy* (``policies/``); it returns plain result dataclasses (latencies, busy times,
makespans) that a study in ``studies/`` turns into tables. Nothing here imports ``engines/``
(its peer) or anything above.

Where to start reading
----------------------
1. :mod:`.core` -- the ``Simulation`` (SimPy environment, seeded generator, ``Metrics``) and the
   ``Accounted`` protocol every resource reports through.
2. :mod:`.devices` and :mod:`.links` -- the two resources everything is built from: a FIFO
   server (``FifoDevice``, and ``ReconfigurableDevice`` with slots) and a fairly shared link
   (``SharedLink``, exact processor sharing).
3. :mod:`.protocols` -- the vocabulary's ``Device`` and ``Link`` as typing protocols, and the
   ``DeviceAccount`` a model that is not SimPy gives of its devices.
4. Then the model of the study you care about (below); each module's docstring says why it is
   shaped as it is.

What is where
-------------
The shared core (any model family):
  * ``core`` -- simulation, metrics, latency statistics.
  * ``devices`` -- FIFO and reconfigurable devices. ``links`` -- shared links.
  * ``protocols`` -- Device / Link protocols, ``DeviceAccount``.
  * ``device_dram`` -- a device's DRAM: capacity, reservations that wait for room, occupancy.
  * ``storage`` -- NAND flash, SSDs, PCIe lanes (links).

One subpackage per model family (each ``__init__`` is its map); a family of one module is a
module:

* ``reconfig/`` -- a web server encrypting on a reconfigurable FPGA (fpga-reconfig; Niwa et al.):
  ``platform`` (host CPU + FPGA costs from the cipher profiles), ``server`` (the readable SimPy
  reference, ``simulate_simpy``), ``fast`` (the same semantics as a numba loop, ``run_kernel``,
  what the study runs; tests hold the two to identical latencies).
* ``isc/`` -- in-storage computing for an HE CNN (isc-he-cnn; Suzuki and Yamana): ``fpga_cost``
  (seconds per CKKS op per level, HEAX figures), ``program_steps`` (an ``HEProgram`` compiled into
  steps and prefetch gates), ``platform`` (the FPGA-only / FPGA&SSD / CSD presets),
  ``simulation`` (``simulate``: the program on ``k`` boards; out: ``IscRun``), ``world`` (what
  the study and the planner both start from).
* ``qat/`` -- Paillier on a QAT card (paillier-offload; Zhou and Hua, QHCS): ``params`` (the
  model's inputs, each from a cited or measured source), ``card`` (engines behind a bounded ring
  pair), ``model`` (the client modes driving the card: ``simulate_mode``, ``simulate_all``),
  ``fit`` (the three values no source gives, each fitted to one figure).
* ``tls/`` -- TLS offload to a SmartNIC (tls-offload; Miyakawa et al.): ``smartnic``
  (``TlsCostModel``: CPU seconds, delay and wire bytes per request per mode), ``node`` (a
  management node serving a Poisson stream, and the clients-per-core planner).
* ``op_dag`` -- a BSGS product split over devices (bsgs-multidevice): ``DagCosts`` from a profile
  and ``schedule``, list scheduling of a ``workloads.bsgs.OpDag`` on devices joined by
  full-duplex ports; out: ``Schedule``. Checked against real Dask runs (``engines/bsgs_run``).
* ``gpu`` -- Paillier batches on a GPU from a measured profile: ``GpuDevice`` (copy in, kernel,
  copy out) and ``simulate_batches``.
"""
