"""The book's build: everything that makes the website from the pages, in every language.

* :mod:`.execute` — ``python -m book_build.execute``: run the book's notebooks into the
  cache the build reads, several at a time, before Jupyter Book builds the English site;
* :mod:`.translate` — ``python -m book_build.translate build|update``: the translated
  sites from the same cached outputs, and the catalogues they are translated from;
* :mod:`.figure_strings` and :mod:`.check_translations` — the figures' strings into
  ``figures.po``, and a check of every catalogue's translations;
* :mod:`.figures` — figures in the page's language: rendered again in every language while
  the notebooks execute (an IPython extension), shown by a MyST-NB plugin;
* :mod:`.extensions` — the Sphinx extensions ``_config.yml`` loads by name;
* :mod:`.toc` and :mod:`.paths` — the pages ``_toc.yml`` lists, and where things are.

The languages are the course's one table (:mod:`autograder.course.languages`), the
catalogues read by its one reader (:mod:`autograder.course.catalogues`). The pages' own
package, :mod:`attention_course`, never imports the build (``make lint`` checks).
"""
