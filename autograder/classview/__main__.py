"""``python -m autograder.classview --root COURSE --exchange ROOT``: see the package."""

from .app import main

main()
