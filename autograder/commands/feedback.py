"""`feedback`: an HTML report per student and assignment, with no hidden test in it.

``feedback/<student>/<assignment>/`` gets nbgrader's annotated notebook(s) — run through
:class:`~autograder.submission.hide.HideHiddenTests` — and an ``index.html`` summary: the
score, why anything could not be graded, what to check first (the hint of the catalogued
mistake that best explains the failures, see :mod:`autograder.proving.diagnosis`), and for each
test whether it passed, failed, timed out or could not run, with the reason. The page's own
words are in the language of the notebook handed in (the outcome's ``language``: English, or
Chinese for ``<assignment>.zh_CN.ipynb``), from a gettext catalogue.

Nothing a student handed in can act in these pages (:mod:`autograder.display`): the
annotated notebooks are rendered inert by nbgrader with the course's exporter, the summary
escapes everything and runs no script, both carry a Content-Security-Policy, and the
folder keeps only the pages and the assignment's released files (a student's other files
stay in ``submitted/``). MathJax, for the notebooks' formulas, is in ``feedback/_static/``.
"""

from __future__ import annotations

import gettext
import io
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import quote

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from jinja2 import Environment, select_autoescape
from markupsafe import Markup
from nbgrader.api import Gradebook

from ..course import Course, Outcome
from ..course.languages import ENGLISH
from ..course.outcome import (
    BY_HAND,
    OUTCOME_FILE,
    STATUS_COLOURS,
    STATUSES,
    load_outcome,
)
from ..display import csp, mathjax
from ..lms import deadlines
from ..lms.deadlines import Lateness
from ..lms.feedback_zips import canvas_member, moodle_member, write_zip
from ..lms.handed_in import CANVAS, MOODLE
from ..lms.roster import Roster
from ..proving.diagnosis import catalogue_mistakes, diagnose
from ..submission import settings
from ..submission.gradebook import with_hand_grades
from .lateness import lateness_of

# The page's own words are gettext messages, in English; their translations are in
# autograder/locales/<lang>/LC_MESSAGES/feedback.po, compiled when first used (Babel).
# Test messages, reasons and hints stay as the grader wrote them.
_SOURCE = """\
<!DOCTYPE html>
<html lang="{{ lang }}"><head><meta charset="utf-8">
{{ policy }}
<title>{{ _("%(assignment)s — feedback for %(student)s", assignment=o.assignment,
            student=o.student) }}</title>
<style>
 body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
 table { border-collapse: collapse; width: 100%; }
 td, th { border: 1px solid #ccc; padding: .4rem; }
 th { background: #f3f3f3; text-align: left; } pre { white-space: pre-wrap; margin: 0; }
{% for status, colour in colours.items() %} .{{ status|replace(' ', '-') }} { color: {{ colour }}; }
{% endfor %}
</style></head><body>
<h1>{{ o.assignment }}: {{ "%g"|format(o.score) }} / {{ "%g"|format(max_score) }}</h1>
<p>{{ _("Student:") }} <strong>{{ o.student }}</strong></p>
{% if late and late.excused %}<p class="late">{{ _("Excused: this assignment does not count \
toward your grade.") }}</p>{% elif late and late.days %}<p class="late">{% if late.flagged %}\
{{ _("The LMS marked this submission late, without its time: it counts as %(days)s day(s) \
late.", days=late.days) }}{% else %}{{ _("Handed in %(submitted)s, due %(due)s: %(days)s \
day(s) late.", submitted=late.submitted, due=late.due, days=late.days) }}{% endif %}
{{ _("Under the course's late policy it keeps %(credit)s of its points: %(final)s of \
%(max_score)s (%(raw)s before the penalty).", credit="{:.0%}".format(late.credit),
final="%g"|format(late.final(o.score)|round(4)), max_score="%g"|format(max_score),
raw="%g"|format(o.score)) }}</p>{% endif %}
{% if pending %}<p class="awaiting-a-grade">{{ _("%(pending)s of the %(max_score)s points are \
for answers graded by hand, which await their grade: the score above is the score so far.",
pending="%g"|format(pending), max_score="%g"|format(max_score)) }}</p>{% endif %}
{% if o.reasons %}<h2>{{ _("What could not be graded") }}</h2><ul>
{% for reason in o.reasons %}<li>{{ reason }}</li>{% endfor %}</ul>{% endif %}
{% if hints %}<h2>{{ _("What to check") }}</h2>
<p>{% if hints|length > 1 %}{{ _("Your results match a mistake many students make (more than \
one, in fact):") }}{% else %}{{ _("Your results match a mistake many students make:") }}\
{% endif %}</p><ul>{% for hint in hints %}<li>{{ hint }}</li>{% endfor %}</ul>
{% endif %}<h2>{{ _("Tests and answers") }}</h2>
<table><tr><th>{{ _("test") }}</th><th>{{ _("notebook") }}</th><th>{{ _("result") }}</th>\
<th>{{ _("points") }}</th><th>{{ _("why") }}</th></tr>
{% for c in o.cells %}<tr><td><code>{{ c.grade_id }}</code></td><td>{{ c.notebook }}</td>
<td class="{{ c.status|replace(' ', '-') }}">{{ statuses.get(c.status, c.status) }}</td>
<td>{{ "%g"|format(c.score) }} / {{ "%g"|format(c.max_score) }}</td>
<td><pre>{{ c.message }}</pre>
{% if c.comment %}<p class="comment">{{ c.comment }}</p>{% endif %}</td></tr>
{% endfor %}</table>
{% if notebooks %}<h2>{{ _("Your notebook, as graded") }}</h2><ul>
{% for nb in notebooks %}<li><a href="./{{ nb|urlencode }}.html">{{ nb }}</a></li>{% endfor %}</ul>
<p>{{ _("Hidden tests are not shown; their result and message are.") }}</p>{% endif %}
</body></html>
"""

