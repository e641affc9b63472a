#!/usr/bin/env bash
# `nox -s gpu` on an offline GPU machine, from the repository root, with flash-attn:
#   OUT=/somewhere bash plugins/exllama/tests/gpu/run_on_device.sh
# .whl/ must hold wheels for what the machine lacks (nox and its needs, exllamav2 and
# lm-format-enforcer with theirs, flash-attn, hatchling and editables for the editable
# installs): pip installs from there alone. The log, the benchmark section and the timing
# land in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/ferrule-gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/.whl" PIP_DISABLE_PIP_VERSION_CHECK=1
export FERRULE_GPU_FLASH_ATTN=1 MAX_JOBS=${MAX_JOBS:-16} TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/machine.txt"
# Into the Python that runs nox, whose packages the session sees: exllamav2 then compiles
# its extension (minutes) while nox builds the session, not after.
python3 -m pip install -q nox exllamav2 lm-format-enforcer
python3 -c "import exllamav2.ext" > "$OUT/extension.log" 2>&1 &
start=$(date +%s)
timeout "${GPU_TIMEOUT:-480}" python3 -m nox -s gpu -- -rA --durations=30 -p no:cacheprovider \
    "$@" 2>&1 | tee "$OUT/gpu.log"
status=${PIPESTATUS[0]}
echo "nox -s gpu: exit $status after $(($(date +%s) - start)) s" | tee -a "$OUT/gpu.log"
cp bench/results/exllama.md "$OUT/" 2>/dev/null
exit "$status"
