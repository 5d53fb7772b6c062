"""The planner service: Thrift contract, request conversion, handler, server and client."""
