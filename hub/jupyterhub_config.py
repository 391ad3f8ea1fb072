"""JupyterHub's configuration for the course's class: ``make hub`` (``jupyterhub -f
hub/jupyterhub_config.py``). Every place and port comes from :mod:`hub.settings`.

* Students and instructors of the class list log in with their local account (PAM); each
  gets a JupyterLab of their own, started as their own user (JupyterHub's local process
  spawner), with nbgrader's Assignment List and Validate button, in their home.
* The hub listens on 127.0.0.1 only, over http, unless it is given a certificate
  (``HUB_TLS_CERT``, ``HUB_TLS_KEY``; then ``HUB_IP`` may open it to a network), or put a
  TLS proxy in front of it (nginx, Caddy). An LMS's launches need https.
* The hub starts two services and stops them with it: ``grader``, the grading service
  (``python -m autograder serve``: graded on arrival, feedback released to each student),
  and ``class-report``, the class report behind the hub's login, which only instructors
  may open (the role ``instructor`` holds the one scope it asks for).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hub.settings import HubSettings  # noqa: E402

settings = HubSettings.from_environment()
state = settings.state
c = get_config()  # noqa: F821 -- provided by traitlets when it loads this file

c.JupyterHub.bind_url = f"{'https' if settings.tls else 'http'}://{settings.ip}:{settings.port}"
if settings.tls:          # the proxy serves https itself (HUB_TLS_CERT, HUB_TLS_KEY)
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = (str(path) for path in settings.tls)
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{settings.hub_api_port}"
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.ConfigurableHTTPProxy.command = [str(settings.proxy)]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings.proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")

c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = set(settings.students) | set(settings.instructors)
c.Authenticator.delete_invalid_users = True

# The students' Python sees the course's packages (hub/classroom.py), and Jupyter's
# configuration and data of the course's environment: JupyterLab, nbgrader's extensions.
students_environment = {
    "JUPYTER_CONFIG_PATH": f"{settings.student_config}:{sys.prefix}/etc/jupyter",
    "JUPYTER_PATH": f"{sys.prefix}/share/jupyter",
    "PATH": f"{settings.students_python.parent}:/usr/local/bin:/usr/bin:/bin",
}

# LTI 1.3 launches from Canvas or Moodle (hub/lti.py), where the course has an lti.toml: the
# platform's login initiation at /hub/lti13/oauth_login, its id_token posted back to
# /hub/lti13/oauth_callback. The local login stays.
lti = settings.lti
if lti is not None:
    c.JupyterHub.authenticator_class = "hub.lti.CourseAuthenticator"
    c.CourseAuthenticator.issuer = lti.issuer
    c.CourseAuthenticator.client_id = {lti.client_id}
    c.CourseAuthenticator.deployment_id = lti.deployment_id
    c.CourseAuthenticator.authorize_url = lti.auth_login_url
    c.CourseAuthenticator.jwks_endpoint = lti.jwks_url
    c.CourseAuthenticator.private_key = str(lti.private_key)
    c.CourseAuthenticator.course_root = str(settings.course)
    c.CourseAuthenticator.class_list = str(settings.class_list)
    c.CourseAuthenticator.nonce_file = str(state / "lti-nonces.json")
    # A student launching an assignment not fetched yet gets it fetched, as themselves.
    c.CourseAuthenticator.students_python = str(settings.students_python)
    c.CourseAuthenticator.student_environment = students_environment

python = str(settings.python)
c.Spawner.cmd = [str(settings.students_python), "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.environment = students_environment
c.Spawner.http_timeout = 60
c.Spawner.start_timeout = 120

exchange = ["--exchange", str(settings.exchange.root), "--course-id", settings.exchange.course_id]
c.JupyterHub.services = [
    {"name": "grader",
     "command": [python, "-m", "autograder", "--root", str(settings.course), *exchange, "serve"],
     "cwd": str(settings.course)},
    {"name": "class-report",
     "url": f"http://127.0.0.1:{settings.service_port}",
     "command": [python, "-m", "autograder.classview", "--root", str(settings.course),
                 *exchange],
     "cwd": str(settings.course),
     "oauth_no_confirm": True},
]
c.JupyterHub.load_roles = [
    {"name": "instructor", "description": "opens the class report",
     "users": settings.instructors,
     "scopes": ["self", "access:services!service=class-report"]},
]
