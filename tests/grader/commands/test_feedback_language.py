"""The feedback page's own words, in every language the notebooks are released in."""

from __future__ import annotations

import io
import json

from babel.messages.pofile import read_po
from jinja2.ext import babel_extract

from autograder.commands import feedback
from autograder.commands.feedback import catalogue_file, render_summary, translations
from autograder.course import CellResult, Outcome
from autograder.course.languages import TRANSLATIONS
from autograder.course.outcome import STATUSES


def _messages() -> set[str]:
    """Every message of the page: the templates' gettext calls (the page, and on the hub
    the limits on official gradings) and the status words."""
    found = set()
    for source in (feedback._SOURCE, feedback._ALLOWANCE_SOURCE, feedback._NOTICE_SOURCE,
                   feedback._COUNTING_SOURCE):
        for _, _, message, _ in babel_extract(io.BytesIO(source.encode()), ["_"], [],
                                              {"extensions": "jinja2.ext.i18n"}):
            found.add(message[0] if isinstance(message, tuple) else message)
    return found | set(STATUSES)


def test_every_word_of_the_page_is_translated():
    messages = _messages()
    assert len(messages) >= 20
    for language in TRANSLATIONS:
        with catalogue_file(language).open("rb") as handle:
            catalogue = {m.id: m.string for m in read_po(handle) if m.id}
        assert messages <= set(catalogue), messages - set(catalogue)
        assert all(catalogue[m] for m in messages)
        assert not set(catalogue) - messages, "a message no longer on the page"
        words = translations(language)
        assert all(words.gettext(m) == catalogue[m] for m in messages)   # it compiles


def _outcome(language: str) -> Outcome:
    return Outcome("lee<b>", "attention-scoring", language=language, reasons=["a reason"],
                   cells=[CellResult("test-dot", "attention-scoring", 0, 2, "failed", "msg"),
                          CellResult("written", "attention-scoring", 0, 2,
                                     "awaiting a grade", graded_by="hand",
                                     needs_manual_grade=True)])


def test_the_page_is_in_the_outcomes_language():
    english = render_summary(_outcome("en"), ["attention-scoring"], ["hint one", "hint two"])
    chinese = render_summary(_outcome("zh_CN"), ["attention-scoring"], ["hint one"])
    assert '<html lang="en">' in english and '<html lang="zh-CN">' in chinese
    assert "2 of the 4 points are for answers graded by hand" in english
    assert "(more than one, in fact)" in english
    assert "总分 4 分中有 2 分属于人工评分的答案" in chinese
    assert "lee&lt;b&gt; 的反馈" in chinese                # the student's id is escaped
    assert ">未通过<" in chinese and ">等待评分<" in chinese
    assert 'class="failed"' in chinese                    # the status's style, as in English
    assert "msg" in chinese and "a reason" in chinese and "hint one" in chinese
    for english_word in ("Tests and answers", "What to check", "Student:", ">failed<"):
        assert english_word in english and english_word not in chinese


def test_an_outcome_recorded_before_languages_is_english():
    data = json.loads(_outcome("zh_CN").to_json())
    del data["language"]
    old = Outcome.from_json(json.dumps(data))
    assert old.language == "en"
    assert '<html lang="en">' in render_summary(old, [])
