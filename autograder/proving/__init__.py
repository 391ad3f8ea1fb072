"""The proving layer: evidence that the hidden tests judge correctly.

* :mod:`.catalogue` — the mutants (plausible wrong implementations, which must lose marks)
  and variants (correct ones in other styles, which must earn full marks) of every
  assignment, kept as data in ``mutants_and_variants/``;
* :mod:`.fill` — an implementation put into the released notebook as a student would;
* :mod:`.dryrun` — an assignment's cells and hidden cases run in this process: seconds
  instead of a sandboxed grading, for course authors (trusted code only);
* :mod:`.diagnosis` — a failing submission's likely mistake, from the mutants' patterns.

It depends on :mod:`autograder.hidden` and :mod:`autograder.course` only; the ``validate``
command grades the catalogue through the real pipeline.
"""
