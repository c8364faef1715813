"""Makes ``validators_support`` importable by the validator tests.

The project runs pytest with ``--import-mode=importlib``, which puts no test
folder on ``sys.path``; the helpers module sits beside this file.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
