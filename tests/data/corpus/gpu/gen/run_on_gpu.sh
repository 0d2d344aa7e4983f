# On a GPU machine, from the repository root (PyTorch, transformers and Lightning installed; the package's own
# dependencies, e.g. from wheels carried in .whl/, for the NVML check). Logs and results go to $OUT.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if ls .whl/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
fi
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/schedmate
export PYTHONPATH=/tmp/site:/tmp/pkg PYTHONUNBUFFERED=1
(cd /tmp && python3 -m pytest -c /dev/null --rootdir "$OLDPWD" -q -p no:cacheprovider "$OLDPWD/tests/test_nvml.py" -rs)
python3 tests/data/corpus/gpu/gen/nvml_check.py | tee "$OUT/nvml_check.txt"
cd tests/data/corpus/gpu/gen
for j in oom assert nan hf lit; do echo "== $j"; timeout 120 python3 $j.py > "$OUT/g_$j.log" 2>&1; echo "rc=$?"; done
echo "== nccl_dup"; timeout 90 torchrun --nproc_per_node=2 nccl_dup.py > "$OUT/g_nccl.log" 2>&1; echo "rc=$?"
