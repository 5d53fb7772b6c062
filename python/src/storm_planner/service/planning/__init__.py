"""The planner service's planning: a request admitted, each topology converted, planned and answered."""
