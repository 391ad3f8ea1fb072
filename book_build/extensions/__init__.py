"""The book's Sphinx extensions, one job each, loaded by name from ``_config.yml``
(``sphinx: extra_extensions``)."""
