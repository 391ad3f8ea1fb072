# Two commands are all a newcomer needs: `make book` and `make test`.
# Both create .venv from the pinned requirements.txt on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2
# pytest-xdist's workers for `make test`: one more than the cores. Many of its tests wait
# on a browser, a server or a clock; with a third worker the two cores stayed busy in every
# 30-second sample of a fresh clone's `make test`.
TEST_WORKERS ?= 3

.PHONY: hub hub-tools lms-tools help setup sandbox-tools browser-tools postgres-tools book pdf translations release validate formgrader lint test test-full test-browser security-report bench clean

help:
	@echo "make book      build the website into _build/html, in English and in Chinese (_build/html/zh)"
	@echo "make pdf       the book as a PDF in each language: _build/pdf/attention-in-nlp[.zh_CN].pdf"
	@echo "make translations  after changing an English page: merge its messages into locales/ (sphinx-intl)"
	@echo "make test      lint (ruff, import layers), then the whole test suite (grader, book)"
	@echo "make test-full every mutant, variant and independent implementation through the pipeline"
	@echo "make security-report  the hostile-content corpus against plain nbgrader (~16 min)"
	@echo "make test-browser  the website in Chromium and the exercises in JupyterLab only"
	@echo "make release   regenerate exercises/ from solutions/ (nbgrader generate_assignment)"
	@echo "make validate  grade solution, release, every mutant and variant of every assignment"
	@echo "make formgrader  nbgrader's formgrader on localhost: grade written answers by hand in a browser"
	@echo "make bench     benchmarks: ratios against a baseline measured in the same run"
	@echo "make clean     remove builds and grading runtime folders (keeps .venv)"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

# $(call apt_install,PACKAGES,WHO NEEDS THEM): Debian's packages, installed as root, or
# the command to install them said and the make stopped.
define apt_install
if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	  apt-get -o DPkg::Lock::Timeout=600 install -y -qq $(1) >/dev/null; \
	else echo "$(2): sudo apt-get install $(1)"; exit 1; fi
endef

# Grading runs every notebook in a bubblewrap sandbox (autograder/sandbox/).
sandbox-tools:
	@command -v bwrap >/dev/null && command -v prlimit >/dev/null && \
	  command -v setpriv >/dev/null || { \
	  $(call apt_install,bubblewrap util-linux,Grading needs bubblewrap and setpriv); }

# The browser tests (tests/book/test_browser.py, tests/book/test_exercises_in_jupyterlab.py) drive Debian's Chromium
# with Playwright from PyPI (no browser download); a CJK font renders the glossary's Chinese.
CHROMIUM ?= /usr/bin/chromium
# axe-core (npm): the accessibility rules of tests/book/test_accessibility.py
AXE_VERSION := 4.14.1
AXE := .tools/node_modules/axe-core/axe.min.js
browser-tools: $(AXE)
	@test -x $(CHROMIUM) && fc-list :lang=zh 2>/dev/null | grep -q . || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	    apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium fonts-wqy-microhei >/dev/null; \
	  elif ! test -x $(CHROMIUM); then \
	    echo "The browser tests need Chromium: sudo apt-get install chromium fonts-wqy-microhei"; exit 1; fi; }

# axe-core, the accessibility rules tests/book/test_accessibility.py runs in Chromium (npm).
$(AXE):
	@command -v npm >/dev/null || { $(call apt_install,npm,The accessibility test needs npm); }
	npm install --silent --no-audit --no-fund --prefix .tools axe-core@$(AXE_VERSION)
	@test -f $(AXE)

# tests/grader/batch/test_resumable_cluster_postgres.py starts a PostgreSQL server of its own for the gradebook.
postgres-tools:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  $(call apt_install,postgresql,The tests need a PostgreSQL server); }

# The notebooks execute first, $(JOBS) at a time, into the cache the build reads
# (book_build/execute.py); jupyter-book alone would run them one by one.
# The Chinese site is built from the same pages and the same cached outputs, translated by
# the catalogues in locales/ (book_build/translate.py); a missing translation fails it.
# Each edition is also printed as one PDF (book_build/pdf.py, Chromium), which its website
# serves and links from every page's download menu.
book: $(STAMP) browser-tools
	$(BIN)/python -m book_build.execute --jobs $(JOBS)
	$(BIN)/python -m book_build.pdf --jobs $(JOBS)
	$(BIN)/jupyter-book build . --builder html
	$(BIN)/python -m book_build.translate build --language zh_CN
	@echo "The website is in _build/html/index.html (中文版: _build/html/zh/index.html)"

