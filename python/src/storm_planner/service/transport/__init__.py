"""The planner service's wire: the Thrift contract (``planner.thrift``), the server, its limits and counters, a client."""
