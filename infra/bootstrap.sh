#!/usr/bin/env bash
# Create ./.venv and install SchedMate into it (editable). `--test` adds the test tools.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for c in python3.11 python3; do command -v "$c" >/dev/null 2>&1 && { PY="$c"; break; }; done
fi
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "SchedMate needs Python 3.11"'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned: where a local CPU build is offered (pip find-links) pip takes it; otherwise PyPI's
# manylinux build (CUDA, ~4 GB with its nvidia-* wheels; measured 2026-11-23) installs and runs on the CPU.
# Large wheels over a flaky link: pip resumes a broken download, and the install is tried again for about
# 9 minutes. (pip reports a full disk while downloading as "Connection interrupted": check `df` first.)
pipi() {
  local n
  for n in 1 2 3 4 5 6 7 8; do
    .venv/bin/python -m pip install -q --resume-retries 20 "$@" && return 0
    echo "pip install $* failed (attempt $n of 8); retrying in $((n * 15)) s" >&2
    sleep $((n * 15))
  done
  return 1
}
pipi torch==2.13.0
extras=""
# --test adds the test tools and the local LLM (llama.cpp compiles once, ~5-8 min; pip caches the wheel).
# GGML_NATIVE=OFF: the native AVX-512/AMX build of llama.cpp 0.3.36 segfaults on some CPUs here.
[ "${1:-}" = "--test" ] && extras="[test,llm]"
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
pipi -c infra/constraints.txt -e ".${extras}"
echo "SchedMate installed in .venv ($(.venv/bin/schedmate --help >/dev/null && echo ok))"
