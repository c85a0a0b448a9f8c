# CUDA zero-copy memory course: set-up, lab, tests.
#
#   make lab        set everything up, open lesson 00 in JupyterLab
#   make test       set everything up, run unit tests and every lesson (nbval)
#
# Everything is installed into a virtual environment in .venv; Python 3, make
# and a C++ compiler are needed. Run `make help` for the full list.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
# The stamp is newer than pyproject.toml, this Makefile and the GPU detector
# once .venv holds what they ask for; it contains the mode it was installed for.
STAMP  := $(VENV)/.installed

# Live or replay? Decided in one place, .ci/detect-gpu.
# Override with `make test MODE=replay` (e.g. if PyCUDA fails to build).
MODE := $(shell bash .ci/detect-gpu)
ifeq ($(MODE),live)
  EXTRAS := lab,test,gpu
else
  EXTRAS := lab,test
endif
# `make book`, `make slides` and `make test-browser` add their own extras (pyproject.toml).
ifneq ($(filter book,$(MAKECMDGOALS)),)
  EXTRAS := $(EXTRAS),book
endif
ifneq ($(filter test-browser,$(MAKECMDGOALS)),)
  EXTRAS := $(EXTRAS),browser
endif
ifneq ($(filter slides test-browser,$(MAKECMDGOALS)),)
  EXTRAS := $(EXTRAS),slides
endif

# Extra arguments for pytest, e.g. `make test PYTEST_ARGS="-k bandwidth -x"`.
PYTEST_ARGS ?=
PYTEST := $(VPY) -m pytest tests lessons --ignore=lessons/zh --nbval-lax --nbval-current-env
# `make test` spreads the test files and lessons over JOBS worker processes (pytest-xdist, --dist loadfile: each
# file, so each lesson's cells, runs whole and in order on one worker; only the tests in tests/conftest.py's
# CASES_APART spread their cases): by default one per CPU this process may use, at most 4 in replay and 8 in
# live mode (the measurement queue gives each timed section the GPU alone); `make test JOBS=1` runs everything in
# one process (as pdb needs).
ifeq ($(MODE),live)
  JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n > 8 ? 8 : n )))
else
  JOBS ?= $(shell n=$$(nproc 2>/dev/null || sysctl -n hw.logicalcpu 2>/dev/null || echo 1); echo $$(( n > 4 ? 4 : n )))
endif
PARALLEL = $(if $(filter-out 0 1,$(JOBS)),-n $(JOBS) --dist loadfile)
# Extra arguments for JupyterLab, e.g. `make lab LAB_ARGS="--no-browser --port 9000"`.
LAB_ARGS ?=
# The edition: `make lab ZC_LANG=zh` opens the Chinese lessons (lessons/zh/, built from the English by
# `python -m helpers sync`), and what helpers say is in Chinese too (helpers.i18n reads ZC_LANG).
ZC_LANG ?= en
FIRST_LESSON := $(if $(filter zh zh_CN zh-CN,$(ZC_LANG)),lessons/zh/00-start-here.ipynb,lessons/00-start-here.ipynb)

# Reinstall, whatever the timestamps say, when .venv/bin/python is missing or
# broken (e.g. the system Python it points to was removed), when a package the
# goal needs is missing or too old (e.g. after `pip uninstall nbval`; checked by
# .ci/check-venv, only for goals that use .venv), or when the stamp was written
# for another mode (e.g. a GPU has appeared since).
ifneq ($(filter setup lab test test-gpu test-browser test-launch lint slides record book,$(MAKECMDGOALS)),)
VENV_WORKS     := $(shell $(VPY) .ci/check-venv $(EXTRAS) >/dev/null 2>&1 && echo yes)
INSTALLED_MODE := $(shell cat $(STAMP) 2>/dev/null)
ifneq ($(VENV_WORKS) $(INSTALLED_MODE),yes $(MODE))
$(STAMP): FORCE
endif
endif

.PHONY: help setup lab test test-gpu test-browser test-launch lint slides book record clean FORCE

