"""Model family: Paillier encryption on an Intel QAT card (the paillier-offload study; Zhou and
Hua, QHCS).

* :mod:`.params` -- the model's inputs, each derived from a cited or measured source.
* :mod:`.card` -- the card: engines behind a bounded request/response ring pair.
* :mod:`.model` -- the client modes driving the card (``simulate_mode``, ``simulate_all``); its
  docstring says why the model has the parts it has.
* :mod:`.fit` -- the three values no source gives, each fitted to one figure of the paper.
"""
