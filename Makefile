# CUDA zero-copy memory course: set-up, lab, tests.
#
#   make lab        set everything up, open lesson 00 in JupyterLab
#   make test       set everything up, run unit tests and every lesson (nbval)
#
# Everything is installed into a virtual environment in .venv; only Python 3
# and make are needed. Run `make help` for the full list.

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

# Extra arguments for pytest, e.g. `make test PYTEST_ARGS="-k bandwidth -x"`.
PYTEST_ARGS ?=
PYTEST := $(VPY) -m pytest tests lessons --nbval-lax --nbval-current-env

# Reinstall, whatever the timestamps say, when .venv/bin/python is missing or
# broken (e.g. the system Python it points to was removed), or when the stamp
# was written for another mode (e.g. a GPU has appeared since).
VENV_WORKS     := $(shell $(VPY) -c '' >/dev/null 2>&1 && echo yes)
INSTALLED_MODE := $(shell cat $(STAMP) 2>/dev/null)
ifneq ($(VENV_WORKS) $(INSTALLED_MODE),yes $(MODE))
$(STAMP): FORCE
endif

.PHONY: help setup lab test test-gpu record clean FORCE

help:
	@echo "CUDA zero-copy memory course"
	@echo
	@echo "  make lab        set up .venv and open lessons/00-start-here.ipynb in JupyterLab"
	@echo "  make test       set up .venv, run tests/ and every lesson under nbval"
	@echo "  make test-gpu   like test, but GPU tests fail instead of skip without a GPU"
	@echo "  make record     record a full measurement set into data/ (needs a GPU)"
	@echo "  make clean      remove .venv and caches"
	@echo
	@echo "This machine: $(MODE) mode ($$(bash .ci/detect-gpu --reason))."

# ---------------------------------------------------------------------------
# Set-up: create .venv if needed and install the course into it (editable).
# ---------------------------------------------------------------------------
$(STAMP): pyproject.toml Makefile .ci/detect-gpu
	@if ! $(VPY) -c '' >/dev/null 2>&1; then \
	    echo "Creating the virtual environment $(VENV) ($$($(PYTHON) --version 2>&1))"; \
	    rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); \
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

setup: $(STAMP)
	@$(if $(JUST_INSTALLED),:,echo "$(VENV) is up to date ($(MODE) mode): nothing to install.")

# ---------------------------------------------------------------------------
# What learners, instructors and CI run.
# ---------------------------------------------------------------------------
# Options for JupyterLab, e.g. to serve a classroom:
#   make lab LAB_ARGS="--ip 0.0.0.0 --port 9000 --no-browser"
LAB_ARGS ?=

# The server's root is the repository (so helpers/kernels/*.cu open too); lesson 00 opens first.
lab: setup
	$(VENV)/bin/jupyter lab $(LAB_ARGS) $(if $(filter 0,$(shell id -u)),--allow-root) \
	    --ServerApp.root_dir="$(CURDIR)" lessons/00-start-here.ipynb

# One pytest run: unit tests plus every lessons/*.ipynb (collected by nbval).
# Exit status is pytest's own, so "no tests collected" (5) fails too.
test: setup
	$(PYTEST) $(PYTEST_ARGS)

# Same, on a GPU machine: tests that need a GPU fail instead of skipping.
test-gpu: setup
	ZC_REQUIRE_GPU=1 $(PYTEST) --durations=0 $(PYTEST_ARGS)

record: setup
	$(VPY) -m helpers record

clean:
	rm -rf $(VENV) .pytest_cache .cache build *.egg-info
	find . \( -name .git -o -name $(VENV) \) -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +

FORCE:
