"""python3 -m chaos (with tests/fleet and tests/polyglot on sys.path): see scripts/fleet-chaos."""

import sys

from .run import main

sys.exit(main(sys.argv[1:]))
