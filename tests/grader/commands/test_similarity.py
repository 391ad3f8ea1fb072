"""`similarity`: copied submissions stand out of a class of independent ones, whatever the
copier changed, and nothing a student hands in can stop the run or act in the report.

The class is :mod:`.similarity_corpus`'s (independent implementations in different styles,
their copies with renamed variables, reordered definitions, changed comments, new layout,
dead code, one function copied, written answers copied or paraphrased in English and
Chinese). No grading, no kernel: the whole module takes a few seconds.

Each test says what wrong implementation it catches; each was run against that sabotage
once (see the commit that added this file).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import cli
from autograder.commands.report import write_report
from autograder.commands.similarity import (
    PAST_PREFIX,
    SimilarityError,
    load_record,
    record,
    record_path,
    similarity,
    write_json_atomically,
)
from autograder.course import Course
from autograder.similarity import scoring
from autograder.similarity.code import code_runs
from autograder.similarity.fingerprints import Token, kgrams, winnow
from tests.conftest import REPO, make_course, submit, visible_text
from tests.grader.commands import similarity_corpus as corpus

ASSIGNMENT = corpus.ASSIGNMENT
pytestmark = pytest.mark.xdist_group("similarity")   # one worker builds the corpus once


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Course:
    """A released course without submissions (copied for each class below)."""
    return make_course(tmp_path_factory.mktemp("similarity") / "released")


def _empty_course(released: Course, root: Path) -> Course:
    """A course with ``released``'s sources and release, and no submission."""
    for folder in (released.source, released.release):
        shutil.copytree(folder, root / folder.name)
    return Course.at(root)


@pytest.fixture(scope="module")
def corpus_class(released, tmp_path_factory):
    """(course, independent students, copied pairs, result) of the whole corpus."""
    course = _empty_course(released, tmp_path_factory.mktemp("class") / "course")
    independent, copied = corpus.build(course)
    return course, independent, copied, similarity(course, ASSIGNMENT)


def test_every_copy_ranks_above_every_independent_pair_and_only_copies_are_flagged(
        corpus_class):
    """Every copied pair scores above every other pair; every copied pair is flagged and no
    other pair is. Fails without the renaming of bound names (the renamed copies fall),
    without jieba's segmentation (the Chinese copies fall) and with a bar at a fixed
    quantile of the class's scores (independent pairs flagged)."""
    course, independent, copied, result = corpus_class
    pairs = result.comparison.pairs
    copies = [p for p in pairs if frozenset((p.a, p.b)) in copied]
    others = [p for p in pairs if frozenset((p.a, p.b)) not in copied]
    assert len(copies) == len(copied) == 15
    lowest_copy = min(p.score for p in copies)
    highest_other = max(p.score for p in others)
    assert lowest_copy > highest_other, (lowest_copy, highest_other)
    assert all(p.flagged for p in copies), [(p.a, p.b, p.score) for p in copies
                                            if not p.flagged]
    assert not [p for p in others if p.flagged]
    assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    assert not result.as_json()["notes"]        # every corpus notebook parses


def test_each_kind_of_copy_is_caught_by_the_part_it_copied(corpus_class):
    """Code copies score high on code, written-answer copies on prose, in both languages.
    Fails if Chinese is not segmented (whole runs of characters as one word: the Chinese
    paraphrase shares no shingle) or if dead code is kept (the copy with dead code falls)."""
    _, independent, _, result = corpus_class
    by_pair = {frozenset((p.a, p.b)): p for p in result.comparison.pairs}

    def pair(a, b):
        return by_pair[frozenset((a, b))]

    for copy in ("cp-renamed", "cp-reordered", "cp-recommented", "cp-reformatted",
                 "cp-dead-code", "cp-everything"):
        source = next(p.b if p.a == copy else p.a for p in result.comparison.pairs
                      if copy in (p.a, p.b) and p.flagged and "prose" not in p.a + p.b)
        assert pair(copy, source).code > 0.9, copy
    for copy in ("prose-edited-en", "prose-paraphrased-en", "prose-edited-zh",
                 "prose-paraphrased-zh"):
        best = max((p for p in result.comparison.pairs if copy in (p.a, p.b)),
                   key=lambda p: p.prose)
        assert best.prose > 0.3 and best.code == 0 and best.flagged, (copy, best)
    # Two students who handed in the unanswered release share only the starter: nothing.
    assert all(pair(a, b).code == 0 for a in ("prose-edited-en", "prose-edited-zh")
               for b in ("prose-paraphrased-en", "prose-paraphrased-zh"))


