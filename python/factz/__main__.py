"""``python -m factz ...`` runs the bundled command line tool (factz._cli)."""

import sys

from ._cli import main

sys.exit(main())
