/* Display formulas that fit their column.
 *
 * MathJax 3 does not break long formulas into lines, and the book's longest ones are
 * already set on several lines; on a narrow screen (a phone held upright) a formula can
 * still be wider than the text column, and the theme would hide the rest behind a
 * scrollbar. Once MathJax has typeset the page, and again whenever the window's width
 * changes or a folded part of the page opens, each display formula wider than its column
 * is set in a smaller size, just small enough to fit, but never below MIN_SCALE of the
 * text's size (a formula that would need less keeps MIN_SCALE and scrolls).
 * tests/book/test_browser.py measures every page. */
(() => {
  "use strict";
  const MIN_SCALE = 0.6;

  // A display formula is a block that scrolls (MathJax's mjx-container, overflow: auto).
  function fit() {
    for (const formula of document.querySelectorAll('mjx-container[display="true"]')) {
      formula.style.fontSize = "";
      let scale = 1;
      for (let step = 0; step < 4 && formula.scrollWidth > formula.clientWidth + 1; step++) {
        scale = Math.max(MIN_SCALE,
                         scale * (formula.clientWidth / formula.scrollWidth) - 0.01);
        formula.style.fontSize = `${(scale * 100).toFixed(0)}%`;
        if (scale === MIN_SCALE) break;
      }
    }
  }

  let pending = null;
  function fitSoon() {
    if (pending) cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => { pending = null; fit(); });
  }

  function start() {
    if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return;
    MathJax.startup.promise.then(fit);
    window.addEventListener("resize", fitSoon);
    // a folded solution or hidden cell shows its formulas when opened: fit them then
    document.addEventListener("toggle", fitSoon, true);
    document.addEventListener("click", fitSoon);
  }

  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
