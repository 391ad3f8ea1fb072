"""The submission layer: one submission graded by nbgrader in a scratch course directory.

* :mod:`.child` — the grading process: stage, run nbgrader's autograde, read the verdicts
  back into an :class:`~autograder.course.Outcome`;
* :mod:`.staging` and :mod:`.scratch_gradebook` — the submission's files and a fast copy
  of the gradebook, in the scratch course;
* :mod:`.settings` — every nbgrader setting of the course, built in one place;
* the course's nbgrader preprocessors, one job each: :mod:`.restore` (the released cells put
  back), :mod:`.hidden_cases` (hidden cases shipped and judged), :mod:`.execute` (the
  notebook run, surviving crashes, limited by computing time), :mod:`.outputs` (what outputs
  may hold), :mod:`.metadata` (nbgrader's check, compiled), :mod:`.hide` (feedback without
  hidden tests);
* :mod:`.verdicts` — the protocol between them, as data.

It runs student code only in :mod:`autograder.sandbox` and judges it with
:mod:`autograder.hidden`; it never writes the course's gradebook.
"""
