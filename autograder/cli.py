"""The autograder's command line: ``python -m autograder COMMAND``.

Run it from the repository root, which is the nbgrader course directory. See
``../shared/spec/assignments.md`` (the contract) and the README's instructor section.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .batch import forkserver
from .course import Course
from .course.defaults import DEFAULT_TIMEOUT
from .course.runtime import put_interpreter_on_path

# Each command's module is imported when the command runs, below: nbgrader and torch take
# seconds to import, and `grade` starts its fork server first, to import them meanwhile.


def _exchange(args: argparse.Namespace):
    from .course.exchange import Exchange

    return Exchange.named(args.exchange, args.course_id)


def _release(course: Course, args: argparse.Namespace) -> int:
    from .commands.release import publish, release
    from .commands.translation import MissingTranslation

    try:
        names = release(course, args.assignments or None)
    except MissingTranslation as error:
        print(f"release: {error}", file=sys.stderr)
        return 2
    for name in names:
        print(f"released {name} -> {course.release / name} (checked: no solution, no hidden test)")
    exchange = _exchange(args)
    if exchange is not None:
        for name in names:
            publish(course, exchange, name)
            print(f"published {name} to {exchange.outbound / name}: students can fetch it")
    return 0


def _serve(course: Course, args: argparse.Namespace) -> int:
    from .commands.serve import serve

    exchange = _exchange(args)
    if exchange is None:
        print("serve: name nbgrader's exchange (--exchange ROOT, or $AUTOGRADER_EXCHANGE)",
              file=sys.stderr)
        return 2
    assignments = args.assignments or course.assignments()
    print(f"serving {', '.join(assignments)} from {exchange.inbound}", flush=True)
    serve(course, exchange, assignments, jobs=args.jobs, timeout=args.timeout,
          interval=args.interval, once=args.once,
          report=lambda line: print(line, flush=True), scheduler=args.scheduler)
    return 0


def _collect(course: Course, args: argparse.Namespace) -> int:
    from .commands.collect import CollectError, collect

    try:
        result = collect(course, args.path, args.assignment, args.moodle_worksheet)
    except CollectError as error:
        print(f"collect: {error}", file=sys.stderr)
        return 2
    for item in result.collected:
        print(f"{item.student:30s} {item.assignment:25s} <- {item.source}")
    for note in result.notes:
        print(f"note: {note}")
    for path in result.skipped:
        print(f"not a submission, skipped: {path}", file=sys.stderr)
    print(f"collected {len(result.collected)} submission(s) into {course.submitted}")
    return 0


def _grade(course: Course, args: argparse.Namespace) -> int:
    from .commands.grade import grade

    outcomes = grade(course, args.assignments or None, jobs=args.jobs, timeout=args.timeout,
                     force=args.force, scheduler=args.scheduler)
    for o in outcomes:
        note = f"  ({'; '.join(o.reasons)})" if o.reasons else ""
        print(f"{o.student:30s} {o.assignment:25s} {o.score:6g} / {o.max_score:g}  "
              f"[{o.seconds:.1f} s]{note}")
    print(f"graded {len(outcomes)} submission(s); any other was graded already, as it is "
          "(--force grades again)")
    return 0


def _one_assignment(course: Course, names: list[str] | None, option: str) -> str | None:
    """The one assignment an LMS file is about: named, or the course's only one."""
    names = names or course.assignments()
    if len(names) != 1:
        print(f"{option} is about one assignment: name it ({', '.join(names)})",
              file=sys.stderr)
        return None
    return names[0]


def _feedback(course: Course, args: argparse.Namespace) -> int:
    from .commands.feedback import feedback, feedback_zip
    from .lms.deadlines import DeadlinesError

    try:
        pages = feedback(course, args.assignments or None)
    except DeadlinesError as error:
        print(f"feedback: {error}", file=sys.stderr)
        return 2
    print(f"wrote feedback for {len(pages)} submission(s) into {course.feedback}")
    for lms, output in (("canvas", args.canvas_zip), ("moodle", args.moodle_zip)):
        if output is None:
            continue
        assignment = _one_assignment(course, args.assignments, f"--{lms}-zip")
        if assignment is None:
            return 2
        result = feedback_zip(course, assignment, lms, Path(output))
        print(f"wrote the feedback of {len(result.students)} student(s) for {lms} to {output}")
        if result.not_from_the_lms:
            print(f"not collected from {lms}, so not in the zip: "
                  + ", ".join(result.not_from_the_lms))
    return 0


