"""The translated notebooks `release` writes: the English release with its markdown
translated from the book's catalogues, nothing else changed, nothing given away."""

from __future__ import annotations

import shutil

import nbformat
import pytest
from nbgrader.utils import compute_checksum

from autograder.commands.release import (
    ReleaseLeak,
    check_release,
    release,
    translation_differences,
)
from autograder.commands.translation import (
    MissingTranslation,
    has_letters,
    translate_markdown,
    translate_notebook,
)
from autograder.course import Course
from autograder.course.languages import METADATA_KEY, notebook_language, split_name
from tests.conftest import ASSIGNMENT, REPO, make_course, run_cli

ASSIGNMENTS = Course.at(REPO).assignments()
ZH = "zh_CN"


def _pair(root, assignment):
    english = nbformat.read(root / assignment / f"{assignment}.ipynb", as_version=4)
    chinese = nbformat.read(root / assignment / f"{assignment}.{ZH}.ipynb", as_version=4)
    return english, chinese


# --- the translator, on small markdown -------------------------------------------------

CATALOGUE = {
    "Part 1 · Scores": "第 1 部分 · 分数",
    "A paragraph on two lines with $x$ and `code`.": "一段有 $x$ 和 `code` 的文字。",
    "**first** item, which continues": "**第一**项，继续",
    "second item": "第二项",
    "function": "函数",
    "points": "分值",
    "the dot score": "点积打分",
    "![A figure of the model](model.svg)": "![模型示意图](model.svg)",
}

SOURCE = """\
## Part 1 · Scores

A paragraph on two
lines with $x$ and `code`.

1. **first** item,
   which continues
2. second item

| function | points |
| --- | --- |
| `dot_score` | 2 |
| the dot score | $1$ |

$$s = q^\\top k$$

```python
x = 1  # code is never translated
```

![A figure of the model](model.svg)
"""


def test_translates_headings_paragraphs_list_items_and_table_cells():
    assert translate_markdown(SOURCE, CATALOGUE) == """\
## 第 1 部分 · 分数

一段有 $x$ 和 `code` 的文字。

1. **第一**项，继续
2. 第二项

| 函数 | 分值 |
| --- | --- |
| `dot_score` | 2 |
| 点积打分 | $1$ |

$$s = q^\\top k$$

```python
x = 1  # code is never translated
```

![模型示意图](model.svg)
"""


def test_a_block_without_translation_is_refused_and_named():
    catalogue = {k: v for k, v in CATALOGUE.items() if k != "second item"}
    with pytest.raises(MissingTranslation, match=r"cell 7: no translation of 'second item'"):
        translate_markdown(SOURCE, catalogue, where="cell 7")
    catalogue = {k: v for k, v in CATALOGUE.items() if k != "the dot score"}
    with pytest.raises(MissingTranslation, match="the dot score"):      # a table cell
        translate_markdown(SOURCE, catalogue)


def test_blocks_without_letters_pass_through():
    assert not has_letters("$a_i = \\exp(s_i)$, `(B, n)` 2") and has_letters("2 points")
    assert translate_markdown("`(B, n)`\n\n$x$, $y$: 1\n", {}) == "`(B, n)`\n\n$x$, $y$: 1\n"
    assert translate_markdown("| 1 | `x` |\n| --- | --- |\n| $2$ | |\n", {}) == \
        "| 1 | `x` |\n| --- | --- |\n| $2$ | |\n"


def test_translate_notebook_changes_only_markdown_and_checksums():
    cell = nbformat.v4.new_markdown_cell("second item", id="intro")
    cell.metadata["nbgrader"] = {"grade": False, "locked": True, "solution": False,
                                 "grade_id": "intro", "schema_version": 3}
    cell.metadata["nbgrader"]["checksum"] = compute_checksum(cell)
    code = nbformat.v4.new_code_cell("second item = 1", id="code")
    notebook = nbformat.v4.new_notebook(cells=[cell, code])
    translated = translate_notebook(notebook, CATALOGUE, ZH)
    assert translated.cells[0].source == "第二项"
    assert translated.cells[0].metadata.nbgrader.checksum == compute_checksum(translated.cells[0])
    assert translated.cells[0].metadata.nbgrader.checksum != cell.metadata.nbgrader.checksum
    assert translated.cells[1] == code
    assert notebook_language(translated) == ZH and notebook_language(notebook) == "en"
    assert notebook.cells[0].source == "second item"          # the original is untouched
    assert split_name(f"{ASSIGNMENT}.{ZH}") == (ASSIGNMENT, ZH)
    assert split_name(ASSIGNMENT) == (ASSIGNMENT, "en")


# --- the released Chinese notebooks -------------------------------------------------------

@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_chinese_notebook_is_the_english_one_with_its_markdown_translated(assignment):
    english, chinese = _pair(REPO / "exercises", assignment)
    assert chinese.metadata[METADATA_KEY] == {"language": ZH}
    assert METADATA_KEY not in english.metadata               # English: no key
    assert {k: v for k, v in chinese.metadata.items() if k != METADATA_KEY} == english.metadata
    assert translation_differences(english, chinese) == []
    assert len(english.cells) == len(chinese.cells)
    translated = 0
    for en, zh in zip(english.cells, chinese.cells, strict=True):
        assert (en.id, en.cell_type) == (zh.id, zh.cell_type)
        en_meta, zh_meta = nbformat.from_dict(en.metadata), nbformat.from_dict(zh.metadata)
        if en.cell_type == "code":
            assert (en.source, en.outputs, en.execution_count, en_meta) == \
                (zh.source, zh.outputs, zh.execution_count, zh_meta)
            continue
        nbgrader = en_meta.get("nbgrader", {})
        if nbgrader.get("solution"):          # a written answer: nbgrader's stub, as released
            assert zh.source == en.source and zh_meta == en_meta
            continue
        assert zh.source != en.source, f"{assignment}: cell {en.id} is not translated"
        translated += 1
        assert zh_meta.nbgrader.pop("checksum") == compute_checksum(zh)
        en_meta.nbgrader.pop("checksum")
        assert zh_meta == en_meta
    assert translated >= 10


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_chinese_notebook_gives_nothing_away(assignment):
    """No marker, solution line, hidden test or model answer: check_release reads every
    released file, the Chinese notebooks included, and they match their English release."""
    english, chinese = _pair(REPO / "exercises", assignment)
    text = (REPO / "exercises" / assignment / f"{assignment}.{ZH}.ipynb").read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "HIDDEN TESTS"):
        assert marker not in text
    answers = [c for c in chinese.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert answers and all("YOUR ANSWER HERE" in c.source or "YOUR CODE HERE" in c.source
                           for c in answers)


def test_a_model_answer_in_the_chinese_notebook_is_a_leak(course):
    path = course.release / ASSIGNMENT / f"{ASSIGNMENT}.{ZH}.ipynb"
    check_release(course, ASSIGNMENT)
    notebook = nbformat.read(path, as_version=4)
    written = next(c for c in notebook.cells if c.cell_type == "markdown"
                   and c.metadata.get("nbgrader", {}).get("solution"))
    written.source = "参考答案：缩放使得分数的方差与维度无关。"     # a model answer, in Chinese
    nbformat.write(notebook, path)
    with pytest.raises(ReleaseLeak, match="not its English release translated"):
        check_release(course, ASSIGNMENT)


def test_release_is_reproducible_and_refuses_a_missing_translation(tmp_path):
    course = make_course(tmp_path / "course")
    folder = course.release / ASSIGNMENT
    first = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert f"{ASSIGNMENT}.{ZH}.ipynb" in first
    release(course, [ASSIGNMENT])
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == first

    # An English paragraph changed in the source, not yet in the catalogue: refused.
    script = course.source / ASSIGNMENT / f"{ASSIGNMENT}.py"
    changed = "turn the scores into **weights** with a softmax"
    assert changed in script.read_text()
    script.write_text(script.read_text().replace(changed, "turn the scores into weights"))
    with pytest.raises(MissingTranslation, match="turn the scores into weights"):
        release(course, [ASSIGNMENT])
    result = run_cli(course, "release", ASSIGNMENT)
    assert result.returncode == 2
    assert f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb, cell" in result.stderr
    assert "no translation of 'turn the scores into weights" in result.stderr


def test_an_assignment_without_catalogue_has_no_translation(tmp_path):
    course = make_course(tmp_path / "course")
    shutil.rmtree(course.root / "locales")
    release(course, [ASSIGNMENT])
    assert [p.name for p in (course.release / ASSIGNMENT).glob("*.ipynb")] == \
        [f"{ASSIGNMENT}.ipynb"]
    assert course.notebook_names(ASSIGNMENT) == [ASSIGNMENT]
