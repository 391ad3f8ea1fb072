"""The pieces that make a student's content inert, one by one (the whole, in a browser, is
test_hostile_content.py's): the HTML policy, the inert notebook, the exporter, the
policies' text, the formgrader's templates, and spreadsheet cells."""

from __future__ import annotations

import base64
import csv
import io
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.server_extensions.formgrader import handlers as nbgrader_pages

from autograder.course.spreadsheet import from_cell, to_cell
from autograder.display import csp, mathjax
from autograder.display.exporter import InertHTMLExporter
from autograder.display.html import clean_html
from autograder.display.notebook import inert_notebook
from autograder.formgrader import templates

from .payloads import PNG


@pytest.mark.parametrize("fragment", [
    "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "<svg onload=alert(1)>",
    '<iframe srcdoc="<script>alert(1)</script>">', "<details open ontoggle=alert(1)>x</details>",
    '<a href="javascript:alert(1)">x</a>', '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href="data:text/html,<script>alert(1)</script>">x</a>', "<style>*{x:url(//e)}</style>",
    '<div style="background:url(//e)">x</div>', '<meta http-equiv="refresh" content="0">',
    '<base href="//e/">', '<form action="//e"><button>x</button></form>', '<link rel=x href=//e>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", "<object data=x>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">', '<img srcset="//e 1x">',
    '<input autofocus onfocus=alert(1)>', '<img src="//e/x.png">', '<img src="../../x.png">',
    '<img src="data:text/html;base64,PHNjcmlwdD4=">', '<video poster="//e"></video>',
])
def test_nothing_that_runs_loads_or_submits_is_left(fragment):
    cleaned = clean_html(fragment)
    assert not re.search(r"<(script|style|svg|math|iframe|object|form|input|button|meta|base|"
                         r"link|video|noscript)\b|\son\w+=|javascript:|style=|srcset=|//e|"
                         r"data:text|\.\./", cleaned, re.I), cleaned


def test_what_a_grader_reads_is_kept():
    fragment = ('<h2>Result</h2><p>a <b>bold</b> <code>x</code> &lt; b</p>'
                '<table class="dataframe"><tr><th>h</th><td colspan="2">1</td></tr></table>'
                '<ul><li>item</li></ul><a href="https://pytorch.org">docs</a>'
                f'<img src="data:image/png;base64,{PNG}" width="20" alt="plot">'
                '<img src="diagram.svg"><div class="highlight"><span class="k">def</span></div>')
    cleaned = clean_html(fragment)
    for kept in ("<h2>Result</h2>", "<b>bold</b>", "<code>x</code>", "&lt; b",
                 'class="dataframe"', 'colspan="2"', "<li>item</li>",
                 'href="https://pytorch.org"', 'rel="noopener noreferrer nofollow"',
                 f'src="data:image/png;base64,{PNG}"', 'width="20"', 'alt="plot"',
                 'src="diagram.svg"', 'class="highlight"', 'class="k"'):
        assert kept in cleaned, (kept, cleaned)


def test_ids_names_and_the_formgraders_classes_are_dropped():
    cleaned = clean_html('<input class="score" id="why-linear" name="x"><p id="formgrader" '
                         'class="score tabbable comment">x</p>')
    assert cleaned == "<p>x</p>"


def _notebook() -> nbformat.NotebookNode:
    code = new_code_cell("display(...)", execution_count=1, metadata={
        "magics_language": "not-a-lexer", "tags": ["ok", 'bad" x="y'], "nbgrader": {
            "grade_id": "answer", "solution": True, "grade": False, "locked": False,
            "schema_version": 3}})
    code.outputs = [
        new_output("display_data", data={"text/html": "<b>t</b><img src=x onerror=alert(1)>",
                                         "application/javascript": "alert(1)"}),
        new_output("display_data", data={"application/javascript": "alert(1)"}),
        new_output("display_data", data={"image/png": PNG},
                   metadata={"image/png": {"width": "1 onerror=alert(1)", "height": 30,
                                           "unconfined": True},
                             "filenames": {"image/png": "http://e/x.png"}}),
        new_output("display_data", data={"image/png": '" onerror="alert(1)'}),
        new_output("stream", name='stdout" onclick="x', text="printed"),
        new_output("error", ename="ValueError", evalue="bad", traceback=["tb"]),
    ]
    answer = new_markdown_cell("![pasted](attachment:a.png) ![gone](attachment:b.png)")
    answer.attachments = {"a.png": {"image/png": PNG, 'text/html" x="': "<b>"},
                          "c.svg": {"image/svg+xml": "<svg onload=alert(1)/>"}}
    return new_notebook(cells=[code, answer], metadata={
        "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}},
        "language_info": {"name": "python", "pygments_lexer": "no-such-lexer"},
        "title": "</title><script>alert(1)</script>",
        "attention_course": {"language": "zh_CN"}})


