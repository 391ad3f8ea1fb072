"""The class report behind the hub's login: ``python -m autograder.classview``, the hub's
``class-report`` service (hub/jupyterhub_config.py).

JupyterHub starts it; it answers under its service prefix (``/services/class-report/``)
with, per assignment, the class report of ``report`` (scores, pass rate per test,
diagnosis, hand grades pending, late work), rendered anew at each visit, and the
submissions waiting in the exchange to be graded. Every page asks the hub who the visitor
is (OAuth, :class:`jupyterhub.services.auth.HubOAuthenticated`) and answers only a user
whose role grants ``access:services!service=class-report`` — the instructors; a student,
logged in or with a token of their own, gets 403. Pages carry the report's
Content-Security-Policy as a header: nothing a student wrote can run in them.
"""
