#!/usr/bin/env bash
# Pack one release binary as the asset the GitHub Action downloads (scripts/action/install.sh):
#
#   scripts/release/pack.sh TARGET BINARY OUT_DIR
#
# writes OUT_DIR/dwp-TARGET.tar.gz holding dwp-TARGET/{dwp,README.md,LICENSE-MIT,LICENSE-APACHE}.
# .github/workflows/release.yml runs it for each target; tests/hooks/action.rs packs the test
# build with it and installs that through the action.
set -euo pipefail

target="$1" binary="$2" out="$3"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
stage=$(mktemp -d)
trap 'rm -rf "${stage}"' EXIT

mkdir -p "${stage}/dwp-${target}" "${out}"
install -m 0755 "${binary}" "${stage}/dwp-${target}/dwp"
cp "${repo}/README.md" "${repo}/LICENSE-MIT" "${repo}/LICENSE-APACHE" "${stage}/dwp-${target}/"
tar -czf "${out}/dwp-${target}.tar.gz" -C "${stage}" "dwp-${target}"
echo "${out}/dwp-${target}.tar.gz"
