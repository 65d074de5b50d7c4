#!/usr/bin/env bash
# Write DIR/SHA256SUMS over every dwp-*.tar.gz in DIR, in sha256sum's format (`HEX  NAME`), the
# file scripts/action/install.sh checks each download against:
#
#   scripts/release/checksums.sh DIR
#
# Check a download by hand: `sha256sum --check --ignore-missing SHA256SUMS` (Linux) or
# `shasum -a 256 --check --ignore-missing SHA256SUMS` (macOS).
set -euo pipefail

cd "$1"
shopt -s nullglob
assets=(dwp-*.tar.gz)
if [ "${#assets[@]}" -eq 0 ]; then
  echo "checksums: no dwp-*.tar.gz in $1" >&2
  exit 1
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256sum "${assets[@]}" >SHA256SUMS
else
  shasum -a 256 "${assets[@]}" >SHA256SUMS
fi
cat SHA256SUMS
