"""Entry point: `python -m controlplane` (the repository's ./tandem script runs this)."""

import sys

from controlplane.cli.main import main

sys.exit(main())
