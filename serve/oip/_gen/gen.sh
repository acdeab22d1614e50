#!/usr/bin/env bash
# Generates the Go code of open_inference_grpc.proto (package oip) into the
# directory given (default: serve/oip itself). Needs protoc 3.21.12
# (apt-get install -y protobuf-compiler protoc-gen-go-grpc), protoc-gen-go
# v1.36.12 (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12)
# and protoc-gen-go-grpc 1.0 (Debian's protoc-gen-go-grpc) on PATH: the
# generated files name the versions that made them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.}
PATH="$PATH:$(go env GOPATH)/bin"
pkg=Mopen_inference_grpc.proto=github.com/zonal-ml/zonal/serve/oip
protoc -I . \
  --go_out="$out" --go_opt=paths=source_relative --go_opt="$pkg" \
  --go-grpc_out="$out" --go-grpc_opt=paths=source_relative --go-grpc_opt="$pkg" \
  open_inference_grpc.proto
