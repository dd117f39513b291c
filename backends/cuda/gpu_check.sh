#!/usr/bin/env bash
# One command that checks flambeau's CUDA backend on a machine with an NVIDIA GPU:
#
#     bash backends/cuda/gpu_check.sh            (from the repository root; ~6-8 minutes on one H200)
#
# It needs python3 (3.11+) with numpy, scipy, pluggy, ml_dtypes, pytest, hypothesis, pybind11,
# setuptools and CuPy 14 (cupy-cuda12x or cupy-cuda13x); PyTorch-CUDA is optional (the benchmarks
# compare against it when present); pytest-xdist optional (the kit runs on 8 workers with it). It needs
# no network and no pip: the packages of this checkout are made importable in place (gpu_tools/
# install_tree.py writes their dist-info; the CPU backend's C++ is built in a scratch copy).
#
# Steps (GPU_CHECK_STEPS, default "env build tests kit bench"), each with its own time limit:
#   env    nvidia-smi, versions, flambeau.cuda's view of the machine, `flambeau info`
#   build  the CPU backend's C++ (for .cpu() and the tests that move tensors; skipped if it fails)
#   tests  backends/cuda/tests: the no-GPU tests, the test double's, and the `gpu`-marked ones
#   kit    the conformance kit on `cuda` (--flambeau-only-implemented), JUnit XML kept
#   bench  benchmarks/bench_cuda.py against PyTorch-CUDA (issue 17's cases), JSON kept
#
# Results go to $OUT (default $TMPDIR/flambeau-gpu-results): gpu_check.log, summary.json, tests.xml, kit.xml,
# bench.json (five files, under the device tool's limit of eight).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-${TMPDIR:-/tmp}/flambeau-gpu-results}"
PY="${PYTHON:-python3}"
STEPS="${GPU_CHECK_STEPS:-env build tests kit bench}"
mkdir -p "$OUT"
LOG="$OUT/gpu_check.log"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
SUMMARY="$OUT/summary.tsv.tmp"
: > "$SUMMARY"
START=$(date +%s)

step() {  # step NAME LIMIT COMMAND...: run with a time limit (SIGINT first: pytest still writes its reports)
    local name=$1 limit=$2; shift 2
    local t0=$(date +%s)
    echo "=== [$(( t0 - START )) s] $name (limit ${limit}s): $*"
    timeout -s INT -k 20 "$limit" "$@"
    local rc=$?
    local t1=$(date +%s)
    echo "=== $name: exit $rc in $(( t1 - t0 )) s"
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(( t1 - t0 ))" >> "$SUMMARY"
    return $rc
}

want() { [[ " $STEPS " == *" $1 "* ]]; }

cd "$ROOT"
FOLDERS=(core-tensor core-autograd backends/meta nn optim distributions backends/cuda)

build_cpu() {  # in a scratch copy: no pyproject.toml there, so any setuptools version builds it
    local tmp
    tmp=$(mktemp -d)
    cp -r backends/cpu/csrc backends/cpu/setup.py "$tmp"/ || return 1
    (cd "$tmp" && FLAMBEAU_BUILD_JOBS="$(nproc)" "$PY" setup.py -q build_ext --inplace) || return 1
    cp "$tmp"/flambeau_cpu/_C*.so backends/cpu/src/flambeau_cpu/ || return 1
}

export PY
export -f build_cpu
if want build && step build 240 bash -c build_cpu; then
    FOLDERS=(core-tensor core-autograd backends/cpu backends/meta nn optim distributions backends/cuda)
fi
SITE="$(mktemp -d)/site"
PYTHONPATH="$("$PY" backends/cuda/gpu_tools/install_tree.py "$SITE" "${FOLDERS[@]}")" || exit 1
export PYTHONPATH

if want env; then
    step env 120 bash -c "nvidia-smi; $PY -c 'import sys, numpy, cupy; print(sys.version); print(\"numpy\", numpy.__version__, \"cupy\", cupy.__version__)'; \
        $PY -c 'import torch; print(\"torch\", torch.__version__, torch.cuda.is_available())' || echo 'torch: not importable'; \
        $PY -c 'import flambeau as fb, flambeau.cuda as c; print(\"available\", c.is_available(), \"count\", c.device_count(), c.get_device_properties(0)); x = fb.arange(6.0, device=\"cuda\").reshape(2, 3); print(x, x.sum(1))'; \
        $PY -m flambeau info"
fi

XDIST=()
"$PY" -c "import xdist" 2>/dev/null && XDIST=(-n 8)

if want tests; then
    step tests 150 "$PY" -m pytest -q -p no:cacheprovider -rs backends/cuda/tests --junitxml="$OUT/tests.xml" "${XDIST[@]}"
fi

if want kit; then
    step kit 270 "$PY" -m pytest -q -p no:cacheprovider --pyargs flambeau.testing --flambeau-backend cuda \
        --flambeau-only-implemented --junitxml="$OUT/kit.xml" "${XDIST[@]}" -o junit_logging=no
fi

if want bench; then
    step bench 240 bash -c "cd benchmarks && $PY bench_cuda.py --rounds 3 --json '$OUT/bench.json'"
fi

"$PY" - "$SUMMARY" "$OUT" <<'EOF'
import json, os, sys
import xml.etree.ElementTree as ET

summary_tsv, out = sys.argv[1], sys.argv[2]
result = {"steps": {}}
for line in open(summary_tsv):
    name, rc, seconds = line.rstrip("\n").split("\t")
    result["steps"][name] = {"exit": int(rc), "seconds": int(seconds)}
for name in ("tests", "kit"):
    path = os.path.join(out, f"{name}.xml")
    if os.path.exists(path):
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        failed = []
        for suite in ET.parse(path).getroot().iter("testsuite"):
            for k in counts:
                counts[k] += int(suite.get(k, 0))
            for case in suite.iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failed.append(case.get("name"))
        counts["failed_cases"] = failed[:400]
        result[name] = counts
bench = os.path.join(out, "bench.json")
if os.path.exists(bench):
    result["bench"] = json.load(open(bench))
json.dump(result, open(os.path.join(out, "summary.json"), "w"), indent=1)
print(json.dumps({k: v for k, v in result.items() if k != "bench"}, indent=1)[:4000])
EOF
rm -f "$SUMMARY"
echo "=== gpu_check done in $(( $(date +%s) - START )) s; results in $OUT"
