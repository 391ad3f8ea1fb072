# Two commands are all a newcomer needs: `make book` and `make test`.
# Both create .venv from the pinned requirements.txt on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: help setup book release validate lint test test-fast clean

help:
	@echo "make book      build the website into _build/html (executes the notebooks, cached)"
	@echo "make test      lint, then run the whole test suite (release, grading, mutants, book)"
	@echo "make release   regenerate exercises/ from solutions/ (nbgrader generate_assignment)"
	@echo "make validate  grade solution, release, every mutant and variant of every assignment"
	@echo "make clean     remove builds and grading runtime folders (keeps .venv)"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . --builder html
	@echo "The website is in _build/html/index.html"

release: $(STAMP)
	$(BIN)/python -m autograder release

validate: $(STAMP)
	$(BIN)/python -m autograder validate --jobs $(JOBS)

lint: $(STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup

clean:
	rm -rf _build submitted autograded feedback gradebook.db grades.csv grades.json
