"""Figures in the page's language: :mod:`.translation` renders every figure again in each
language while the book's notebooks execute; :mod:`.render` shows the page's language's."""
