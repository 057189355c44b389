#!/usr/bin/env sh
# Generates the Python gRPC stubs of the Knobel contract into gen/ (not committed):
#   gen/knobel/v1/arena_pb2.py, arena_pb2_grpc.py (and arena_pb2.pyi for editors).
# Needs grpcio-tools (pip install -r requirements.txt). Uses $PYTHON if set, else the
# `python` of the active virtual environment (or python3).
set -eu
if [ -z "${PYTHON:-}" ]; then
  if command -v python >/dev/null 2>&1; then PYTHON=python; else PYTHON=python3; fi
else
  # A relative path (e.g. PYTHON=.venv/bin/python) is relative to where we were called.
  case "$PYTHON" in
    /*) ;;
    */*) PYTHON="$PWD/$PYTHON" ;;
  esac
fi
cd "$(dirname "$0")"
rm -rf gen
mkdir -p gen
"$PYTHON" -m grpc_tools.protoc -I ../../proto \
  --python_out=gen --pyi_out=gen --grpc_python_out=gen \
  knobel/v1/arena.proto
# Packages, so that `from knobel.v1 import arena_pb2` works with gen/ on sys.path.
touch gen/knobel/__init__.py gen/knobel/v1/__init__.py
echo "stubs generated in $(pwd)/gen (import them as: from knobel.v1 import arena_pb2)"