def _export(course: Course, args: argparse.Namespace) -> int:
    from .commands import export as exports
    from .lms.deadlines import DeadlinesError
    from .lms.table import LmsFileError

    if args.lti_sync:
        return _lti_sync(course, args.assignment)
    lms_files = [args.canvas, args.moodle_worksheet, args.moodle_gradebook]
    try:
        if not any(lms_files) or args.csv or args.json:
            scores = exports.export(course, args.csv, args.json)
            written = [p for p in (args.csv, args.json) if p] or ["grades.csv", "grades.json"]
            print(f"exported {len(scores['students'])} student(s) to "
                  f"{', '.join(map(str, written))}")
        results = []
        for option, source in (("--canvas", args.canvas),
                               ("--moodle-worksheet", args.moodle_worksheet)):
            if source is None:
                continue
            assignment = _one_assignment(course, args.assignment, option)
            if assignment is None:
                return 2
            kind = option.removeprefix("--")
            output = Path(args.output) if args.output else course.root / f"{kind}-{assignment}.csv"
            if option == "--canvas":
                results.append(exports.export_canvas(course, Path(source), assignment, output,
                                                     args.canvas_column))
            else:
                results.append(exports.export_moodle_worksheet(course, Path(source), assignment,
                                                               output))
        if args.moodle_gradebook:
            results.append(exports.export_moodle_gradebook(
                course, args.assignment or course.assignments(), Path(args.moodle_gradebook)))
    except (LmsFileError, DeadlinesError) as error:
        print(f"export: {error}; nothing was written", file=sys.stderr)
        return 2
    for result in results:
        print(result.summary())
    return 0


def _lti_settings(course: Course, command: str):
    from .lms.lti.settings import SETTINGS_FILE, LtiSettingsError, load

    try:
        settings = load(course)
    except LtiSettingsError as error:
        print(f"{command}: {error}", file=sys.stderr)
        return None
    if settings is None:
        print(f"{command}: the course has no {SETTINGS_FILE} (its registration with the "
              f"LMS: see the README's LTI section)", file=sys.stderr)
    return settings


def _lti_sync(course: Course, assignments: list[str] | None) -> int:
    """Send the LMS every grade its gradebook lacks (AGS); 1 if some could not be sent."""
    from .commands.lti import platform_for, sync

    settings = _lti_settings(course, "export --lti-sync")
    if settings is None:
        return 2
    report = sync(course, platform_for(settings), assignments, against_lms=True)
    for line in report.lines():
        print(line)
    print(f"LTI sync: {len(report.sent)} sent, {len(report.kept)} kept to send again, "
          f"{len(report.unknown)} not in the LMS's class list")
    return 1 if report.kept else 0


def _lti(course: Course, args: argparse.Namespace) -> int:
    """``lti keys``: the tool's public key set (JWKS), the private key made on first use."""
    import json

    from .lms.lti.keys import ensure_private_key, public_jwks

    settings = _lti_settings(course, "lti keys")
    if settings is None:
        return 2
    print(json.dumps(public_jwks(ensure_private_key(settings.private_key)), indent=1))
    return 0


def _report(course: Course, args: argparse.Namespace) -> int:
    from .commands.report import write_report

    for assignment in args.assignments or course.assignments():
        path = write_report(course, assignment,
                            Path(args.output) if args.output and len(args.assignments) == 1
                            else None)
        print(f"wrote the report of {assignment} to {path}")
    return 0


