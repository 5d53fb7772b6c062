"""The storm-planner benchmark harness: each experiment reproduces one of a paper's (or measures the kit on
a real local Storm cluster) and writes tables, plots and the command that reproduces them. A distribution of
its own beside the library (``storm_planner``), which it uses and which knows nothing of it; its
``storm-planner bench`` command reaches the library's CLI through the ``storm_planner.commands`` entry point.

One subpackage per experiment: :mod:`.e2e` (every planner against Storm's schedulers on real Storm, and the
wire-cost fit of its grid), :mod:`.hetero_real`, :mod:`.albic_real`, :mod:`.topdown_real`, :mod:`.gma`,
:mod:`.qescalor`, :mod:`.soak` (an hour of faults); :mod:`.sim` holds the papers' simulated benchmarks; :mod:`.common` what they share
(declaring a benchmark and writing its report, the cluster helpers). Results go to ``benchmarks/results/``
(ignored by git) unless ``--out`` says otherwise; published reports live in ``benchmarks/reports/``."""
