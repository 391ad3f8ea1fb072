"""What a person is shown of a submission, with nothing in it that can act.

Everything a student controls — their markdown, what their code displays, a notebook's
metadata and attachments, their id and file names — is reduced to what can be read
(:mod:`.notebook`, :mod:`.html`) before it reaches a page; the pages that show it are
rendered by :mod:`.exporter` and carry a Content-Security-Policy (:mod:`.csp`) that would
stop whatever slipped through; MathJax comes from the course (:mod:`.mathjax`).
"""