def _similarity(course: Course, args: argparse.Namespace) -> int:
    from .commands.similarity import SimilarityError, record, similarity, write_json_atomically

    try:
        result = similarity(course, args.assignment, args.past or [])
    except SimilarityError as error:
        print(f"similarity: {error}; nothing was written", file=sys.stderr)
        return 2
    data = result.as_json()
    if args.json:
        try:
            write_json_atomically(data, Path(args.json))
        except OSError as error:
            print(f"similarity: cannot write --json {args.json}: {error.strerror or error}; "
                  "nothing was written", file=sys.stderr)
            return 2
    recorded = record(course, result)
    flagged = [pair for pair in result.comparison.pairs if pair.flagged]
    current = sum(h.current for h in result.handed)
    print(f"compared {current} submission(s) of {args.assignment} with each other and with "
          f"{len(result.handed) - current} past one(s): {len(data['pairs'])} pair(s); "
          f"{len(flagged)} flagged (score above {data['threshold']['bar']:g}, set from the "
          f"class's scores: median {data['threshold']['median']:g}, MAD "
          f"{data['threshold']['mad']:g})")
    for pair in flagged:
        print(f"  {pair.score:.2f}  {pair.a}  {pair.b}  (code {pair.code:.2f}, "
              f"prose {pair.prose:.2f})")
    for cluster in data["clusters"]:
        print(f"  one source shared by {len(cluster)}: {', '.join(cluster)}")
    for label, notes in data["notes"].items():
        print(f"note: {label}: {'; '.join(notes)}")
    print("similarity is evidence for a person to weigh, not a verdict")
    if args.json:
        print(f"wrote {args.json}")
    print(f"recorded for the class report (python -m autograder report {args.assignment}): "
          f"{recorded}")
    return 0


def _manual(course: Course, args: argparse.Namespace) -> int:
    from .commands.manual import ManualGradesError, export_manual, import_manual

    if args.export_path:
        rows = export_manual(course, args.assignment, Path(args.export_path))
        print(f"wrote {rows} answer(s) graded by hand to {args.export_path}")
        return 0
    try:
        count = import_manual(course, args.assignment, Path(args.import_path))
    except ManualGradesError as error:
        print(f"manual: {error}; nothing was changed", file=sys.stderr)
        return 2
    print(f"imported {count} hand grade(s) into the gradebook")
    return 0


