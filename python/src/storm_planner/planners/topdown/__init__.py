"""topDown and taskLevel: the group-based allocation heuristics and their exact reference.

Paper: A. Chatzistergiou, S. D. Viglas, *Fast Heuristics for Near-Optimal Task Allocation in
Data Stream Processing over Clusters*, CIKM 2014. Implemented: the group model (§2.1),
taskLevel (Alg. 1–3), topDown (Alg. 4–5) with the §5 relaxations, and the §7.3 comparison
with the exact optimum.

* :mod:`.tasklevel` — ``tasklevel``: taskLevel (Alg. 1–3);
* :mod:`.topdown` — ``topdown``: topDown (Alg. 4–5) with the §5 relaxations;
* :mod:`.topdown_ls` — ``topdown-ls``: topDown or taskLevel followed by a local search;
* :mod:`.optimal` — ``optimal``: the exact maximum IMC gain for small problems (§7.3's
  brute-force comparison point);
* :mod:`._groups` — the group model they share (§2.1): groups, group pairs, node pools,
  repacking.

The §7 workloads that evaluate them (the §7.3 random-graph protocol among them) are in
:mod:`storm_planner.generators.topdown`.
"""
