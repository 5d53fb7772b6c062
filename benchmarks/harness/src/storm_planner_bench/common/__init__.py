"""What the experiments share: declaring a benchmark and writing its tables and report (:mod:`.report`),
the cluster helpers (:mod:`.cluster`), the time from submission to the first ack (:mod:`.startup`), the
replay of a dumped plugin request (:mod:`.profile_request`) and each run's per-cell records (:mod:`.cellfile`)."""