def test_one_source_shared_by_three_is_a_cluster(corpus_class):
    """The source and its two copies form a cluster (and shared fragments name their
    lines). Fails without the renaming of bound names (the renamed copy is not flagged)."""
    _, _, _, result = corpus_class
    assert ["alone-cat-split_blocks_where", "cluster-dead-code", "cluster-renamed"] \
        in result.comparison.clusters
    pair = next(p for p in result.comparison.pairs
                if {p.a, p.b} == {"cluster-renamed", "alone-cat-split_blocks_where"})
    cells = {fragment["cell"] for fragment in pair.shared}
    assert {"masked_softmax", "attend", "written-scaling"} <= cells
    for fragment in pair.shared:
        assert 1 <= fragment["a_lines"][0] <= fragment["a_lines"][1]
        assert 1 <= fragment["b_lines"][0] <= fragment["b_lines"][1]


def test_a_class_without_copying_flags_nothing(released, tmp_path):
    """The independent students alone: nothing flagged, the bar at least the floor. Fails
    with a bar of a fixed quantile of the class (some pair is always above it) and without
    the class discount (independent pairs sharing the obvious ``torch.bmm`` lines rise)."""
    course = _empty_course(released, tmp_path / "course")
    corpus.independent_class(course)
    result = similarity(course, ASSIGNMENT)
    assert len(result.comparison.pairs) == 11 * 10 // 2
    assert not [p for p in result.comparison.pairs if p.flagged]
    assert result.comparison.threshold >= scoring.FLOOR
    assert max(p.score for p in result.comparison.pairs) < scoring.FLOOR / 2


def test_the_bar_follows_the_class():
    """The bar is the floor for a class whose pairs share nothing rare, and rises with a
    class whose independent pairs are alike (fails with a fixed bar)."""
    assert scoring.threshold([0.0] * 100 + [0.9])[0] == scoring.FLOOR
    alike = [0.3 + 0.01 * (i % 10) for i in range(200)]
    bar, median, mad = scoring.threshold(alike + [0.95])
    assert max(alike) < bar < 0.95 and median == pytest.approx(0.35) and mad > 0


def test_clusters_are_joined_through_any_chain_of_flagged_pairs():
    """a-b, b-c, c-d flagged: one cluster of four, though a and d share nothing; two
    separate pairs are no cluster. Fails with clusters grown only around one member."""
    def pair(a, b):
        return scoring.Pair(a, b, 1.0, 0.0, 1.0, True)

    assert scoring.clusters([pair("a", "b"), pair("c", "d"), pair("b", "c")]) == \
        [["a", "b", "c", "d"]]
    assert scoring.clusters([pair("a", "b"), pair("c", "d")]) == []


def test_order_of_definitions_changes_no_fingerprint():
    """The same definitions in another order within a cell give exactly the same
    fingerprints. Fails with one run of tokens per cell (k-grams across definitions)."""
    first = "def f(x):\n    y = x * 2\n    return y + 1\n"
    second = "def g(a, b):\n    return torch.softmax(a @ b.T, dim=-1) * f(a)\n"
    third = "class H:\n    def forward(self, x):\n        return g(x, x).sum()\n"

    def prints(code):
        runs, _ = code_runs({"cell": code}, ["f", "g", "H"])
        return {h for run in runs["cell"] for h, _, _ in kgrams(run, 6)}

    assert prints(first + second + third) == prints(second + first + third)


def test_starter_code_is_no_evidence(released, tmp_path):
    """Two students who handed in the release unanswered share only its starter code and
    text: their pair scores 0, even in a class too small for the discount. Fails if the
    starter's fingerprints are kept."""
    course = _empty_course(released, tmp_path / "course")
    submit(course, "ann", corpus._notebook(course, None, None))
    submit(course, "bob", corpus._notebook(course, None, None))
    submit(course, "cat", corpus._notebook(course, corpus.reference_code(course),
                                           corpus.ENGLISH[0]))
    result = similarity(course, ASSIGNMENT)
    pair = next(p for p in result.comparison.pairs if {p.a, p.b} == {"ann", "bob"})
    assert (pair.code, pair.prose, pair.flagged) == (0.0, 0.0, False)