def _validate(course: Course, args: argparse.Namespace) -> int:
    from .commands.validate import validate

    ok = True
    for assignment in args.assignments or course.assignments():
        result = validate(course, assignment, jobs=args.jobs, timeout=args.timeout)
        print(result.summary())
        ok &= result.ok
    return 0 if ok else 1


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--root", default=".", help="the course directory (default: .)")
    top.add_argument("--db", default=os.environ.get("AUTOGRADER_DB"),
                     help="the gradebook's database URL, e.g. postgresql://host/course "
                          "(default: $AUTOGRADER_DB, else gradebook.db in the course)")
    top.add_argument("--exchange", help="nbgrader's exchange on a JupyterHub: release publishes "
                     "there, serve takes submissions from it (default: $AUTOGRADER_EXCHANGE)")
    top.add_argument("--course-id", help="the course's id in the exchange (default: "
                     "$AUTOGRADER_COURSE_ID, else attention-nlp)")
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("release", help="solutions/ -> exercises/, then check the release")
    p.add_argument("assignments", nargs="*")
    p.set_defaults(run=_release)

    p = sub.add_parser("collect", help="a folder or .zip of submissions -> submitted/")
    p.add_argument("path")
    p.add_argument("--assignment")
    p.add_argument("--moodle-worksheet", metavar="CSV",
                   help="Moodle's grading worksheet of the download: e-mail addresses and "
                        "submission times")
    p.set_defaults(run=_collect)

    for name, run, text in [("grade", _grade, "grade every submitted/<student>/<assignment>/"),
                            ("validate", _validate, "prove the tests against the catalogue")]:
        p = sub.add_parser(name, help=text)
        p.add_argument("assignments", nargs="*")
        p.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
        p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                       help="seconds each notebook may run (one cell: a quarter of it)")
        p.set_defaults(run=run)
        if name == "grade":
            p.add_argument("--force", action="store_true",
                           help="grade again submissions already graded as they are")
            p.add_argument("--scheduler", help="address of an existing Dask scheduler "
                           "(default: a local cluster of --jobs workers)")

    p = sub.add_parser("serve", help="on a JupyterHub: grade submissions as they arrive in "
                       "nbgrader's exchange and release each student's feedback")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                   help="seconds each notebook may run (one cell: a quarter of it)")
    p.add_argument("--interval", type=float, default=5.0, help="seconds between rounds")
    p.add_argument("--once", action="store_true", help="one round, then stop")
    p.add_argument("--scheduler", help="address of an existing Dask scheduler whose workers "
                   "see the course directory at the same path (default: a local cluster of "
                   "--jobs workers)")
    p.set_defaults(run=_serve)

    p = sub.add_parser("feedback", help="HTML feedback per student, hidden tests hidden")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--canvas-zip", metavar="ZIP",
                   help="also write the zip Canvas's Re-upload submissions takes")
    p.add_argument("--moodle-zip", metavar="ZIP",
                   help="also write the zip Moodle's Upload multiple feedback files takes")
    p.set_defaults(run=_feedback)

    p = sub.add_parser("report", help="an HTML report per assignment: plots and diagnosis")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--output", help="where to write it (one assignment only)")
    p.set_defaults(run=_report)

    p = sub.add_parser("manual", help="answers graded by hand: --export a CSV, --import it back")
    p.add_argument("assignment")
    way = p.add_mutually_exclusive_group(required=True)
    way.add_argument("--export", dest="export_path", metavar="PATH",
                     help="write every answer graded by hand, one row per student and cell")
    way.add_argument("--import", dest="import_path", metavar="PATH",
                     help="read the scores and comments of such a file into the gradebook")
    p.set_defaults(run=_manual)

    p = sub.add_parser("similarity", help="pairs of submissions more alike than independent "
                       "work: code and written answers, starter code and what is common "
                       "discounted")
    p.add_argument("assignment")
    p.add_argument("--past", action="append", metavar="DIR",
                   help="earlier terms' submissions, laid out as submitted/ "
                        "(<student>/<assignment>/); repeat for several terms")
    p.add_argument("--json", metavar="FILE", help="write every pair's similarity there")
    p.set_defaults(run=_similarity)

    p = sub.add_parser("export", help="grades as CSV and JSON, or into an LMS's own files")
    p.add_argument("--csv")
    p.add_argument("--json")
    p.add_argument("--canvas", metavar="CSV",
                   help="fill the assignment's column of this gradebook Canvas exported")
    p.add_argument("--canvas-column", metavar="HEADER",
                   help="the Canvas column to fill (default: the one named as the assignment)")
    p.add_argument("--moodle-worksheet", metavar="CSV",
                   help="fill Grade and Feedback comments of this worksheet Moodle exported")
    p.add_argument("--moodle-gradebook", metavar="CSV",
                   help="write a file for Moodle's gradebook import (by e-mail address)")
    p.add_argument("--assignment", action="append",
                   help="the assignment (repeat for the Moodle gradebook; default: the "
                        "course's only one, or all of them for the Moodle gradebook)")
    p.add_argument("--output", "-o", metavar="CSV",
                   help="where the filled LMS file goes (default: <kind>-<assignment>.csv "
                        "in the course)")
    p.add_argument("--lti-sync", action="store_true",
                   help="send the LMS (LTI 1.3 AGS, lti.toml) every grade it lacks")
    p.set_defaults(run=_export)

    p = sub.add_parser("lti", help="LTI 1.3: `lti keys` prints the tool's public key set "
                       "(JWKS) for the LMS's registration, making the key on first use")
    p.add_argument("action", choices=["keys"])
    p.set_defaults(run=_lti)
    return top


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.command == "grade" and not args.scheduler:
        forkserver.start_server()     # it imports the grader while this process does
    put_interpreter_on_path()      # nbgrader runs alembic from PATH, even for a gradebook
    sys.exit(args.run(Course.at(args.root, args.db), args))
