"""The planner service: the wire (:mod:`.transport`), the planning behind it (:mod:`.planning`), run by :mod:`.serve`."""