# On the hub: where a student stands against the assignment's limits on official gradings
# (autograder.commands.allowance), on top of their feedback, or as the whole page when a
# submission was not graded.
_ALLOWANCE_SOURCE = """\
{% if a.limited %}<p class="allowance">{{ _("Official gradings of this assignment \
so far:") }}{% if a.per_hour %} {{ _("%(used)s of %(limit)s in the last hour", used=a.used_hour,
limit=a.per_hour) }}{% endif %}{% if a.per_hour and a.in_all %};{% endif %}{% if a.in_all %} \
{{ _("%(used)s of %(limit)s in all", used=a.used_all, limit=a.in_all) }}{% endif %}.</p>
{% endif %}"""
_NOTICE_SOURCE = """\
<!DOCTYPE html>
<html lang="{{ lang }}"><head><meta charset="utf-8">
{{ policy }}
<title>{{ _("%(assignment)s — feedback for %(student)s", assignment=assignment,
            student=student) }}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;">
<h1>{{ assignment }}</h1><p>{{ _("Student:") }} <strong>{{ student }}</strong></p>
<p class="not-graded"><strong>{{ _("This submission was not graded.") }}</strong> \
{% if a.exhausted and best %}{{ _("You have had every official grading this assignment \
allows (%(used)s); the best of your graded submissions counts.", used=a.used_all) }}\
{% elif a.exhausted %}{{ _("You have had every official grading this assignment allows \
(%(used)s); your last graded submission counts.", used=a.used_all) }}{% elif best %}\
{{ _("You have had as many official gradings in the last hour as this assignment \
allows (%(used)s): a submission that arrives after %(time)s (UTC) will be graded; until \
then, the best of your graded submissions counts.", used=a.used_hour, time=next_at) }}\
{% else %}{{ _("You have had as many official gradings in the last hour as this assignment \
allows (%(used)s): a submission that arrives after %(time)s (UTC) will be graded; until \
then, your last graded submission counts.", used=a.used_hour, time=next_at) }}{% endif %}</p>
{{ allowance }}</body></html>
"""
# Under ``counts = "best"``: which official grading counts (:mod:`.attempts`).
_COUNTING_SOURCE = """\
<p class="counting">{% if c.this_counts %}{{ _("The best of your official gradings counts: \
this submission, with %(score)s of the %(max)s points of the tests.", score=c.score,
max=c.max_score) }}{% else %}{{ _("The best of your official gradings counts: the \
submission that arrived at %(time)s (UTC), with %(best)s of the %(max)s points of the \
tests. This one earned %(score)s.", time=c.best_arrived, best=c.best_score, max=c.max_score,
score=c.score) }}{% endif %}</p>
"""

LOCALES = Path(__file__).resolve().parent.parent / "locales"
DOMAIN = "feedback"


def catalogue_file(language: str) -> Path:
    """The gettext catalogue of the feedback page's words in ``language``."""
    return LOCALES / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(language: str) -> gettext.NullTranslations:
    """The feedback page's translations into ``language``, compiled from its catalogue
    (English, or a language without a catalogue: the messages as written)."""
    path = catalogue_file(language)
    if language == ENGLISH or not path.exists():
        return gettext.NullTranslations()
    with path.open("rb") as handle:
        compiled = io.BytesIO()
        write_mo(compiled, read_po(handle, locale=language))
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


@cache
def _template(language: str, source: str = _SOURCE):
    environment = Environment(autoescape=select_autoescape(default=True),
                              extensions=["jinja2.ext.i18n"])
    environment.install_gettext_translations(translations(language), newstyle=True)
    return environment.from_string(source)


