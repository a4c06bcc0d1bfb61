#!/usr/bin/env bash
# One lent GPU session, as run for the docs (docs/gpu.md): the prepared check, then training
# runs with the time left, each packed to come back.
#
#   bash experiments/gpu_session.sh OUT CHECK_SECONDS [SECONDS NAME "TRAIN ARGS" [PACK]]...
#   bash experiments/gpu_session.sh $OUT 150 \
#       270 finetune "--preset gomoku15_finetune" all \
#       120 muzero "--algo muzero --preset muzero_gomoku15 --set selfplay.bootstrap_iterations=1"
#
# Each run is `python3 -m gomoku_jax train ARGS --run-dir /tmp/NAME --no-progress` under
# `timeout SECONDS` (124 in its log: stopped by the limit; the run resumes with --resume),
# with `run.checkpoint_every=1 run.keep_checkpoints=1` unless ARGS set them. PACK is "all"
# (config, metrics and each checkpoint's network and meta: enough for `--checkpoint` to play
# it) or "metrics" (the default: config, metrics and summary alone); a run's train state and
# replay buffer, hundreds of MB, never come back.
#
# OUT gets gpu_check.json, gpu_check.md and session.tar.part-* (versions.txt, every log and
# the packed runs; `cat session.tar.part-* | tar x` unpacks it): few files, since a lent
# machine returns at most 8. Every step is bounded by `timeout`, so the script ends within
# CHECK_SECONDS + the runs' SECONDS + about a minute.
set -u
out=${1:?usage: gpu_session.sh OUT CHECK_SECONDS [SECONDS NAME "TRAIN ARGS" [PACK]]...}
check_s=${2:?usage: gpu_session.sh OUT CHECK_SECONDS [SECONDS NAME "TRAIN ARGS" [PACK]]...}
shift 2
work=$(mktemp -d)
mkdir -p "$out" "$work/session"
export PYTHONUNBUFFERED=1
{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
    python3 - <<'EOF'
import importlib.metadata as md, jax
print(jax.devices())
for p in ("jax", "jaxlib", "flax", "optax", "chex", "orbax-checkpoint", "mctx", "pgx", "numpy"):
    try:
        print(p, md.version(p))
    except md.PackageNotFoundError:
        print(p, "missing")
EOF
} > "$work/session/versions.txt" 2>&1
cat "$work/session/versions.txt"

if [ "$check_s" -gt 0 ]; then
    timeout "$check_s" python3 experiments/gpu_check.py --out "$out" --no-progress \
        --budget-seconds $(( check_s - 45 )) > "$work/session/gpu_check.log" 2>&1
    echo "gpu_check exit status $?" >> "$work/session/gpu_check.log"
    tail -n 40 "$work/session/gpu_check.log"
fi

while [ $# -ge 3 ]; do
    seconds=$1 name=$2 args=$3 pack=metrics
    shift 3
    if [ $# -ge 1 ] && { [ "$1" = all ] || [ "$1" = metrics ]; }; then pack=$1; shift; fi
    run=$work/$name
    # shellcheck disable=SC2086  # ARGS is a list of words
    timeout "$seconds" python3 -m gomoku_jax train --run-dir "$run" --no-progress \
        --set run.checkpoint_every=1 --set run.keep_checkpoints=1 $args \
        > "$work/session/$name.log" 2>&1
    echo "train exit status $? (124: stopped by the time limit)" >> "$work/session/$name.log"
    tail -n 8 "$work/session/$name.log"
    if [ -d "$run" ]; then
        if [ "$pack" = all ]; then
            (cd "$work" && tar cf "session/$name.tar" --exclude='*/state' \
                --exclude='*/previous' --exclude='*/tensorboard' "$name")
        else
            (cd "$work" && tar cf "session/$name.tar" --exclude='*/checkpoints' \
                --exclude='*/tensorboard' "$name")
        fi
    fi
done
(cd "$work" && tar cf - session) | split -b 15m - "$out/session.tar.part-"
ls -la "$out"
