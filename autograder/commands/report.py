"""`report`: one HTML page about a graded batch, for the instructor.

``python -m autograder report ASSIGNMENT`` reads every recorded outcome of the assignment
and writes ``reports/<assignment>.html``, a single self-contained page: the score
distribution, the pass rate of every test, the time each submission took, and a
*diagnosis* — the catalogued mistakes that explain the failing submissions ("12
students: mask applied after the softmax"), with the students who made each — and, once
``similarity`` has compared the class (:mod:`.similarity`), the pairs and clusters of
submissions more alike than independent work, their shared fragments side by side, starter
code greyed out. That section is for instructors only (no student sees this page) and says
that similarity is evidence to weigh, not a verdict. Everything it shows is escaped, and
its Content-Security-Policy runs no script and loads nothing
(:data:`autograder.display.csp.PAGE`): a student id or a reason cannot act in it.
"""

from __future__ import annotations

import base64
import io
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment, select_autoescape
from markupsafe import Markup
from nbgrader.api import Gradebook

from ..course import Course, Outcome
from ..course.outcome import BY_HAND, OUTCOME_FILE, STATUS_COLOURS, STATUSES, load_outcome
from ..display import csp
from ..lms import deadlines
from ..lms.deadlines import Lateness
from ..lms.roster import Roster
from ..proving.diagnosis import Diagnosis, catalogue_mistakes, diagnose
from ..submission.gradebook import with_hand_grades
from .lateness import lateness_of
from .similarity import load_record


@dataclass
class Batch:
    """The graded submissions of one assignment, with their diagnoses."""

    assignment: str
    outcomes: list[Outcome]
    diagnoses: dict[str, Diagnosis]        # student -> diagnosis (failing submissions)
    late: dict[str, Lateness] = field(default_factory=dict)   # student -> the late policy's
    lms_names: dict[str, str] = field(default_factory=dict)   # student -> who the LMS says
    similarity: dict | None = None     # what `similarity` recorded, if it ran

    @property
    def max_score(self) -> float:
        return max((o.max_score for o in self.outcomes), default=0.0)

    def outcome(self, student: str) -> Outcome:
        return next(o for o in self.outcomes if o.student == student)

    def pending(self) -> tuple[int, int]:
        """(cells, submissions) awaiting a grade by hand."""
        waiting = [len(o.pending) for o in self.outcomes]
        return sum(waiting), sum(1 for n in waiting if n)

    def tests(self) -> list[str]:
        order: dict[str, None] = {}
        for outcome in self.outcomes:
            for cell in outcome.cells:
                order.setdefault(cell.grade_id, None)
        return list(order)

    def status_counts(self) -> dict[str, Counter]:
        counts: dict[str, Counter] = defaultdict(Counter)
        for outcome in self.outcomes:
            for cell in outcome.cells:
                counts[cell.grade_id][cell.status] += 1
        return counts

    def mistake_groups(self) -> list[tuple[str, str, list[str]]]:
        """(mistake name, description, students) for every diagnosed mistake, most common
        first; a student may appear under several mistakes."""
        groups: dict[str, tuple[str, list[str]]] = {}
        for student, diagnosis in sorted(self.diagnoses.items()):
            for mistake in diagnosis.mistakes:
                groups.setdefault(mistake.name, (mistake.description, []))[1].append(student)
        return sorted(((name, text, students) for name, (text, students) in groups.items()),
                      key=lambda group: (-len(group[2]), group[0]))


def load_batch(course: Course, assignment: str) -> Batch:
    """Every recorded outcome of ``assignment``, each failing one diagnosed."""
    outcomes = []
    for report in sorted(course.autograded.glob(f"*/{assignment}/{OUTCOME_FILE}")):
        outcome = load_outcome(course, report.parent.parent.name, assignment)
        if outcome is not None:
            outcomes.append(outcome)
    if outcomes:
        with Gradebook(course.db_url) as gb:
            outcomes = [with_hand_grades(gb, outcome) for outcome in outcomes]
    mistakes = catalogue_mistakes(course, assignment) if outcomes else []
    diagnoses = {}
    for outcome in outcomes:
        if any(c.score < c.max_score for c in outcome.cells if c.graded_by != BY_HAND):
            diagnoses[outcome.student] = diagnose(outcome, mistakes)
    policy, roster = deadlines.load(course), Roster.of(course)
    late = {o.student: lateness_of(course, policy, roster, o.student, assignment)
            for o in outcomes} if policy.configured else {}
    return Batch(assignment, outcomes, diagnoses, late, lms_names(roster, assignment),
                 load_record(course, assignment))