help:
	@echo "CUDA zero-copy memory course"
	@echo
	@echo "  make setup      only set up: create .venv, install the course, install the git filter"
	@echo "  make lab        set up .venv and open lessons/00-start-here.ipynb in JupyterLab"
	@echo "  make test       set up .venv, run tests/ and every lesson under nbval"
	@echo "  make test-gpu   like test, but GPU tests fail instead of skip without a GPU"
	@echo "  make book       execute every lesson and build the website: build/book/index.html (中文: build/book/zh/)"
	@echo "  make test-browser  run lessons 00, 05 and 09 in JupyterLab in Chromium (Playwright)"
	@echo "  make test-launch   run lessons 00 and 06 in a fresh environment set up as Binder and Colab do"
	@echo "  make lint       spelling, links, notebook metadata, schemas (also part of make test)"
	@echo "  make slides     a reveal.js deck per lesson, executed: build/slides/, build/slides/zh/ (SLIDES=\"00 06\")"
	@echo "  make record     record a full measurement set into data/ (needs a GPU)"
	@echo "  make clean      remove .venv, build/, caches and the CPU backend's kernel cache"
	@echo
	@echo "  make lab ZC_LANG=zh                              the Chinese edition (中文版): lessons/zh/"
	@echo "  make lab LAB_ARGS=\"--no-browser --port 9000\"   pass arguments to JupyterLab"
	@echo "  make test PYTEST_ARGS=\"-x -k bandwidth\"          pass arguments to pytest"
	@echo "  make test JOBS=1                                 one process (default: one worker per CPU, at most 4; 8 live)"
	@echo
	@echo "This machine: $(MODE) mode ($$(bash .ci/detect-gpu --reason))."

# ---------------------------------------------------------------------------
# Set-up: create .venv if needed and install the course into it (editable).
# ---------------------------------------------------------------------------
$(STAMP): pyproject.toml Makefile .ci/detect-gpu .ci/check-venv
	@if ! $(VPY) -c '' >/dev/null 2>&1; then \
	    echo "Creating the virtual environment $(VENV) ($$($(PYTHON) --version 2>&1))"; \
	    rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); \
	elif ! problems=$$($(VPY) .ci/check-venv $(EXTRAS) 2>&1); then \
	    echo "Repairing $(VENV), which lacks what this needs:"; echo "$$problems" | head -5 | sed 's/^/  /'; \
	fi
ifeq ($(MODE),live)
	@echo "Live mode ($$(bash .ci/detect-gpu --reason)): installing PyCUDA; the course will run live on this GPU."
else
	@echo "Replay mode ($$(bash .ci/detect-gpu --reason)): the course will show measurements recorded on a real GPU."
endif
	@echo "Installing the course and its dependencies into $(VENV) (first time: a few minutes)..."
	@start=$$SECONDS; \
	$(VPY) -m pip install --quiet --disable-pip-version-check -e ".[$(EXTRAS)]" && \
	echo "Installed in $$((SECONDS - start)) s."
	@echo "$(MODE)" > $@
	$(eval JUST_INSTALLED := yes)

# A C++ compiler is needed by the CPU backend (lessons 05, 09, 10, 14 and its tests):
# `make test` stops without one, `make lab` warns. The message is the backend's own.
FIND_CXX := $(VPY) -c 'import sys; from helpers.cpu.compiler import find_compiler, CxxCompilerNotFoundError as E; exec("try: find_compiler()\nexcept E as e: sys.exit(str(e))")'

# JupyterLab records when each cell ran (saved in the notebook), so `python -m helpers times` can measure how long
# a learner spent on each lesson.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings

setup: $(STAMP)
	@$(if $(JUST_INSTALLED),:,echo "$(VENV) is up to date ($(MODE) mode): nothing to install.")
	@mkdir -p $(LAB_SETTINGS) && cp .ci/lab-overrides.json $(LAB_SETTINGS)/overrides.json
	@$(FIND_CXX) || echo "Warning: without a C++ compiler the CPU backend's cells and tests fail."
	@bash .ci/git-filter install $(VPY)

# ---------------------------------------------------------------------------
# What learners, instructors and CI run.
# ---------------------------------------------------------------------------
# Options for JupyterLab, e.g. to serve a classroom:
#   make lab LAB_ARGS="--ip 0.0.0.0 --port 9000 --no-browser"
LAB_ARGS ?=

