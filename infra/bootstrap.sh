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
# torch first: 2.13.0 resolves to the local CPU build; a plain requirement would pull GBs of CUDA wheels.
.venv/bin/python -m pip install -q torch==2.13.0
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"
.venv/bin/python -m pip install -q -c infra/constraints.txt -e ".${extras}"
echo "SchedMate installed in .venv ($(.venv/bin/schedmate --help >/dev/null && echo ok))"