def test_the_inert_notebook_keeps_what_can_be_shown():
    original = _notebook()
    inert = inert_notebook(original)
    assert original.metadata["widgets"]                      # the original is not changed
    assert inert.metadata == {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                             "language": "python"},
                              "language_info": {"name": "python"},
                              "attention_course": {"language": "zh_CN"}}
    code, answer = inert.cells
    assert code.metadata == {"nbgrader": original.cells[0].metadata["nbgrader"],
                             "tags": ["ok"]}
    html, javascript, png, not_png, stream, error = code.outputs
    assert html.data == {"text/html": "<b>t</b><img>"}
    assert javascript.data == {"text/plain": "[an output not shown here: "
                                             "application/javascript]"}
    assert png.data == {"image/png": PNG} and png.metadata == {"image/png": {"height": 30}}
    assert not_png.data["text/plain"].startswith("[an output not shown here")
    assert (stream.name, stream.text) == ("stdout", "printed")
    assert (error.ename, error.evalue) == ("ValueError", "bad")
    svg = base64.b64encode(b"<svg onload=alert(1)/>").decode()
    assert answer.attachments == {"a.png": {"image/png": PNG}, "c.svg": {"image/svg+xml": svg}}
    nbformat.validate(inert)


def test_the_exporter_renders_the_inert_notebook_under_its_policy():
    """As `feedback` uses it: nbgrader's feedback template (GenerateFeedback's settings)."""
    exporter = InertHTMLExporter(static_base="../static", template_name="feedback",
                                 extra_template_basedirs=[nbgrader_pages.template_path],
                                 extra_template_paths=[_BOOTSTRAP])
    html, _ = exporter.from_notebook_node(_notebook(), resources={"nbgrader": _SCORES})
    head = html[html.index("<head>"):html.index("</head>")]
    assert head.index('http-equiv="Content-Security-Policy"') < head.index("<script")
    assert f'content="{csp.NOTEBOOK}"' in html.replace("&#x27;", "'")
    scripts = re.findall(r"<script\b[^>]*>", html)
    assert scripts == [f'<script src="{s}">' for s in mathjax.scripts("../static")], scripts
    assert f"data:image/png;base64,{PNG}" in html            # the pasted image shows
    assert "attachment:b.png" not in html                    # the missing one is left out
    assert "onerror" not in html and "alert(1)" not in html.replace("[an output", "")
    assert "cdnjs" not in html and "http://e" not in html


_BOOTSTRAP = str(Path(nbgrader_pages.static_path) / "node_modules" / "bootstrap" / "dist" / "css")
_SCORES = {"notebook": "short-answer", "score": 1, "max_score": 4, "late_penalty": 0}


def test_the_page_policies_allow_no_inline_script_and_nothing_from_elsewhere():
    for policy in (csp.PAGE, csp.NOTEBOOK, csp.FILE, csp.server(), csp.server("n0nce", ["h"])):
        directives = dict(d.split(" ", 1) for d in policy.split("; ") if " " in d)
        assert directives["default-src"] == "'none'"
        script = directives.get("script-src", "'none'")
        assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script
        assert "http" not in policy and "*" not in policy
    assert "'nonce-n0nce'" in csp.server("n0nce") and "nonce" not in csp.server()
    assert "sandbox" in csp.FILE


def test_nbgraders_inline_scripts_get_the_nonce_and_json_values():
    environment = templates.environment(nbgrader_pages.template_path)
    hostile = '";alert(1);"</script><img src=x onerror=alert(2)>'
    page = environment.get_template("manage_students_assignments.tpl").render(
        base_url="", student_id=hostile, csp_nonce="N0NCE")
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>(.*?)</script>", page, re.S)
    assert inline and all('nonce="N0NCE"' in attributes for attributes, _ in inline)
    assert "<img" not in page and "alert(1);\"" not in page
    assert "var student_id = " + '"\\";alert(1);\\"\\u003c/script\\u003e' in page
    assert len(templates.handler_hashes(nbgrader_pages.template_path)) == 1   # one onclick


@pytest.mark.parametrize("value", ["=1+1", "+A1", "-A1", "@SUM(1)", "\t=1", "\r=1", "'=1",
                                   "'quoted", "plain", "", "-1.5", "3", "é=", "=HYPERLINK(\"x\")"])
def test_spreadsheet_cells_are_text_and_come_back(value):
    cell = to_cell(value)
    if value.startswith(("=", "+", "-", "@", "\t", "\r")) and value != "-1.5":
        assert cell.startswith("'")
    assert from_cell(cell) == value
    buffer = io.StringIO()
    csv.writer(buffer).writerow([cell, to_cell(-1.5), to_cell(2.0)])
    row = next(csv.reader(io.StringIO(buffer.getvalue())))
    assert from_cell(row[0]) == value and row[1:] == ["-1.5", "2.0"]