def render_allowance(allowance, language: str = ENGLISH) -> str:
    """Where a student stands against the limits on official gradings (an
    :class:`~autograder.commands.allowance.Allowance`): an HTML fragment, in ``language``;
    empty without limits."""
    return _template(language, _ALLOWANCE_SOURCE).render(a=allowance)


def render_not_graded(assignment: str, student: str, allowance,
                      language: str = ENGLISH, best: bool = False) -> str:
    """The page a student gets for a submission the limits did not let be graded (``best``:
    the assignment counts the best official grading, not the last)."""
    next_at = allowance.next_at.strftime("%Y-%m-%d %H:%M") if allowance.next_at else ""
    return _template(language, _NOTICE_SOURCE).render(
        assignment=assignment, student=student, lang=html_language(language),
        policy=Markup(csp.meta(csp.PAGE)), a=allowance, next_at=next_at, best=best,
        allowance=Markup(render_allowance(allowance, language)))


def render_counting(counting, language: str = ENGLISH) -> str:
    """Which official grading counts, under ``counts = "best"`` (a
    :class:`~autograder.commands.attempts.Counting`): an HTML fragment, in ``language``."""
    return _template(language, _COUNTING_SOURCE).render(c=counting)


def html_language(language: str) -> str:
    """The BCP 47 tag of a language for ``<html lang>``: ``zh_CN`` -> ``zh-CN``."""
    return language.replace("_", "-")


def render_summary(outcome: Outcome, notebooks: list[str], hints: list[str] = (),
                   late: Lateness | None = None) -> str:
    """The summary page of one graded submission (``hints``: what to check first; ``late``:
    what the late policy made of it), in the language of the notebook handed in."""
    language = getattr(outcome, "language", ENGLISH) or ENGLISH
    pending = sum(c.max_score for c in outcome.pending)
    words = translations(language)
    return _template(language).render(
        o=outcome, max_score=outcome.max_score, notebooks=notebooks, colours=STATUS_COLOURS,
        policy=Markup(csp.meta(csp.PAGE)),
        pending=pending, hints=list(hints), lang=html_language(language), late=late,
        statuses={status: words.gettext(status) for status in STATUSES})


def _hints(course: Course, outcome: Outcome, cache: dict) -> list[str]:
    """The hints of the catalogued mistakes that best explain a failing submission."""
    if all(c.score >= c.max_score for c in outcome.cells if c.graded_by != BY_HAND):
        return []
    if outcome.assignment not in cache:
        cache[outcome.assignment] = catalogue_mistakes(course, outcome.assignment)
    return [m.hint for m in diagnose(outcome, cache[outcome.assignment]).mistakes]


# nbgrader's record of a submission from its exchange, which its release_feedback reads.
EXCHANGE_RECORDS = ("timestamp.txt", "submission_secret.txt")
# The hub's grading service's record of the hand grades in the feedback it released.
RELEASED_FILE = ".released-hand-grades"


def _keep_only(target: Path, pages: set[str], released: Path) -> None:
    """Remove from the feedback folder ``target`` every file that is neither one of
    ``pages``, nor a file the assignment's release (``released``) holds, nor nbgrader's
    record of the submission (:data:`EXCHANGE_RECORDS`): what nbgrader copied there of the
    student's own files (an HTML or SVG file could run a script if opened)."""
    for path in sorted(target.rglob("*"), reverse=True):
        relative = path.relative_to(target)
        if path.is_dir() and not path.is_symlink():
            if not any(path.iterdir()):
                path.rmdir()
        elif str(relative) not in pages and str(relative) not in (*EXCHANGE_RECORDS,
                                                                  RELEASED_FILE) and (
                path.suffix == ".ipynb" or not (released / relative).is_file()):
            path.unlink()


def _annotate(course: Course, api, assignment: str, students: list[str], every: bool) -> None:
    """nbgrader's annotated notebooks of ``assignment`` for ``students``: for every student,
    in one run of its ``generate_feedback`` (``every``: it finds their ids from the folders,
    where asking for one student would strip whitespace around the id), or student by
    student (a few new submissions, on a hub). Each student's old annotated notebooks go
    first, so what exists afterwards was rendered now."""
    for student in students:
        for notebook in course.notebook_names(assignment):
            (course.feedback / student / assignment / f"{notebook}.html").unlink(missing_ok=True)
    if every or any(student != student.strip() for student in students):
        api.generate_feedback(assignment, force=True)
    else:
        for student in students:
            api.generate_feedback(assignment, student, force=True)


