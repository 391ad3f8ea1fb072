"""Sphinx extension: launch buttons only where they can work, and words about them only then.

The course's repository and its JupyterHub or Binder are set in one place, ``_config.yml``
(``repository.url``, ``launch_buttons.binderhub_url``, ``launch_buttons.jupyterhub_url``).
While none is set, sphinx-book-theme offers no launch button; this extension also keeps
the pages from mentioning one: text inside ``:::{only} launch_buttons`` is built only when
a launch service and the repository are set. When they are, every executable page gets the
theme's launch buttons (an exercise page opens its folder, the student release).
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config

TAG = "launch_buttons"
SERVICES = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url")


def launch_configured(theme_options: dict) -> bool:
    """Whether the book's settings name a repository and a service to launch it on."""
    launch = theme_options.get("launch_buttons") or {}
    return bool(theme_options.get("repository_url")) and any(
        str(launch.get(service) or "").strip() for service in SERVICES)


def tag_launch_buttons(app: Sphinx, config: Config) -> None:
    if launch_configured(config.html_theme_options or {}):
        app.tags.add(TAG)


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", tag_launch_buttons)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
