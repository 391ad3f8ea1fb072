"""The course's JupyterHub: a class on one machine, graded as students submit.

``make hub`` starts it (:mod:`.jupyterhub_config`, read by JupyterHub): JupyterHub from
PyPI with its proxy, configurable-http-proxy, from npm; local users who log in with their
system password (PAM), one per student, each with their own JupyterLab and nbgrader's
Assignment List and Validate button; nbgrader's filesystem exchange; and the grading
service, ``python -m autograder serve``, which the hub starts and stops. :mod:`.settings`
names every place and port once, from the environment; :mod:`.classroom` creates the
users of a class list and the exchange.
"""
