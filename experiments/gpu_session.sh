#!/usr/bin/env bash
# One lent GPU session, as run for the docs (docs/gpu.md): the prepared check, then a gomoku15
# training run with the time left, its network packed to come back.
#
#   bash experiments/gpu_session.sh OUT [CHECK_SECONDS] [TRAIN_SECONDS] [EXTRA gpu_check ARGS]
#
# OUT gets gpu_check.{json,md}, gpu_check.log, train.log and gomoku15_run.tar.part-* (the
# run directory without its train state and replay buffer, which are hundreds of MB: config,
# metrics, and each checkpoint's network and meta, enough for `--checkpoint` to play it;
# `cat gomoku15_run.tar.part-* | tar x` unpacks it). Every step is bounded by `timeout`, so
# the whole script ends within CHECK_SECONDS + TRAIN_SECONDS + about a minute.
set -u
out=${1:?usage: gpu_session.sh OUT [CHECK_SECONDS] [TRAIN_SECONDS] [gpu_check args]}
check_s=${2:-300}
train_s=${3:-240}
shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv \
    > "$out/versions.txt" 2>&1
python3 - <<'EOF' >> "$out/versions.txt" 2>&1
import importlib.metadata as md, jax
print(jax.devices())
for p in ("jax", "jaxlib", "flax", "optax", "chex", "orbax-checkpoint", "mctx", "pgx", "numpy"):
    try:
        print(p, md.version(p))
    except md.PackageNotFoundError:
        print(p, "missing")
EOF
timeout "$check_s" python3 experiments/gpu_check.py --out "$out" --no-progress \
    --budget-seconds $(( check_s - 45 )) "$@" > "$out/gpu_check.log" 2>&1
echo "gpu_check exit status $?" >> "$out/gpu_check.log"
tail -n 60 "$out/gpu_check.log"

run=/tmp/gomoku15_run
timeout "$train_s" python3 -m gomoku_jax train --preset gomoku15 --run-dir "$run" \
    --no-progress --set run.checkpoint_every=1 --set run.keep_checkpoints=1 \
    > "$out/train.log" 2>&1
echo "train exit status $? (124: stopped by the time limit, the run resumes with --resume)" \
    >> "$out/train.log"
tail -n 20 "$out/train.log"
if [ -d "$run" ]; then
    (cd /tmp && tar cf - --exclude='*/state' --exclude='*/previous' --exclude='*/tensorboard' \
        "$(basename "$run")") | split -b 15m - "$out/gomoku15_run.tar.part-"
fi
ls -la "$out"
