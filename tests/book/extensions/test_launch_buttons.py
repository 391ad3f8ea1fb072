"""book_build.extensions.launch_buttons: words about launching only where it can work."""

from __future__ import annotations

import pytest

from book_build.extensions.launch_buttons import launch_configured

PAGE = ("Start\n=====\n\n.. only:: launch_buttons\n\n   Use the rocket to open this page.\n\n"
        "Read on.\n")
REPOSITORY = "https://github.com/attention-course-tests/attention-in-nlp"


@pytest.mark.parametrize("options, configured", [
    ({}, False),
    ({"repository_url": REPOSITORY, "launch_buttons": {}}, False),
    ({"launch_buttons": {"binderhub_url": "https://mybinder.org"}}, False),
    ({"repository_url": REPOSITORY, "launch_buttons": {"jupyterhub_url": "  "}}, False),
    ({"repository_url": REPOSITORY, "launch_buttons": {"binderhub_url": "https://mybinder.org"}},
     True),
    ({"repository_url": REPOSITORY, "launch_buttons": {"jupyterhub_url": "https://hub.example"}},
     True),
])
def test_the_text_about_launching_is_built_only_with_a_repository_and_a_service(
        build, options, configured):
    assert launch_configured(options) is configured
    built = build({"index.rst": PAGE}, ["book_build.extensions.launch_buttons"],
                  html_theme="sphinx_book_theme", html_theme_options=options)
    assert built.error is None, built.warnings
    page = built.page("index")
    assert "Read on." in page
    assert ("Use the rocket" in page) is configured
