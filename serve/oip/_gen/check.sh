#!/usr/bin/env bash
# Regenerates the Go code of open_inference_grpc.proto into a temporary
# directory and fails if the checked-in files in serve/oip differ.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
./_gen/gen.sh "$tmp"
status=0
for f in open_inference_grpc.pb.go open_inference_grpc_grpc.pb.go; do
  if ! diff -u "$f" "$tmp/$f"; then
    status=1
  fi
done
extra=$(cd "$tmp" && ls | grep -v -x -e open_inference_grpc.pb.go -e open_inference_grpc_grpc.pb.go || true)
if [ -n "$extra" ]; then
  echo "oip: the generator wrote files this check does not know: $extra" >&2
  status=1
fi
if [ $status -ne 0 ]; then
  echo "oip: generated files are stale (or made by other tool versions): run serve/oip/_gen/gen.sh and commit the result" >&2
  exit 1
fi
echo "oip: generated files up to date"
