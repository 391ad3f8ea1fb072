"""book_build.extensions.local_mathjax: the site serves MathJax itself, never a CDN."""

from __future__ import annotations

EXTENSION = "book_build.extensions.local_mathjax"
PAGE = "Scores\n======\n\nA formula: :math:`\\sqrt{d_k}`.\n"


def test_mathjax_and_its_fonts_are_copied_into_the_site_and_loaded_from_there(build):
    built = build({"index.rst": PAGE}, [EXTENSION], mathjax_path="mathjax/tex-mml-chtml.js")
    assert built.error is None, built.warnings
    mathjax = built.outdir / "_static" / "mathjax"
    assert (mathjax / "tex-mml-chtml.js").stat().st_size > 100_000
    assert len(list((mathjax / "output/chtml/fonts/woff-v2").glob("*.woff"))) > 10
    page = built.page("index")
    assert 'src="_static/mathjax/tex-mml-chtml.js' in page
    assert "cdn." not in page and "cdnjs" not in page


def test_a_build_that_is_not_a_website_copies_nothing(build):
    built = build({"index.rst": PAGE}, [EXTENSION], builder="text")
    assert built.error is None, built.warnings
    assert not (built.outdir / "_static").exists()