# Only the PDFs: _build/pdf/attention-in-nlp.pdf and attention-in-nlp.zh_CN.pdf, from the
# same pages and cached outputs as the website (nothing executes again once it is cached).
pdf: $(STAMP) browser-tools
	$(BIN)/python -m book_build.execute --jobs $(JOBS)
	$(BIN)/python -m book_build.pdf --jobs $(JOBS)

# After an English page changed: its new or changed messages into locales/zh_CN (new ones
# untranslated, changed ones fuzzy), and its figures' new strings into figures.po, for a
# translator to complete before `make book`.
translations: $(STAMP)
	$(BIN)/python -m book_build.execute --jobs $(JOBS)
	$(BIN)/python -m book_build.translate update --language zh_CN
	$(BIN)/python -m book_build.figure_strings

release: $(STAMP)
	$(BIN)/python -m autograder release

validate: $(STAMP) sandbox-tools
	$(BIN)/python -m autograder validate --jobs $(JOBS)

# nbgrader's formgrader, alone on a Jupyter server (autograder/formgrader/: no notebooks,
# kernels or terminals; students' work shown inert), on the course directory COURSE_ROOT and
# its gradebook: $AUTOGRADER_DB if set, as for `python -m autograder` (nbgrader_config.py
# reads it), else gradebook.db. Bound to localhost; open the URL it prints.
COURSE_ROOT     ?= .
FORMGRADER_PORT ?= 8888
formgrader: $(STAMP)
	cd $(COURSE_ROOT) && $(abspath $(BIN))/python -m autograder.formgrader --port=$(FORMGRADER_PORT) $(if $(filter 0,$(shell id -u)),--allow-root)

# The course's JupyterHub (hub/): JupyterHub from PyPI, its proxy from npm.
CHP_VERSION := 5.3.0
CHP := .tools/node_modules/.bin/configurable-http-proxy
hub-tools: $(CHP)
$(CHP):
	@command -v npm >/dev/null || { $(call apt_install,npm,The hub's proxy needs npm); }
	npm install --silent --no-audit --no-fund --prefix .tools configurable-http-proxy@$(CHP_VERSION)
	@test -x $(CHP)

# A class on this machine: `make hub` (as root: it starts each student's JupyterLab as
# that student). hub/class.csv lists the class; see the README's "A class on JupyterHub".
hub: $(STAMP) sandbox-tools hub-tools
	$(BIN)/python -m hub.classroom setup
	$(BIN)/jupyterhub -f hub/jupyterhub_config.py

# tests/grader/commands/test_lms_round_trip.py reads the files written for Canvas and Moodle
# again with the parsers their importers use: Ruby's CSV library and PHP's fgetcsv (Debian).
lms-tools:
	@command -v ruby >/dev/null && command -v php >/dev/null || { \
	  $(call apt_install,ruby php-cli,The LMS tests need Ruby and PHP); }

# ruff, then the grader's layers (import-linter's contracts in pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

test: lint sandbox-tools browser-tools postgres-tools lms-tools hub-tools
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not full" --durations=20

# Every catalogued and independent implementation of every assignment through the real
# pipeline (tests marked `full`); `make test` covers them with dry runs and a sample.
test-full: $(STAMP) sandbox-tools browser-tools
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup -m full --durations=10

# The whole hostile-content corpus (161 kinds) against plain nbgrader, surface by surface:
# _build/security/hostile-content.md, the README's numbers (about 16 minutes; make test-full
# hands in a sample that reaches every surface).
security-report: $(STAMP) browser-tools
	AUTOGRADER_PLAIN_CORPUS=all $(BIN)/python -m pytest -m full -s \
	  tests/grader/display/test_plain_nbgrader.py

test-browser: $(STAMP) browser-tools
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup tests/book/test_browser.py tests/book/test_book.py \
	  tests/book/test_attention_views.py tests/book/test_exercises_in_jupyterlab.py

bench: $(STAMP) sandbox-tools hub-tools
	$(BIN)/python benchmarks/sandbox_cost.py
	$(BIN)/python benchmarks/mha_speed.py
	$(BIN)/python benchmarks/grading_throughput.py --jobs $(JOBS)
	$(BIN)/python benchmarks/similarity_speed.py
	@# the hub's grading service under a class submitting at once (as root: local users)
	$(BIN)/python benchmarks/hub_load.py --jobs $(JOBS)

clean:
	rm -rf _build submitted autograded feedback reports gradebook.db grades.csv grades.json \
	  .autograder-cache .grading-*
