"""LTI 1.3 Advantage, the tool's side of the services: grades back to the LMS's gradebook
(Assignment and Grade Services) and the class list from it (Names and Role Provisioning).

:mod:`.settings` reads the course's registration with the platform (``lti.toml``),
:mod:`.keys` keeps the tool's private key and publishes its public key set, :mod:`.services`
talks to the platform (through pylti1p3next, the maintained fork of PyLTI1p3), and
:mod:`.ledger` remembers what each student's line item was last sent, so that a grade the
platform did not take is sent again, never dropped. Which scores to send is the grading
commands' business (:mod:`autograder.commands.lti`): this package only carries them.
"""
