# radscore: every target sets up its own environment (.venv) on first use.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.installed-stamp
export HF_HUB_DISABLE_TELEMETRY := 1
.DEFAULT_GOAL := help

.PHONY: help install test demo samples stats train-ner bench gpu-check publish train-bleurt train-reward tune-weights ablations rehearse results

# `make` alone prints this: one line per target from its `## ` comment (description | variables),
# then the defaults of its target-specific variables (`target: VAR ?= value`).
help: ## this list (plain `make` prints it too)
	@echo "make <target> [VARIABLE=value ...]"
	@awk 'BEGIN { FS = " *## *" } \
	  /^[a-z][a-z-]*: *[A-Z_]+ *\?=/ { t = substr($$0, 1, index($$0, ":") - 1); v = substr($$0, index($$0, ":") + 1); \
	    sub(/^ +/, "", v); sub(/ *\?= */, "=", v); extra[t] = extra[t] " " v; next } \
	  /^[a-z][a-z-]*:.*## / { t = substr($$1, 1, index($$1, ":") - 1); d = $$2; v = ""; i = index(d, " | "); \
	    if (i) { v = substr(d, i + 3); d = substr(d, 1, i - 1) } \
	    v = extra[t] " " v; sub(/^ +/, "", v); sub(/ +$$/, "", v); printf "  %-14s %s\n", t, d; if (v != "") printf "  %-14s %s\n", "", v }' \
	  $(MAKEFILE_LIST)

install: $(STAMP) ## set up .venv: torch (CPU build) first, then the project with its train and dev extras; every target but help runs it | TORCH_SPEC=torch==2.13.0 PYTHON=python3 VENV=.venv

# Re-installs only when pyproject.toml changes; torch first so pip never pulls a CUDA build.
$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[train,dev]"
	# RadEval, for the adapter's tests only, in its own folder (tests/radscore/test_integrations.py
	# appends it to sys.path): its declared dependencies pin medspacy (numpy<2), which would break
	# this environment, and its wheel installs a top-level `tests` package that would shadow ours.
	# The parts the adapter uses (metric base class, registry, RadEval, make_reward_fn) import only
	# what is already here, and RadGraph's vendored code (the comparators' rehearsal) the four packages
	# named beside it (RadEval declares them; h5py is imported by the vendored AllenNLP's ELMo).
	$(PY) -m pip install --quiet --no-deps --upgrade --target $(VENV)/radeval-lib "radeval==2.2.1" \
		"dotmap==1.3.30" "jsonpickle==4.1.4" "appdirs==1.4.4" "h5py==3.16.0"
	touch $(STAMP)

# Two pytest-xdist workers, handed one file at a time, longest first (tests/ordering.py); each
# worker gets its share of the cores. TEST_WORKERS=0 runs everything in one process. Python keeps its
# bytecode even where the environment sets PYTHONDONTWRITEBYTECODE: otherwise every worker rewrites
# and compiles every test file again (`pytest --collect-only`: 24 s, 11 s with the cache).
TEST_WORKERS ?= 2
test: install ## the test suite on pytest-xdist workers, one file at a time, longest first | TEST_WORKERS=2 (0: one process) PYTEST_ARGS="-m 'not slow'" (any pytest options)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The main job on the embedded default (SYNTHETIC sample benchmark): NER, TPE, held-out table, plots.
demo: install ## the main job on the SYNTHETIC sample benchmark: NER, TPE, held-out table, plots | DEMO_ARGS="--ner-epochs 4 --n-trials 300" (python -m train demo --help)
	$(PY) -m train demo $(DEMO_ARGS)

# After editing data/samples/reports.jsonl: validate, (re)write the corpus split, rebuild the NER files.
samples: install ## after editing data/samples/reports.jsonl: validate it, rewrite the corpus split, rebuild the NER files
	$(PY) -m data validate --consistency data/samples/reports.jsonl
	$(PY) -m data split
	$(PY) -m data build-samples

stats: install ## statistics of the sample corpus and of its NER files
	$(PY) -m data corpus-stats data/samples/reports.jsonl
	$(PY) -m data stats data/samples/ratener/all

# Training: `python -m train fit` with one --config per file of CONFIG, in order (an overlay after its
# base); the run folder is checkpoints/<last config's path under configs/>, with its export in export/.
train-ner: CONFIG ?= configs/ner/iob_sample.yaml
train-ner: install ## train an NER model, test it and export it (checkpoints/ner/<name>/export) | CONFIG="base.yaml overlay.yaml" ARGS="--trainer.max_epochs=2"
	$(PY) -m train fit $(foreach c,$(CONFIG),--config $(c)) $(ARGS)

# radscore.RaTEScore against the released ratescore package (own venv, made on first use).
bench: install ## radscore.RaTEScore against the released ratescore package (trains the sample NER first when missing)
	test -f checkpoints/ner/iob_sample/export/radscore_manifest.json || $(MAKE) train-ner
	$(PY) -m benchmarks.scoring.bench_ratescore

