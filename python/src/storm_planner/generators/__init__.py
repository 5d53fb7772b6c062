"""Problem generators: the workloads of the papers' evaluations, as problem files.

Used by the tests and the benchmarks alike (as ``networkx.generators`` or
``sklearn.datasets``); each module follows one paper's protocol.

* :mod:`.nasiri` — Nasiri et al. §6: the Linear, Diamond and Star topologies, the
  clusters of Tables II and IV and the profile of Table III.
"""
