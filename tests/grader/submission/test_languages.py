"""Which notebook file of a submission is graded, and in which language it was written."""

from __future__ import annotations

import nbformat

from autograder.course.languages import METADATA_KEY
from autograder.submission.staging import choose_notebooks, submission_language

NB = "attention-scoring"


def _write(path, language=None):
    notebook = nbformat.v4.new_notebook()
    if language:
        notebook.metadata[METADATA_KEY] = {"language": language}
    nbformat.write(notebook, path)


def test_a_chinese_notebook_alone_is_graded_as_the_notebook(tmp_path):
    _write(tmp_path / f"{NB}.zh_CN.ipynb", "zh_CN")
    assert choose_notebooks(tmp_path, [NB]) == []
    assert [p.name for p in tmp_path.iterdir()] == [f"{NB}.ipynb"]
    assert submission_language(tmp_path, [NB]) == "zh_CN"


def test_when_both_are_handed_in_the_english_name_is_graded(tmp_path):
    _write(tmp_path / f"{NB}.ipynb")
    _write(tmp_path / f"{NB}.zh_CN.ipynb", "zh_CN")
    reasons = choose_notebooks(tmp_path, [NB])
    assert reasons == [f"{NB}.zh_CN.ipynb was handed in as well as {NB}.ipynb: "
                       f"{NB}.ipynb was graded, {NB}.zh_CN.ipynb was not"]
    assert [p.name for p in tmp_path.iterdir()] == [f"{NB}.ipynb"]
    assert submission_language(tmp_path, [NB]) == "en"


def test_the_language_is_the_notebooks_not_its_file_name(tmp_path):
    """The Chinese site offers <a>.zh_CN.ipynb for download as <a>.ipynb."""
    _write(tmp_path / f"{NB}.ipynb", "zh_CN")
    assert choose_notebooks(tmp_path, [NB]) == []
    assert submission_language(tmp_path, [NB]) == "zh_CN"
    _write(tmp_path / f"{NB}.ipynb", "klingon")           # unknown: English
    assert submission_language(tmp_path, [NB]) == "en"
    (tmp_path / f"{NB}.ipynb").write_text("not json")     # unreadable: said elsewhere
    assert submission_language(tmp_path, [NB]) == "en"
    assert submission_language(tmp_path / "missing", [NB]) == "en"