# On your own CUDA machine: training memory per paper model family, the rehearsal on the GPU and scoring
# speed, JSONs named after the GPU in benchmarks/results/. Without a CUDA device it says so and fails.
gpu-check: install ## on a machine with an NVIDIA GPU: training memory per paper model, the rehearsal, scoring speed (benchmarks/results/) | GPU_CHECK_ARGS="--only memory"
	$(PY) -m benchmarks.gpu_check $(GPU_CHECK_ARGS)

train-bleurt: CONFIG ?= configs/bleurt/sample.yaml
train-bleurt: install ## fine-tune ClinicalBLEURT (SYNTHETIC rows, generated when missing), test, export | ARGS="--trainer.max_epochs=1"
	$(PY) -m data synth --if-missing
	$(PY) -m train fit $(foreach c,$(CONFIG),--config $(c)) $(ARGS)

train-reward: CONFIG ?= configs/reward/sample.yaml
train-reward: install ## train ER²Score (SYNTHETIC RadCliQ pairs, generated when missing), test, export | CONFIG="configs/reward/paper_llama3.yaml configs/reward/paper_llama3/phi_2.yaml" ARGS="--model.lam=0.5"
	$(PY) -m data synth --if-missing
	$(PY) -m train fit $(foreach c,$(CONFIG),--config $(c)) $(ARGS)

# Learn RaTEScore's W and p with TPE (SYNTHETIC sample by default, generated when missing); a config
# that uses the sample NER export trains it first when it is missing. TUNE_ARGS="--workers 2" etc.;
# CONFIG="base.yaml overlay.yaml" composes several configs in order.
tune-weights: CONFIG ?= configs/tune/sample.yaml
tune-weights: install ## learn RaTEScore's W and p with TPE (trains the sample NER first when the config needs it) | TUNE_ARGS="--workers 2"
	@if grep -q "checkpoints/ner/iob_sample/export" $(CONFIG) && \
	    [ ! -f checkpoints/ner/iob_sample/export/radscore_manifest.json ]; then \
	    $(MAKE) train-ner CONFIG=configs/ner/iob_sample.yaml; fi
	$(PY) -m train tune-weights $(foreach c,$(CONFIG),--config $(c)) $(TUNE_ARGS)

# Upload an export with a model card: make publish EXPORT=checkpoints/ner/iob_sample/export REPO_ID=you/name [ARGS=--dry-run]
publish: install ## upload an export with a model card | EXPORT=checkpoints/ner/iob_sample/export REPO_ID=<user/name> (required) ARGS="--dry-run --private" (python -m train publish options)
	test -n "$(REPO_ID)" || (echo "usage: make publish EXPORT=<export folder> REPO_ID=<user/name> [ARGS=--dry-run]" && false)
	$(PY) -m train publish $(or $(EXPORT),checkpoints/ner/iob_sample/export) --repo-id $(REPO_ID) $(ARGS)

# The papers' ablation tables beside ours, every table the sample profile can run (SYNTHETIC data and
# the shipped sample; rows needing the papers' models say so): checkpoints/ablations/sample/<table>.{md,csv,json}.
# Finished runs are reused; missing ones are trained first (35 min on 2 cores from nothing, 17 with the sample NER and reward
# runs done, measured when the ER²Score sample was LoRA on 600 rows; longer since it is a 32-min full fine-tune on 1,800 rows).
# ABLATIONS_ARGS="--table er2-lambda" etc.; the paper profile: python -m train ablations --table all --profile paper
ablations: install ## the papers' ablation tables beside ours, sample profile (missing runs trained first) | ABLATIONS_ARGS="--table all"
	$(PY) -m data synth --if-missing
	$(PY) -m train ablations --profile sample $(or $(ABLATIONS_ARGS),--table all)

# Every paper config end to end on same-family stand-ins, offline (REHEARSAL; report in
# checkpoints/rehearsal/report.md). REHEARSE_ARGS="--only 'configs/ner/*'" or "--fast".
# RadEval's folder is on the path so that the comparators' stages run RadEval on their stand-ins.
rehearse: install ## every paper config end to end on offline stand-ins (checkpoints/rehearsal/report.md) | REHEARSE_ARGS=--fast or "--only 'configs/ner/*'" VENV=.venv
	PYTHONPATH="$(VENV)/radeval-lib$${PYTHONPATH:+:$$PYTHONPATH}" $(PY) -m train rehearse $(REHEARSE_ARGS)

# docs/results.md from benchmarks/results/*.json (reads the JSONs only; tests/test_results_page.py checks the page).
results: install ## regenerate docs/results.md from benchmarks/results/*.json (python -m benchmarks.report)
	$(PY) -m benchmarks.report
