"""The course's autograder: nbgrader, sandboxed, judged outside the sandbox, one writer.

Layers, each importing only those below it (checked by import-linter: ``make lint``)::

    cli                          python -m autograder COMMAND
    commands | formgrader        release collect grade feedback report export validate
                                 similarity | nbgrader's formgrader, alone on a server
                                 (make formgrader)
    batch | proving              many submissions, one writer | the tests proven
    submission                   one submission graded by nbgrader in a scratch course
    sandbox | hidden | display   where student code runs | the hidden tests | what a
    | lms | similarity           person is shown of a submission, inert | the LMSs' files
                                 | how alike submissions' texts are (read, never run)
    course                       paths, files, outcomes: what every layer agrees on

The README's "How the grader works" follows one submission through them.
"""
