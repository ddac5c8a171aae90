#!/bin/sh
# Compiles the .proto files in Schemas/ into descriptor sets (google.protobuf.FileDescriptorSet, imports
# included) that Courier loads at run time. Run from anywhere: `make schemas` calls it.
set -eu
cd "$(dirname "$0")"
PROTOC="${PROTOC:-protoc}"
if ! command -v "$PROTOC" >/dev/null 2>&1; then
    echo "generate.sh: protoc not found (apt-get install protobuf-compiler, or set PROTOC)" >&2
    exit 1
fi
for proto in demo kitchen_sink legacy bench_userlist; do
    "$PROTOC" --include_imports --descriptor_set_out="$proto.pb" -I. "$proto.proto"
    echo "Schemas/$proto.pb"
done