# The server's root is the repository (so helpers/kernels/*.cu open too); lesson 00 opens first.
lab: setup
	$(VENV)/bin/jupyter lab $(LAB_ARGS) --ContentsManager.post_save_hook=helpers.tools.notebook_git.refresh_after_save \
	    $(if $(filter 0,$(shell id -u)),--allow-root) --ServerApp.root_dir="$(CURDIR)" $(FIRST_LESSON)

# One pytest run: unit tests plus both editions: every lessons/*.ipynb under nbval, and every lessons/zh/*.ipynb run
# once by tests/test_i18n_outputs.py, which fails on a cell's error as nbval does and on English in its outputs.
# Exit status is pytest's own, so "no tests collected" (5) fails too. ZC_SETUP_EXTRAS tells tests/test_setup.py
# which extras this set-up installed (an offline GPU machine may install test,gpu without JupyterLab).
test: setup
	@$(FIND_CXX)
	ZC_SETUP_EXTRAS=$(EXTRAS) $(PYTEST) $(PARALLEL) $(PYTEST_ARGS)

# Same, on a GPU machine: tests that need a GPU fail instead of skipping.
test-gpu: setup
	ZC_REQUIRE_GPU=1 ZC_SETUP_EXTRAS=$(EXTRAS) $(PYTEST) --durations=0 $(PYTEST_ARGS)

# The website of the executed lessons (Jupyter Book); entry page build/book/index.html.
book: setup
	@start=$$SECONDS; $(VPY) -m helpers book && echo "Built the book in $$((SECONDS - start)) s: open build/book/index.html"

# Lessons 00, 05 and 09 in JupyterLab (started by `make lab`), driven in Chromium by
# Playwright; skips, saying why, without a browser. Screenshots of failures: build/browser-failures/.
test-browser: setup
	ZC_BROWSER_TESTS=1 $(VPY) -m pytest tests/browser -p no:cacheprovider $(PYTEST_ARGS)

record: setup
	$(VPY) -m helpers record

# Spelling (codespell, word list .ci/codespell-words.txt), links and anchors, notebook metadata, and the schemas of
# CITATION.cff, the workflows and the issue forms (helpers/tools/lint.py).
lint: setup
	$(VPY) -m helpers.tools.lint

# One reveal.js deck per lesson (nbconvert --to slides), executed in this machine's mode: build/slides/.
# `make slides SLIDES="00 06"` converts some lessons; SLIDES_ARGS="--no-execute" keeps the code without outputs.
SLIDES ?=
SLIDES_ARGS ?=
slides: setup
	$(VPY) -m helpers.tools.slides $(SLIDES_ARGS) $(SLIDES) && echo "Open build/slides/index.html"

# A fresh virtual environment holding only what Binder's and Colab's set-up give (the course, pip-installed by
# helpers/tools/colab.py, and a Jupyter kernel) runs lessons 00 and 06 in replay (tests/test_launch.py; about a minute).
test-launch: setup
	ZC_LAUNCH_TESTS=1 $(VPY) -m pytest tests/test_launch.py -p no:cacheprovider -rs $(PYTEST_ARGS)

# The CPU backend's kernel caches lie outside the clone: the learner's (ZC_CPU_CACHE) and the one
# the tests keep between sessions (ZC_TEST_CPU_CACHE, tests/conftest.py). Their libraries (<hash>.so
# or .dylib, with .sha256 and .lock files) are removed, and each folder if nothing else is in it.
CPU_CACHE = $${ZC_CPU_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/zero-copy-course/cpu}
CPU_TEST_CACHE = $${ZC_TEST_CPU_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/zero-copy-course/cpu-tests}

clean:
	@bash .ci/git-filter uninstall
	rm -rf $(VENV) .pytest_cache .cache build *.egg-info
	find . \( -name .git -o -name $(VENV) \) -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
	@for cache in "$(CPU_CACHE)" "$(CPU_TEST_CACHE)"; do if [ -d "$$cache" ]; then \
	    find "$$cache" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{16,64}\.(so|dylib|sha256|lock)' -delete; \
	    rmdir "$$cache" 2>/dev/null && echo "Removed the CPU kernel cache $$cache." \
	        || echo "Removed the CPU kernel cache's libraries from $$cache (other files there were kept)."; \
	fi; done

FORCE:
