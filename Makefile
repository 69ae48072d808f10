# radscore: every target sets up its own environment (.venv) on first use.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.installed-stamp
export WANDB_MODE ?= offline
export HF_HUB_DISABLE_TELEMETRY := 1

.PHONY: install test samples stats train-ner

install: $(STAMP)

# Re-installs only when pyproject.toml changes; torch first so pip never pulls a CUDA build.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[train,dev]"
	touch $(STAMP)

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

samples: install
	$(PY) -m data build-samples

stats: install
	$(PY) -m data stats data/samples/ratener/all

# Train an NER model, test it on the test split and export it (checkpoints/<config stem>/export).
train-ner: CONFIG ?= configs/ner/iob_sample.yaml
train-ner: install
	$(PY) -m train ner fit --config $(CONFIG)
