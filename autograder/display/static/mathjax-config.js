/* MathJax 3 for pages that show a student's notebook (the formgrader, feedback pages).
 *
 * Loaded from a file, never inline, so that the pages' Content-Security-Policy can refuse
 * every inline script. TeX is read from text a student wrote, so MathJax is confined:
 * the TeX packages that make links, classes, styles or ids (html), load more code
 * (require, autoload) or pick fonts and boxes (unicode, bbox) are left out, and the
 * "safe" extension filters whatever attribute remains. Code and outputs are not typeset.
 */
window.MathJax = {
  loader: {load: ["ui/safe"]},
  tex: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]],
    displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
    packages: {"[-]": ["html", "require", "autoload", "unicode", "bbox"]}
  },
  options: {
    enableMenu: false,
    skipHtmlTags: ["script", "noscript", "style", "textarea", "pre", "code", "input"],
    ignoreHtmlClass: "tex2jax_ignore|output_area|input_area",
    safeOptions: {
      allow: {URLs: "none", classes: "none", cssIDs: "none", styles: "none"}
    }
  },
  svg: {fontCache: "global"}
};
