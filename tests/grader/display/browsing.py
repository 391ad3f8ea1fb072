"""A grader's browser going through a class's hostile submissions, page by page.

:func:`visit_formgrader` opens, in a formgrader (the course's, or plain nbgrader's), every
grading page — the student's links, summaries and buttons clicked, the student's name
shown — each student's own pages, and the lists of students, assignments and
submissions; :func:`visit_feedback` opens every feedback page, annotated notebook and the
report from disk. Both return a :class:`~.hostile.Watch` of what happened; with
``honest``, they also check that each submission's honest sentence, typeset formula and
printed line are on its pages.
"""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from collections.abc import Iterator

from nbgrader.api import Gradebook
from playwright.sync_api import Error as PlaywrightError

from autograder.course import Course
from tests.formgrading import NAME, wait_until

from .hostile import HONEST, Class, Watch, feedback_pages, honest_print, honest_text
from .payloads import fill

PATIENCE_MS = 120_000
# Elements of a student's content (rendered markdown, outputs) a grader might click.
CLICKABLE = ", ".join(f"{area} {element}" for area in (".text_cell_render", ".output_area")
                      for element in ("a", "summary", "button", "input"))
MATHJAX_READY = "() => window.MathJax && MathJax.startup && MathJax.startup.promise"


def new_page(browser, watch: Watch):
    """A page of a fresh browser context, watched; nothing it asks for leaves the machine."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PATIENCE_MS)
    context.set_default_navigation_timeout(PATIENCE_MS)
    context.route(re.compile(r"^(?!(http://127\.0\.0\.1[:/]|file:|data:|blob:)).*"),
                  lambda route: route.abort())
    page = context.new_page()
    watch.attach(page)
    return page


def open_page(page, watch: Watch, where: str, url: str) -> None:
    """Go to ``url`` and wait for it, its MathJax and whatever a payload started (a page
    that a payload takes elsewhere meanwhile is recorded as left)."""
    watch.where = where
    page.goto(url)
    try:
        page.wait_for_load_state("load")
        page.evaluate(MATHJAX_READY)
    except PlaywrightError:
        watch.left.append(f"{where}: the page went to {page.url[:120]} while loading")
    page.wait_for_load_state("networkidle")


@contextlib.contextmanager
def _recorded(watch: Watch, honest: bool) -> Iterator[None]:
    """Let a page of plain nbgrader fail (a payload navigated it away), recording it; on
    the course's pages, nothing may."""
    try:
        yield
    except (PlaywrightError, AssertionError) as error:
        if honest:
            raise
        watch.left.append(f"{watch.where}: {str(error).splitlines()[0][:120]}")


def click_the_students_content(page, watch: Watch) -> None:
    """Click every link (but those to the web or to mail, which a grader follows by
    choice), summary and button of the student's content; come back to the page if a
    click took the browser elsewhere."""
    url = page.url
    targets = page.locator(CLICKABLE)
    for index in range(targets.count()):
        target = targets.nth(index)
        href = (target.get_attribute("href") or "").strip().lower()
        if href.startswith(("http:", "https:", "mailto:")) or not target.is_visible():
            continue
        target.click(no_wait_after=True, timeout=5000, force=True)
        if page.url.split("#")[0] != url.split("#")[0]:     # a link within the page is fine
            watch.left.append(f"{watch.where}: a click went to {page.url[:120]}")
            page.goto(url)
            page.wait_for_load_state("load")
    page.wait_for_load_state("networkidle")


def _check_honest(page, handed_in: Class, student: str, formula_in: str) -> None:
    """The honest parts of ``student``'s notebook are on the page: their sentence, its
    formula typeset, their printed line, and (the honest student) the image they pasted."""
    text = page.locator("#notebook").first.inner_text()
    assert honest_text(handed_in.label(student)).split(":")[0] in text, student
    assert page.locator(f"{formula_in} mjx-container").count() >= 1, student
    if student in handed_in.groups:
        assert honest_print(student) in text, student
    if student == HONEST:
        pasted = page.locator('.text_cell_render img[alt="my plot"]')
        assert pasted.count() == 1, "the pasted image is not shown"
        assert pasted.evaluate("image => image.complete && image.naturalWidth") > 0


