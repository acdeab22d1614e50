#!/usr/bin/env bash
# Reruns the avo generators (go generate in package backend/internal/asm) and fails if the
# checked-in assembly or stubs differ from what the generators produce.
# Needs network access to the Go module proxy the first time (avo v0.5.0).
set -euo pipefail
cd "$(dirname "$0")/.."
# Every generator (a folder of _gen other than internal/, e.g. _gen/gemm and
# _gen/sgemm) must be run by a go:generate line, or its output is never checked.
for dir in _gen/*/; do
  name=$(basename "$dir")
  [ "$name" = internal ] && continue
  if ! grep -q -e "go run -C _gen ./$name " *.go; then
    echo "asm: generator _gen/$name has no go:generate line" >&2
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