def lms_names(roster: Roster, assignment: str) -> dict[str, str]:
    """{student: "<name as the LMS wrote it> (<LMS> <user id>)"} of the submissions of
    ``assignment`` collected from an LMS."""
    names = {}
    for student, by_assignment in roster.submissions.items():
        record = by_assignment.get(assignment)
        if record:
            names[student] = f"{record['name']} ({record['lms'].title()} {record['user']})"
    return names


# --------------------------------------------------------------------------- figures


def _png(figure) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def figures(batch: Batch) -> dict[str, str]:
    """The report's plots as base64 PNGs: scores, pass rate per test, time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scores = [o.score for o in batch.outcomes]
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.hist(scores, bins=[x - 0.5 for x in range(int(batch.max_score) + 2)], color="#3b6ea5",
            edgecolor="white")
    ax.set(title=f"Scores ({len(scores)} submissions)", xlabel="points",
           ylabel="submissions", xlim=(-0.5, batch.max_score + 0.5))
    plots = {"scores": _png(fig)}

    tests, counts = batch.tests(), batch.status_counts()
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(tests) + 1.2))
    left = [0.0] * len(tests)
    total = max(len(batch.outcomes), 1)
    for status in STATUSES:
        shares = [counts[t][status] / total for t in tests]
        ax.barh(tests, shares, left=left, color=STATUS_COLOURS[status], label=status)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.invert_yaxis()
    ax.set(title="Result of every test", xlabel="share of submissions", xlim=(0, 1))
    ax.legend(loc="lower right", fontsize=8, ncols=4)
    plots["tests"] = _png(fig)

    fig, ax = plt.subplots(figsize=(7, 3))
    ax.hist([o.seconds for o in batch.outcomes], bins=20, color="#888888", edgecolor="white")
    ax.set(title="Time to grade each submission", xlabel="seconds", ylabel="submissions")
    plots["time"] = _png(fig)
    return plots


# --------------------------------------------------------------------------- page

_PAGE = Environment(autoescape=select_autoescape(default=True)).from_string("""\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
{{ policy }}
<title>{{ b.assignment }}: grading report</title>
<style>
 body { font-family: system-ui, sans-serif; max-width: 64rem; margin: 2rem auto; padding: 0 1rem; }
 table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem; }
 td, th { border: 1px solid #ccc; padding: .3rem .5rem; vertical-align: top; }
 th { background: #f3f3f3; text-align: left; } td.n { text-align: right; }
 img { max-width: 100%; } .muted { color: #666; }
 .side { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem; margin: .3rem 0 1rem; }
 .side pre { margin: 0; padding: .3rem; background: #fafafa; border: 1px solid #ddd;
   overflow-x: auto; font-size: .8rem; white-space: pre; }
 .side pre.prose { white-space: pre-wrap; font-family: inherit; }
 .side .line { display: block; } .side .shared { background: #fff1b8; }
 .side .starter { color: #999; } .side .ln { color: #999; user-select: none; }
 .verdict { border-left: 4px solid #c77; padding: .3rem .7rem; background: #fdf3f3; }
</style></head><body>
<h1>{{ b.assignment }}: grading report</h1>
<p>{{ b.outcomes|length }} submissions graded; mean {{ "%.1f"|format(mean) }} and median
{{ "%g"|format(median) }} of {{ "%g"|format(b.max_score) }} points; {{ full }} with full
marks; {{ b.diagnoses|length }} lost points.</p>
{% set waiting = b.pending() %}<p class="pending">{% if waiting[0] %}Hand grades pending:
<strong>{{ waiting[0] }}</strong> answer(s) in {{ waiting[1] }} submission(s) await a grade
by hand (formgrader, or <code>python -m autograder manual {{ b.assignment }} --export</code>);
scores here are the scores so far.{% else %}Hand grades pending: none.{% endif %}</p>

<h2>Diagnosis: the mistakes behind the lost points</h2>
{% if groups %}<table><tr><th>students</th><th>mistake (from the catalogue)</th><th>who</th></tr>
{% for name, text, students in groups %}<tr><td class="n">{{ students|length }}</td>
<td>{{ text }} <span class="muted">({{ name }})</span></td><td>{{ students|join(", ") }}</td></tr>
{% endfor %}</table>{% else %}<p>No failing submission matches a catalogued mistake.</p>{% endif %}
{% if unexplained %}<p>Not explained by the catalogue (worth a look, and maybe a new mutant):
{{ unexplained|join(", ") }}.</p>{% endif %}

{% if b.late %}<h2>Late work</h2>
{% set late = b.late.items()|selectattr("1.days")|list %}
{% set excused = b.late.items()|selectattr("1.excused")|list %}
<p>Under the course's late policy (<code>deadlines.toml</code>): {{ late|length }} late
submission(s), {{ excused|length }} excused. Raw scores stay in the gradebook; exports,
feedback and this page show both.</p>
{% if late or excused %}<table><tr><th>student</th><th>days late</th><th>why</th>
<th>credit</th><th>raw score</th><th>after the policy</th></tr>
{% for student, l in late + excused %}{% set o = b.outcome(student) %}
<tr><td>{{ student }}</td><td class="n">{{ l.days }}</td><td>{{ l.basis }}</td>
<td class="n">{{ "excused" if l.excused else "{:.0%}".format(l.credit) }}</td>
<td class="n">{{ "%g"|format(o.score) }}</td>
<td class="n">{{ "" if l.excused else "%g"|format(l.final(o.score)|round(4)) }}</td></tr>
{% endfor %}</table>{% endif %}{% endif %}

<h2>Graded twice</h2>
{% set twice = b.outcomes|selectattr("attempts")|list %}
{% if twice %}<p>Something abnormal happened while these submissions were graded (a kernel
that died or failed to start, a cell stopped by the wall clock, a course cell that failed):
each was graded again before anything was recorded, and the attempt with more points kept.
Where the two attempts disagree, look at what happened.</p>
<table><tr><th>student</th><th>attempt</th><th>score</th><th>kept</th><th>tests that differ</th>
<th>what happened</th></tr>
{% for o in twice %}{% for a in o.attempts %}{% set other = o.attempts[1 - loop.index0] %}
<tr><td>{{ o.student }}</td><td class="n">{{ loop.index }}</td>
<td class="n">{{ "%g"|format(a.score) }}</td><td>{{ "yes" if a.kept else "" }}</td>
<td>{% for test, status in a.verdicts.items() if other.verdicts.get(test) != status -%}
{{ test }}: {{ status }}{{ "; " if not loop.last }}{% endfor %}</td>
<td>{{ a.abnormal|join("; ") or "nothing" }}</td></tr>
{% endfor %}{% endfor %}</table>
{% else %}<p>Every submission was graded once: nothing abnormal happened.</p>{% endif %}

<h2>Similar submissions</h2>
{% set s = b.similarity %}
<p class="verdict">For instructors only: students never see this page. Similarity is
<strong>evidence for a person to weigh, not a verdict</strong>: correct solutions resemble
each other, students may have worked together as allowed, and a copy does not say who
copied whom. Read the shared fragments before drawing any conclusion.</p>
{% if not s %}<p>Not computed: <code>python -m autograder similarity {{ b.assignment }}</code>
compares every pair of submissions, then this page shows the pairs that stand out.</p>
{% else %}<p>Compared on {{ s.computed }}: {{ s.submissions }} submission(s){% if
s.past_submissions %} and {{ s.past_submissions }} of past terms{% endif %}, code and
written answers, the released starter code removed and fragments common in the class
discounted. A pair is flagged above {{ "%.3g"|format(s.threshold.bar) }}, a bar set from the
class's own scores (median {{ "%.3g"|format(s.threshold.median) }} + {{ s.threshold.k }} ×
1.4826 × MAD {{ "%.3g"|format(s.threshold.mad) }}, at least {{ s.threshold.floor }}).
{{ s.flagged }} pair(s) flagged{% if s.flagged > s.views|length %}; the {{ s.views|length }}
highest are shown here, every pair is in <code>reports/{{ b.assignment }}.similarity.json</code>
{%- endif %}.</p>
{% if s.clusters %}<p>Clusters (three or more submissions joined by flagged pairs: one
source shared?):</p><ul>{% for cluster in s.clusters %}<li>{{ cluster|join(", ") }}</li>
{% endfor %}</ul>{% endif %}
{% for v in s.views %}<h3>{{ v.a }} and {{ v.b }}: {{ "%.2f"|format(v.score) }}
<span class="muted">(code {{ "%.2f"|format(v.code) }}, written answers
{{ "%.2f"|format(v.prose) }})</span></h3>
{% for f in v.fragments %}<p class="muted">cell {{ f.cell }}{% if f.b_cell != f.cell %}
and {{ f.b_cell }}{% endif %}: shared lines highlighted, starter code greyed</p>
<div class="side">{% for side in (f.a, f.b) %}<pre{% if f.prose %} class="prose"{% endif
%}>{% for line in side %}<span class="line {{ line.kind }}"><span class="ln">{{
"%4d"|format(line.n) }}  </span>{{ line.text }}</span>{%
endfor %}</pre>{% endfor %}</div>
{% endfor %}{% if v.more %}<p class="muted">and {{ v.more }} more shared fragment(s): see
the JSON.</p>{% endif %}{% endfor %}
{% if s.notes %}<p>Compared as far as possible:</p><ul>{% for label, notes in
s.notes.items() %}<li>{{ label }}: {{ notes|join("; ") }}</li>{% endfor %}</ul>{% endif %}
{% endif %}

{% for key, title, alt in sections %}<h2>{{ title }}</h2>
<img alt="{{ alt }}" src="data:image/png;base64,{{ plots[key] }}">
{% endfor %}

<h2>Submissions</h2>
<table><tr><th>student</th><th>in the LMS</th><th>score</th><th>seconds</th>
<th>most likely mistake</th><th>notes</th></tr>
{% for o in b.outcomes %}{% set d = b.diagnoses.get(o.student) %}
<tr><td>{{ o.student }}</td><td>{{ b.lms_names.get(o.student, "") }}</td>
<td class="n">{{ "%g"|format(o.score) }}{% set l = b.late.get(o.student) %}{% if l and \
l.excused %} (excused){% elif l and l.days %} ({{ "%g"|format(l.final(o.score)|round(4)) }}
after {{ l.days }} day(s) late){% endif %}</td>
<td class="n">{{ "%.1f"|format(o.seconds) }}</td>
<td>{% if d and d.primary %}{{ d.mistakes|map(attribute="description")|join("; ") }}{% endif %}</td>
<td>{{ o.reasons|join("; ") }}</td></tr>
{% endfor %}</table>
</body></html>
""")


def render(batch: Batch) -> str:
    scores = [o.score for o in batch.outcomes] or [0.0]
    unexplained = sorted(student for student, d in batch.diagnoses.items() if not d.mistakes)
    return _PAGE.render(b=batch, mean=statistics.fmean(scores), median=statistics.median(scores),
                        full=sum(o.score == batch.max_score for o in batch.outcomes),
                        groups=batch.mistake_groups(), unexplained=unexplained,
                        plots=figures(batch), sections=_SECTIONS,
                        policy=Markup(csp.meta(csp.PAGE)))


_SECTIONS = [
    ("scores", "Scores", "Histogram of the submissions' scores"),
    ("tests", "Tests", "For every test, the share of submissions that passed, failed, timed "
                       "out or could not run"),
    ("time", "Time", "Histogram of the seconds each submission took to grade"),
]


def write_report(course: Course, assignment: str, path: Path | None = None) -> Path:
    """Write the report of ``assignment`` (default: ``reports/<assignment>.html``)."""
    target = path or course.root / "reports" / f"{assignment}.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(load_batch(course, assignment)))
    return target
