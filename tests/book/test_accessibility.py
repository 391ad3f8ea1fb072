"""WCAG 2.1 A and AA on every page of both sites, in light and dark mode, as axe-core checks
them (the rule set most universities' accessibility audits use).

axe-core (npm, pinned in the Makefile, installed by `make browser-tools` into ``.tools/``) is
injected into each page in Chromium once the page has settled (MathJax typeset, fonts
loaded), and run with the tags ``wcag2a, wcag2aa, wcag21a, wcag21aa``; then the page is
switched to dark mode the way the theme's colour-mode button switches it, which changes its
colours and nothing else, and the rules of those tags that read colours are run again.
Any violation fails the test, named by rule, page, mode and element.

`make test` audits every page of both sites in both modes (about five minutes on two cores).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.book.test_browser import (  # noqa: F401  (fixtures)
    CHINESE,
    PAGES_IN_BOTH_LANGUAGES,
    context,
    open_page,
    served,
)
from tests.conftest import READING_BOOK_GROUP, REPO

AXE = REPO / ".tools" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Pages of both sites that are not in the table of contents.
OTHER_PAGES = ["search", "genindex", CHINESE + "search", CHINESE + "genindex"]
EVERY_PAGE = PAGES_IN_BOTH_LANGUAGES + OTHER_PAGES
# One page of each kind: the front page, a chapter of each part with figures, formulas,
# folded code and exercises, an exercise page, the references, the glossary, the search.
SAMPLE = ["book/intro", "book/overview/weighted-sum", "book/traditional/attention-module",
          "book/encoder/multi-head", "exercises/attention-scoring/attention-scoring",
          "book/appendix/references", "book/appendix/glossary", "search"]
SAMPLE_IN_BOTH_LANGUAGES = SAMPLE + [CHINESE + page for page in SAMPLE]

# The rules of TAGS that depend on colours (axe-core's "color" rules).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]

# axe-core on the page (or on the element a selector names), with the rules of ``tags`` or
# the ``rules`` named; ``preload`` false on a page opened from file://, whose style sheets
# axe cannot fetch again.
RUN_AXE = """async ([tags, rules, selector, preload]) => {
  await document.fonts.ready;
  const only = rules ? {type: 'rule', values: rules} : {type: 'tag', values: tags};
  const context = selector ? document.querySelector(selector) : document;
  const options = {runOnly: only, resultTypes: ['violations']};
  if (preload === false) options.preload = false;
  const result = await axe.run(context, options);
  return result.violations.map(v => ({rule: v.id, impact: v.impact,
    nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.html.slice(0, 160))}));
}"""

# The theme's colour-mode button sets these attributes (pydata-sphinx-theme's setTheme).
# The colours' CSS transitions (Bootstrap's buttons: 0.15 s) are switched off first, so
# that every colour is its dark one at once: on a loaded machine a fixed wait for them to
# end was not always long enough (axe measured a button's colour half-way).
DARK = """() => {
  const still = document.createElement('style');
  still.textContent = '*, *::before, *::after { transition: none !important; ' +
                      'animation: none !important; }';
  document.head.appendChild(still);
  document.documentElement.dataset.mode = 'dark';
  document.documentElement.dataset.theme = 'dark';
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""


def test_the_colour_rules_are_rules_of_the_audit():
    """Every rule checked again in dark mode is one of the audit's tags, and every rule of
    those tags that axe-core files under colour is checked again."""
    if not AXE.exists():
        pytest.fail(f"no axe-core at {AXE}: `make browser-tools` installs it")
    source = AXE.read_text(encoding="utf-8")
    colour, rules = set(), 0
    for rule in re.finditer(r'\{id:"([a-z0-9-]+)",[^{}]*?tags:(\[[^\]]*\])', source):
        rules += 1
        tags = set(json.loads(rule.group(2)))
        if "cat.color" in tags and tags & set(TAGS):
            colour.add(rule.group(1))
    assert rules >= 80, rules
    assert colour == set(COLOUR_RULES), colour


# The English site in the group that builds the site, the Chinese one in the group that
# only reads it, on another worker (tests/conftest.py). (A test with two groups would be
# in a third, named after both.)
EDITIONS = [pytest.param("en", marks=pytest.mark.xdist_group("book")),
            pytest.param("zh", marks=pytest.mark.xdist_group(READING_BOOK_GROUP))]


@pytest.mark.parametrize("edition", EDITIONS)
def test_no_page_violates_wcag_21_aa_in_either_mode(served, context, edition):  # noqa: F811
    assert set(SAMPLE_IN_BOTH_LANGUAGES) <= set(EVERY_PAGE)   # every kind of page is there
    pages = [page for page in EVERY_PAGE if page.startswith(CHINESE) == (edition == "zh")]
    assert len(pages) == len(EVERY_PAGE) // 2, pages
    if not AXE.exists():
        pytest.fail(f"no axe-core at {AXE}: `make browser-tools` installs it")
    context.add_init_script("try { localStorage.setItem('mode', 'light');"
                            " localStorage.setItem('theme', 'light'); } catch (e) {}")
    found = []
    for page_name in pages:
        page, _ = open_page(context, served + page_name + ".html")
        page.add_script_tag(path=str(AXE))
        for mode in ("light", "dark"):
            if mode == "dark":
                page.evaluate(DARK)
            assert page.evaluate("document.documentElement.dataset.theme") == mode, page_name
            rules = COLOUR_RULES if mode == "dark" else None
            for violation in page.evaluate(RUN_AXE, [TAGS, rules, None, True]):
                found.append(f"{violation['rule']} ({violation['impact']}) on {page_name}, "
                             f"{mode}: {len(violation['nodes'])} elements, e.g. "
                             f"{violation['nodes'][:2]}")
        page.close()
    assert not found, "\n".join(found)
