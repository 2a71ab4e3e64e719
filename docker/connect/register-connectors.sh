#!/bin/sh
# Registers connectors with Kafka Connect: each argument is a JSON file {"name": ..., "config": {...}}.
# A connector that is registered already is left as it is (delete it first to change it:
# curl -X DELETE http://localhost:8083/connectors/<name>).
set -eu
connect=${CONNECT_URL:-http://localhost:8083}
for file in "$@"; do
    status=$(curl -sS -o /tmp/response -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data @"$file" "$connect/connectors")
    case "$status" in
        201) echo "registered $file" ;;
        409) echo "already registered: $file" ;;
        *) echo "registering $file failed with HTTP $status: $(cat /tmp/response)" >&2; exit 1 ;;
    esac
done
