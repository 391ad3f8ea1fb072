"""The hidden tests: what they are written in, what the grader computes, how it judges.

Grading a hidden test has two halves in two processes:

1. the grader computes the reference answers (:mod:`.references`) and ships only the
   cases' *inputs* into the sandbox, where the probe (:mod:`.probe`, standard library and
   torch only: it runs in the student's kernel) reports what the student's code returned;
2. the grader judges those reports (:mod:`.judging`) in its own process.

Hidden tests (``solutions/<assignment>/hidden_tests.py``) are written in the vocabulary of
:mod:`.vocabulary`, re-exported here. This layer imports only :mod:`autograder.course`.
"""

from .vocabulary import ANY, Call, Helper, Module, Partial, StandIn, Student, Suite

__all__ = ["ANY", "Call", "Helper", "Module", "Partial", "StandIn", "Student", "Suite"]
