"""Freeze a course's grading processes at random until SIGTERM (see tests/load.py).

    python tests/pauser.py COURSE_ROOT LONGEST_SECONDS SEED [--births-only] [--kills]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import freeze_at_random  # noqa: E402 - this folder first, as a script

if __name__ == "__main__":
    root, longest, seed = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    freeze_at_random(root, longest, "--births-only" in sys.argv[4:], seed,
                     kills="--kills" in sys.argv[4:])
