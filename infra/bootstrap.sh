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

# Disk first. A fresh install takes about 6.3 GB in .venv (measured 2026-11-28: torch with its nvidia-* wheels
# ~4 GB, the rest ~2.2 GB) plus pip's unpacked wheels under TMPDIR while it installs. A full disk makes every
# pip attempt fail at once, so say so before starting and name the directories to look at.
need_mb="${SCHEDMATE_BOOTSTRAP_MIN_FREE_MB:-7000}"
free_mb() { df -Pm "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
disk_full_help() {
  echo "bootstrap: not enough free disk for the install ($1)." >&2
  echo "  Free at least ${need_mb} MB on the filesystem of $(pwd) and of ${TMPDIR:-/tmp} (df -h shows them):" >&2
  echo "  old checkouts' .venv directories (about 6 GB each) and ~/.cache/pip are the usual culprits." >&2
  echo "  Or point TMPDIR at a larger filesystem. SCHEDMATE_BOOTSTRAP_MIN_FREE_MB=$need_mb sets this check's threshold." >&2
}
if ! { [ -x .venv/bin/python ] && .venv/bin/python -c 'import torch' >/dev/null 2>&1; }; then
  for d in . "${TMPDIR:-/tmp}"; do
    f="$(free_mb "$d")"
    if [ -n "$f" ] && [ "$f" -lt "$need_mb" ]; then
      disk_full_help "$f MB free under $d, $need_mb MB needed"
      exit 1
    fi
  done
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned: where a local CPU build is offered (pip find-links) pip takes it; otherwise PyPI's
# manylinux build (CUDA, ~4 GB with its nvidia-* wheels; measured 2026-11-23) installs and runs on the CPU.
# Large wheels over a flaky link: pip resumes a broken download, and the install is tried again for about
# 9 minutes. A full disk is not retried: it fails the same way every time.
rm_log() { [ "$log" = /dev/null ] || rm -f "$log"; }
pipi() {
  local n log
  log="$(mktemp 2>/dev/null || echo /dev/null)"  # a full disk may refuse even this
  for n in 1 2 3 4 5 6 7 8; do
    if .venv/bin/python -m pip install -q --resume-retries 20 "$@" 2>"$log"; then
      cat "$log" >&2
      rm_log
      return 0
    fi
    cat "$log" >&2
    if grep -q -e 'No space left on device' -e 'Errno 28' "$log"; then
      rm_log
      disk_full_help "pip install $* ran out of space"
      return 1
    fi
    echo "pip install $* failed (attempt $n of 8); retrying in $((n * 15)) s" >&2
    sleep $((n * 15))
  done
  rm_log
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
