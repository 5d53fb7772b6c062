import sys

from storm_planner.cli import main

sys.exit(main())