def feedback(course: Course, assignments: list[str] | None = None,
             students: list[str] | None = None) -> list[Path]:
    """Write feedback for every graded submission of ``assignments`` (of ``students`` only,
    if given); return the pages."""
    wanted = set(assignments or course.assignments())
    reports = [r for r in sorted(course.autograded.glob(f"*/*/{OUTCOME_FILE}"))
               if r.parent.name in wanted
               and (students is None or r.parent.parent.name in students)]
    api = settings.api(course)
    pages, mistakes = [], {}
    policy, roster = deadlines.load(course), Roster.of(course)
    for assignment in sorted({report.parent.name for report in reports}):
        mathjax.install(course.feedback / "_static")
        _annotate(course, api, assignment,
                  [r.parent.parent.name for r in reports if r.parent.name == assignment],
                  every=students is None)
    for report in reports:
        student, assignment = report.parent.parent.name, report.parent.name
        with Gradebook(course.db_url) as gb:
            outcome = with_hand_grades(gb, load_outcome(course, student, assignment))
        target = course.feedback / student / assignment
        notebooks = set(course.notebook_names(assignment))
        handed_in = sorted(p.stem for p in report.parent.glob("*.ipynb") if p.stem in notebooks)
        graded = [nb for nb in handed_in if (target / f"{nb}.html").exists()]
        if graded != handed_in:
            outcome.reasons.append("the annotated notebook could not be rendered")
        target.mkdir(parents=True, exist_ok=True)
        page = target / "index.html"
        late = lateness_of(course, policy, roster, student, assignment) \
            if policy.configured else None
        page.write_text(render_summary(outcome, graded, _hints(course, outcome, mistakes), late))
        _keep_only(target, {page.name, *(f"{nb}.html" for nb in graded)},
                   course.release / assignment)
        pages.append(page)
    return pages


_SUMMARY_STYLE = "\n".join([
    "<style>",
    ".autograder-summary { font-family: system-ui, sans-serif; max-width: 60rem;"
    " margin: 1rem auto 2rem; padding: 0 1rem 1rem; border-bottom: 2px solid #ccc; }",
    ".autograder-summary table { border-collapse: collapse; width: 100%; }",
    ".autograder-summary td, .autograder-summary th { border: 1px solid #ccc; padding: .4rem; }",
    ".autograder-summary th { background: #f3f3f3; text-align: left; }",
    ".autograder-summary pre { white-space: pre-wrap; margin: 0; }",
    *(f".autograder-summary .{status.replace(' ', '-')} {{ color: {colour}; }}"
      for status, colour in STATUS_COLOURS.items()),
    "</style>"])


def with_summary(annotated: str, summary: str, note: str = "") -> str:
    """An annotated notebook page with the feedback summary on top, as one page: what a
    student fetches through nbgrader's exchange, where each notebook gets one file. Both
    pages are the course's own (:func:`render_summary`, the course's exporter): the
    summary's body is moved in whole, its style scoped to it; ``note``, a fragment the
    course wrote (:func:`render_allowance`), goes first."""
    body = note + summary[summary.index("<body>") + len("<body>"):summary.rindex("</body>")]
    head_end = annotated.index("</head>")
    annotated = annotated[:head_end] + _SUMMARY_STYLE + annotated[head_end:]
    opening = annotated.index(">", annotated.index("<body")) + 1
    return (annotated[:opening] + '<section class="autograder-summary">' + body
            + "</section>" + annotated[opening:])


@dataclass
class FeedbackZip:
    """A zip of feedback files for an LMS to take back."""

    path: Path
    students: list[str]          # whose feedback it holds
    not_from_the_lms: list[str]  # graded, but not collected from that LMS: not in the zip


def feedback_zip(course: Course, assignment: str, lms: str, output: Path) -> FeedbackZip:
    """The zip an LMS takes feedback files back from: each student's feedback page and
    annotated notebooks (written by :func:`feedback`), named as that LMS's download named
    the student's submission, so that it finds whose they are — Canvas's *Re-upload
    submissions* by the user and attachment ids, Moodle's *Upload multiple feedback files
    in a zip* by the participant id. A student's summary links to their annotated
    notebooks under their names in the zip; nothing else is in it."""
    member = {CANVAS: canvas_member, MOODLE: moodle_member}[lms]
    roster = Roster.of(course)
    members: dict[str, bytes] = {}
    students, elsewhere = [], []
    for folder in sorted(course.feedback.glob(f"*/{assignment}")):
        student = folder.parent.name
        page = folder / "index.html"
        record = roster.submission(student, assignment)
        if not page.is_file():
            continue
        if record is None or record.get("lms") != lms:
            elsewhere.append(student)
            continue
        summary = page.read_text(encoding="utf-8")
        for notebook_page in sorted(folder.glob("*.html")):
            if notebook_page.name == page.name:
                continue
            name = member(record, f"{assignment}-{notebook_page.stem}-annotated.html")
            members[name] = notebook_page.read_bytes()
            summary = summary.replace(f'href="./{quote(notebook_page.name)}"',
                                      f'href="./{quote(name)}"')
        members[member(record, f"{assignment}-feedback.html")] = summary.encode("utf-8")
        students.append(student)
    write_zip(Path(output), members)
    return FeedbackZip(Path(output), students, elsewhere)
