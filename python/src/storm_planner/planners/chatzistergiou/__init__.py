"""The planners of Chatzistergiou & Viglas.

A. Chatzistergiou, S. D. Viglas, *Fast Heuristics for Near-Optimal Task Allocation in
Data Stream Processing over Clusters*, CIKM 2014.

* :mod:`.tasklevel` — ``tasklevel``: taskLevel (Alg. 1–3);
* :mod:`.topdown` — ``topdown``: topDown (Alg. 4–5) with the §5 relaxations;
* :mod:`.topdown_ls` — ``topdown-ls``: topDown or taskLevel followed by a local search;
* :mod:`.optimal` — ``optimal``: the exact maximum IMC gain for small problems (§7.3's
  brute-force comparison point);
* :mod:`._groups` — the group model they share (§2.1): groups, group pairs, node pools,
  repacking.

The §7.3 random-graph protocol that evaluates them is in :mod:`storm_planner.generators.chatzistergiou`.
"""
