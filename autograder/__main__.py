"""``python -m autograder`` runs the ``aag`` command line (what ``./aag`` calls)."""

import sys

from autograder.tools.cli import main

sys.exit(main())
