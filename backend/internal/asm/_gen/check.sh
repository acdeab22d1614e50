#!/usr/bin/env bash
# Reruns the avo generators (go generate in package backend/internal/asm) and fails if the
# checked-in assembly or stubs differ from what the generators produce.
# Needs network access to the Go module proxy the first time (avo v0.5.0).
set -euo pipefail
cd "$(dirname "$0")/.."
# Every generator (gemm, level1, vexp, vexp32, gegen, ...; _gen/internal
# holds code they share) must be run by a go:generate directive, or its
# output would never be checked.
for gen in _gen/*/; do
  gen=$(basename "$gen")
  [ "$gen" = internal ] && continue
  if ! grep -q -- "go run -C _gen ./$gen " ./*.go; then
    echo "asm: generator _gen/$gen has no go:generate directive in package asm" >&2
    exit 1
  fi
done
GOARCH=amd64 go generate ./
if ! git diff --exit-code --stat -- '*.s' '*_stub_amd64.go'; then
  echo "asm: generated files are stale: run 'go generate ./backend/internal/asm/' and commit the result" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- '*.s' '*_stub_amd64.go')
if [ -n "$untracked" ]; then
  echo "asm: generated files not checked in: $untracked" >&2
  exit 1
fi
echo "asm: generated files up to date"
