"""The commands of ``python -m autograder``, one module each: ``release``, ``collect``,
``grade``, ``feedback``, ``report``, ``export``, ``validate``.

Each puts the layers below together for one job; :mod:`autograder.cli` parses the command
line and calls them.
"""
