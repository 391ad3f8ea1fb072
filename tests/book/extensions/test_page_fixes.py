"""book_build.extensions.page_fixes: a script registered twice reaches a page once."""

from __future__ import annotations

import pytest

# One inline script reaching a page twice, as sphinx-thebe's and sphinx-togglebutton's reach a
# Jupyter Book page (registered again while the environment is read; the copies' file names
# differ: None and '').
SETUP = """
def setup(app):
    from sphinx.builders.html._assets import _JavaScript

    def again(app, pagename, templatename, context, doctree):
        context["script_files"] = [*context["script_files"],
                                   _JavaScript("", body="const THEBE_JS_URL = 1;")]

    app.add_js_file(None, body="const THEBE_JS_URL = 1;")
    app.connect("html-page-context", again, priority=100)
"""


@pytest.mark.parametrize("extensions, copies",
                         [([], 2), (["book_build.extensions.page_fixes"], 1)])
def test_a_script_registered_twice_is_on_the_page_once(build, extensions, copies):
    built = build({"index.rst": "Page\n====\n\nText.\n"}, extensions, setup=SETUP)
    assert built.error is None, built.warnings
    assert built.page("index").count("const THEBE_JS_URL = 1;") == copies


@pytest.mark.parametrize("extensions, title",
                         [([], "Attention in NLP &#8212; Attention in NLP"),
                          (["book_build.extensions.page_fixes"], "Attention in NLP")])
def test_the_front_page_names_the_site_once_in_the_tab(build, extensions, title):
    built = build({"index.rst": "Attention in NLP\n================\n\n.. toctree::\n\n   other\n",
                   "other.rst": "Scores\n======\n\nText.\n"},
                  extensions, html_title="Attention in NLP", project="Attention in NLP")
    assert built.error is None, built.warnings
    assert f"<title>{title}</title>" in built.page("index")
    assert "<title>Scores &#8212; Attention in NLP</title>" in built.page("other")
