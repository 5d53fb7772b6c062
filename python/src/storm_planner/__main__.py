import sys

from storm_planner.cli import main

if __name__ == "__main__":  # the planner worker process (service.planning.runner) imports this module again
    sys.exit(main())
