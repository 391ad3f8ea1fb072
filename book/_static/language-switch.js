/* The language switch keeps the reader's place (book_build/extensions/languages.py writes
 * the switch: a link to the same page in the other language). Both editions give each
 * section the same id, so the link is given, as it is followed, the id of the section the
 * reader is in: the deepest one whose top has scrolled up to where a link would put it.
 * tests/book/test_browser.py follows it both ways. */
(() => {
  "use strict";
  function sectionBeingRead() {
    // Where a followed link puts a section's top (the theme's scroll padding, under its
    // header), and a line more.
    const padding = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop);
    const reading = (Number.isNaN(padding) ? 0 : padding) + 24;
    let current = null;
    // (the first section is the page's own: at its top, the other page opens at its top)
    for (const section of [...document.querySelectorAll("main section[id]")].slice(1)) {
      if (section.getBoundingClientRect().top > reading) break;
      current = section.id;
    }
    return current;
  }

  function keepThePlace(event) {
    const link = event.target.closest && event.target.closest("a.course-language-switch");
    if (!link) return;
    const url = new URL(link.href);
    url.hash = sectionBeingRead() || "";
    link.href = url.href;
  }

  // A click, a middle click (a new tab) or Enter on the focused link.
  document.addEventListener("click", keepThePlace, true);
  document.addEventListener("auxclick", keepThePlace, true);
})();