def visit_formgrader(browser, url: str, course: Course, handed_in: Class,
                     honest: bool) -> Watch:
    """Every page of the formgrader at ``url`` (as printed, with its token) that shows
    something of ``handed_in``'s students."""
    origin = url.split("/formgrader")[0]
    watch = Watch(allowed=(origin + "/",))
    page = new_page(browser, watch)
    open_page(page, watch, "formgrader: first page", url)
    with Gradebook(course.db_url) as gb:
        ids = {s.student.id: s.id for s in gb.notebook_submissions(NAME, NAME)}
    for student in handed_in.students:
        if student not in ids:          # plain nbgrader could not grade it
            assert not honest, student
            continue
        grading = f"{origin}/formgrader/submissions/{ids[student]}/"
        with _recorded(watch, honest):
            open_page(page, watch, f"formgrader: grading page of {student!r}", grading)
            wait_until(page, "() => window.formgrader && formgrader.grades.loaded"
                             " && formgrader.comments.loaded",
                       PATIENCE_MS if honest else 3_000)
            page.locator(".glyphicon-eye-open").first.click(timeout=10_000)   # the name
            click_the_students_content(page, watch)
            if honest:
                _check_honest(page, handed_in, student, ".nbgrader_cell")
    for student in dict.fromkeys([*handed_in.idents, *handed_in.names]):
        quoted = urllib.parse.quote(student, safe="")
        with _recorded(watch, honest):
            open_page(page, watch, f"formgrader: page of student {student!r}",
                      f"{origin}/formgrader/manage_students/{quoted}")
            open_page(page, watch, f"formgrader: {student!r}'s submissions",
                      f"{origin}/formgrader/manage_students/{quoted}/{NAME}")
    for where, path in [("students", "manage_students"),
                        ("assignments", "manage_assignments"),
                        ("submissions to manage", f"manage_submissions/{NAME}"),
                        ("submissions", f"gradebook/{NAME}/{NAME}")]:
        with _recorded(watch, honest):
            open_page(page, watch, f"formgrader: list of {where}",
                      f"{origin}/formgrader/{path}")
    with _recorded(watch, honest):
        page.get_by_role("button", name="Show All Names").click(timeout=10_000)
        page.wait_for_load_state("networkidle")
    if honest:                          # the names are shown, as text
        names = " ".join(page.locator("#main-table").inner_text().split())
        for payload in handed_in.names.values():
            name = fill(payload.name, payload.kind, "last")
            if name.isprintable():
                assert " ".join(name.split()) in names, name
    page.context.close()
    return watch


def visit_feedback(browser, course: Course, handed_in: Class, honest: bool,
                   summaries: bool = True) -> Watch:
    """Every student's feedback page (``summaries``) and annotated notebook, and the
    class report if there is one, opened from disk."""
    reports = course.root / "reports"
    watch = Watch(allowed=(course.feedback.as_uri() + "/", reports.as_uri() + "/"))
    page = new_page(browser, watch)
    for student in handed_in.students:
        summary, notebook = feedback_pages(course, student)
        if not notebook.exists():       # plain nbgrader could not grade it
            assert not honest, student
            continue
        if summaries:
            open_page(page, watch, f"feedback of {student!r}", summary.as_uri())
            assert page.locator("h1").inner_text().startswith(NAME)
        with _recorded(watch, honest):
            open_page(page, watch, f"annotated notebook of {student!r}", notebook.as_uri())
            click_the_students_content(page, watch)
            if honest:
                _check_honest(page, handed_in, student, "")
    report = reports / f"{NAME}.html"
    if report.exists():
        open_page(page, watch, "report", report.as_uri())
        text = page.locator("body").inner_text()
        for student in handed_in.idents:
            assert student.strip() in text, student
    page.context.close()
    return watch