def test_little_rare_work_in_common_is_little_evidence():
    """Two submissions whose work is all common in the class but one fragment they share
    score low, not 1 (shared over union would be 1/1). Fails without the prior mass in
    the denominator."""
    from autograder.similarity.fingerprints import Fingerprints, Place

    def prints(extra=()):
        one = Fingerprints()
        for h in [*range(10), *extra]:
            one.add(h, Place("cell", 1, 1))
        return one

    class_ = [scoring.Compared(f"s{i}", True, prints([99] if i < 2 else []), prints())
              for i in range(20)]
    pair = next(p for p in scoring.compare(class_).pairs if {p.a, p.b} == {"s0", "s1"})
    assert 0 < pair.code < scoring.FLOOR and not pair.flagged


def test_winnowing_sees_every_long_shared_run():
    """Any run of k + w - 1 tokens two texts share gives both one common fingerprint (the
    guarantee of winnowing); fails if windows are not overlapping."""
    k, w = 5, 4
    shared = [Token(f"s{i}", 1) for i in range(k + w - 1)]
    for prefix in range(6):
        a = [Token(f"a{i}", 1) for i in range(prefix)] + shared
        b = shared + [Token(f"b{i}", 1) for i in range(prefix + 3)]
        chosen_a = {g[0] for g in winnow(kgrams(a, k), w)}
        chosen_b = {g[0] for g in winnow(kgrams(b, k), w)}
        assert chosen_a & chosen_b, prefix


def test_past_terms_are_compared_and_labelled(released, tmp_path):
    """A copy of a past term's submission is flagged against it, labelled
    ``past:<term>/<student>``; past submissions are not compared with each other."""
    course = _empty_course(released, tmp_path / "course")
    students = corpus.independent_class(course)
    past = tmp_path / "2024" / "submitted"
    past.mkdir(parents=True)
    shutil.move(course.submitted / "alone-cat-einsum", past / "old-einsum")
    shutil.copytree(course.submitted / "alone-ind-loops", past / "old-loops")
    result = similarity(course, ASSIGNMENT, [past])
    labels = {p.b for p in result.comparison.pairs if p.b.startswith(PAST_PREFIX)}
    assert labels == {"past:2024/old-einsum", "past:2024/old-loops"}
    assert not [p for p in result.comparison.pairs if p.a.startswith(PAST_PREFIX)]
    flagged = [(p.a, p.b) for p in result.comparison.pairs if p.flagged]
    assert flagged == [("alone-ind-loops", "past:2024/old-loops")]
    assert len(students) == 11


def _run(course: Course, *args: str) -> int:
    with pytest.raises(SystemExit) as ended:
        cli.main(["--root", str(course.root), "similarity", *args])
    return ended.value.code


def test_bad_input_is_refused_whole(released, tmp_path, capsys):
    """A --past folder that does not exist or is not a submitted/ layout, an unknown
    assignment, two past folders with one label, a --json path that cannot be written:
    exit 2, the path named, nothing written (no --json file, no record). Fails if the past
    folders are checked after the comparison has been written."""
    course = _empty_course(released, tmp_path / "course")
    submit(course, "ann", corpus._notebook(course, None, corpus.ENGLISH[0]))
    output = tmp_path / "out.json"
    not_layout = tmp_path / "notes"
    (not_layout / "readme").mkdir(parents=True)
    twice = [tmp_path / "a" / "2024", tmp_path / "b" / "2024"]
    for folder in twice:
        shutil.copytree(course.submitted, folder)
    (tmp_path / "a-folder.json").mkdir()
    assert _run(course, ASSIGNMENT, "--json", str(tmp_path / "a-folder.json")) == 2
    assert "cannot write --json" in capsys.readouterr().err
    assert not record_path(course, ASSIGNMENT).exists()
    for args, named in [(["--past", str(tmp_path / "nowhere")], "nowhere"),
                        (["--past", str(not_layout)], str(not_layout)),
                        (["--past", str(twice[0]), "--past", str(twice[1])], str(twice[1])),
                        ([], "no-such-assignment")]:
        assignment = "no-such-assignment" if not args else ASSIGNMENT
        assert _run(course, assignment, *args, "--json", str(output)) == 2
        error = capsys.readouterr().err
        assert named in error and "nothing was written" in error
        assert not output.exists() and not record_path(course, ASSIGNMENT).exists()


def test_json_output_and_the_report(corpus_class, tmp_path, capsys):
    """--json writes the contract's form atomically; the class report shows the flagged
    pairs side by side, starter greyed, with the warning that similarity is not a verdict,
    under the page's CSP."""
    course, _, copied, _ = corpus_class
    output = tmp_path / "deep" / "pairs.json"
    output.parent.mkdir()
    output.write_text("old")
    assert _run(course, ASSIGNMENT, "--json", str(output)) == 0
    printed = capsys.readouterr().out
    assert "not a verdict" in printed and "flagged" in printed
    data = json.loads(output.read_text())
    assert data["assignment"] == ASSIGNMENT and len(data["pairs"]) == 24 * 23 // 2
    first = data["pairs"][0]
    assert set(first) == {"a", "b", "code", "prose", "score", "flagged", "shared"}
    assert {"cell", "a_lines", "b_lines"} <= set(first["shared"][0])
    assert sum(p["flagged"] for p in data["pairs"]) == len(copied)
    assert [p.name for p in output.parent.iterdir()] == ["pairs.json"]   # no partial file
    page = write_report(course, ASSIGNMENT).read_text()
    text = visible_text(page)
    assert "evidence for a person to weigh, not a verdict" in text
    assert "Content-Security-Policy" in page and "<script" not in page
    assert "cp-renamed" in text and "cluster-renamed" in text
    assert 'class="line starter"' in page and 'class="line shared"' in page
    assert load_record(course, ASSIGNMENT)["views"]


def test_hostile_submissions_are_compared_as_far_as_possible(released, tmp_path):
    """Bad JSON, a cell that does not parse, a huge cell, missing cells, a student folder
    that is a symbolic link out of the course, an id and code made of HTML: the run
    finishes, each is named with a reason, a copy with a syntax error is still caught, and
    nothing a student wrote becomes markup in the report. Fails if a SyntaxError or a bad
    notebook stops the run, or if a student folder link is followed."""
    course = _empty_course(released, tmp_path / "course")
    corpus.independent_class(course)
    loops = next((course.submitted / "alone-ind-loops" / ASSIGNMENT).glob("*.ipynb"))
    broken = nbformat.read(loops, as_version=4)
    for cell in broken.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "masked_softmax":
            cell.source = cell.source.replace("return torch.stack(rows)",
                                              "return torch.stack(rows) +* <b>")
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "written-scaling":
            cell.source = "<script>alert(1)</script>"
    hostile = "<img src=x onerror=alert(2)>"
    submit(course, hostile, broken)
    submit(course, "bad-json", '{"cells": [')
    huge = nbformat.read(loops, as_version=4)
    huge.cells = [c for c in huge.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                  != "attend"]
    for cell in huge.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "dot_score":
            cell.source += "\n" + "x = 1\n" * 40_000
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "scaled_dot_score":
            cell.source = "def scaled_dot_score(q, k):\n    return " + "+".join(["q"] * 30_000)
    submit(course, "huge-and-missing", huge)
    outside = tmp_path / "outside" / ASSIGNMENT
    shutil.copytree(loops.parent, outside)
    (course.submitted / "linked").symlink_to(outside.parent)
    result = similarity(course, ASSIGNMENT)
    notes = result.as_json()["notes"]
    assert "bad JSON" in " ".join(notes["bad-json"])
    assert "does not parse" in " ".join(notes[hostile])
    assert any("characters" in n for n in notes["huge-and-missing"])
    assert any("scaled_dot_score" in n for n in notes["huge-and-missing"])
    assert any("missing: attend" in n for n in notes["huge-and-missing"])
    labels = {label for p in result.comparison.pairs for label in (p.a, p.b)}
    assert "linked" not in labels
    copy = next(p for p in result.comparison.pairs if {p.a, p.b} == {hostile, "alone-ind-loops"})
    assert copy.flagged and copy.code > 0.9
    record(course, result)
    page = write_report(course, ASSIGNMENT).read_text()
    assert "<script>" not in page and hostile not in page
    assert hostile in visible_text(page)


def test_json_is_written_atomically(tmp_path):
    """The file is replaced whole (a reader never sees half of it); no partial file stays."""
    path = tmp_path / "x.json"
    path.write_text("previous")
    write_json_atomically({"pairs": ["中文"]}, path)
    assert json.loads(path.read_text("utf-8")) == {"pairs": ["中文"]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_jieba_is_silent():
    """Segmenting Chinese prints nothing (jieba logs its dictionary's loading to stderr by
    default). Fails without the log level set before the dictionary loads."""
    code = ("from autograder.similarity.prose import words; "
            "print(len(words('缩放后的方差仍然是十六，梯度很小')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stderr == "" and int(done.stdout) > 3


def test_refusals_raise(released, tmp_path):
    """The library refuses what the command line reports (for callers other than it)."""
    course = _empty_course(released, tmp_path / "course")
    with pytest.raises(SimilarityError, match="not a submitted/ layout"):
        similarity(course, ASSIGNMENT, [tmp_path])
