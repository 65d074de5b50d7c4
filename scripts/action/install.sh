#!/usr/bin/env bash
# Install step of the dwp GitHub Action (action.yml): puts a dwp binary on the job's PATH.
#
# It downloads the release asset built for the runner (scripts/release/pack.sh names it
# dwp-<target>.tar.gz), checks it against the release's SHA256SUMS and refuses it on any
# mismatch. When no prebuilt asset matches (a runner dwp ships no binary for, a version with no
# release yet, a release without that asset), it builds the action's own source instead:
# `cargo install --locked --path "$GITHUB_ACTION_PATH"`. A checksum mismatch never falls back.
#
# Environment (action.yml sets it from the inputs):
#   DWP_VERSION            a release tag (v0.2.0 or 0.2.0) or `latest`; empty: the action's own
#                          ref when it is a version tag vX.Y.Z, else `latest`
#   DWP_ACTION_REF         the action's ref (`github.action_ref`)
#   DWP_ACTION_REPOSITORY  owner/name of the action (`github.action_repository`); empty: read
#                          from GITHUB_ACTION_PATH (.../_actions/OWNER/NAME/REF)
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_ACTION_PATH, GITHUB_PATH, GITHUB_OUTPUT: the runner's
#   DWP_ACTION_DOWNLOAD_DIR  test seam: read the asset and SHA256SUMS from this folder instead
#                          of the release (tests/hooks/action.rs; never set in a workflow)
#
# Outputs: `path` (the dwp binary), `source` (release or cargo), `version` (dwp --version).
# Sourcing the file defines the functions without running anything.
set -euo pipefail

# The Rust target dwp releases for a runner's RUNNER_OS and RUNNER_ARCH; nothing when none.
dwp_target() {
  case "$1/$2" in
    Linux/X64) echo x86_64-unknown-linux-musl ;;
    Linux/ARM64) echo aarch64-unknown-linux-musl ;;
    macOS/X64) echo x86_64-apple-darwin ;;
    macOS/ARM64) echo aarch64-apple-darwin ;;
    *) ;;
  esac
}

# The release asset of a target.
dwp_asset_name() {
  echo "dwp-$1.tar.gz"
}

# The release tag to download from: VERSION, or the action's REF when it is a version tag, or
# `latest`.
dwp_release_tag() {
  local version="$1" ref="$2"
  if [ -z "${version}" ]; then
    if [[ "${ref}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
      version="${ref}"
    else
      version=latest
    fi
  fi
  case "${version}" in
    latest | v*) echo "${version}" ;;
    *) echo "v${version}" ;;
  esac
}

# owner/name of the action: DWP_ACTION_REPOSITORY, else the two folders above the ref in
# GITHUB_ACTION_PATH (composite actions may see `github.action_repository` empty).
dwp_repository() {
  if [ -n "${DWP_ACTION_REPOSITORY:-}" ]; then
    echo "${DWP_ACTION_REPOSITORY}"
    return
  fi
  local path="${GITHUB_ACTION_PATH:-}"
  if [[ "${path}" == */_actions/*/*/* ]]; then
    local below="${path#*/_actions/}"
    echo "${below%%/*}/$(echo "${below}" | cut -d/ -f2)"
  fi
}

# Fetch the release file NAME of REPOSITORY at TAG into DEST; fails when it is not there.
dwp_fetch() {
  local repository="$1" tag="$2" name="$3" dest="$4"
  if [ -n "${DWP_ACTION_DOWNLOAD_DIR:-}" ]; then
    [ -f "${DWP_ACTION_DOWNLOAD_DIR}/${name}" ] && cp "${DWP_ACTION_DOWNLOAD_DIR}/${name}" "${dest}"
    return
  fi
  local url
  if [ "${tag}" = latest ]; then
    url="https://github.com/${repository}/releases/latest/download/${name}"
  else
    url="https://github.com/${repository}/releases/download/${tag}/${name}"
  fi
  curl --fail --silent --show-error --location --proto '=https' --tlsv1.2 \
    --retry 3 --retry-delay 2 --output "${dest}" "${url}"
}

# The sha256 of FILE in hex (sha256sum on Linux, shasum on macOS).
dwp_sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# Succeeds when FILE's sha256 is the one SUMS (sha256sum's format) lists for NAME; says why not.
dwp_check_sum() {
  local file="$1" sums="$2" name="$3" expected actual
  expected=$(awk -v name="${name}" '$2 == name || $2 == "*" name { print $1 }' "${sums}")
  if [ -z "${expected}" ] || [ "$(echo "${expected}" | wc -l)" -ne 1 ]; then
    echo "dwp action: SHA256SUMS lists ${name} $(echo "${expected}" | grep -c .) times, not once" >&2
    return 1
  fi
  actual=$(dwp_sha256 "${file}")
  if [ "${actual}" != "${expected}" ]; then
    echo "dwp action: ${name} has sha256 ${actual}, SHA256SUMS says ${expected}: refused" >&2
    return 1
  fi
}

# Download, check and unpack the release asset for TARGET into DIR/bin; status 3 when the
# release has no such asset (or no SHA256SUMS), 1 when the asset is refused.
dwp_install_release() {
  local repository="$1" tag="$2" target="$3" dir="$4" name work status=0
  name=$(dwp_asset_name "${target}")
  work=$(mktemp -d)
  if ! dwp_fetch "${repository}" "${tag}" "${name}" "${work}/${name}" ||
    ! dwp_fetch "${repository}" "${tag}" SHA256SUMS "${work}/SHA256SUMS"; then
    rm -rf "${work}"
    return 3
  fi
  if ! dwp_check_sum "${work}/${name}" "${work}/SHA256SUMS" "${name}"; then
    rm -rf "${work}"
    return 1
  fi
  mkdir -p "${dir}/bin"
  tar -xzf "${work}/${name}" -C "${work}" &&
    install -m 0755 "${work}/dwp-${target}/dwp" "${dir}/bin/dwp" || status=1
  rm -rf "${work}"
  return "${status}"
}

# Build the action's own source into DIR/bin.
dwp_install_source() {
  local dir="$1"
  if ! command -v cargo >/dev/null 2>&1; then
    echo "dwp action: no prebuilt dwp for this runner and no cargo to build one" >&2
    echo "  hint: add a Rust toolchain step (dtolnay/rust-toolchain@stable) before this action" >&2
    return 1
  fi
  cargo install --locked --path "${GITHUB_ACTION_PATH:?}" --root "${dir}"
}

main() {
  local target tag repository dir source status=0
  if [ "${RUNNER_OS:-}" = Windows ]; then
    # dwp uses Unix file APIs (openat2, rename flags, signals): it builds for Linux and macOS.
    echo "dwp action: dwp runs on Linux and macOS runners, not ${RUNNER_OS}" >&2
    echo "  hint: run the job on a Linux runner (runs-on: ubuntu-latest)" >&2
    exit 1
  fi
  target=$(dwp_target "${RUNNER_OS:-}" "${RUNNER_ARCH:-}")
  tag=$(dwp_release_tag "${DWP_VERSION:-}" "${DWP_ACTION_REF:-}")
  repository=$(dwp_repository)
  dir="${RUNNER_TEMP:-/tmp}/dwp-action"
  source=release
  if [ -z "${target}" ] || [ -z "${repository}" ]; then
    status=3
  else
    dwp_install_release "${repository}" "${tag}" "${target}" "${dir}" || status=$?
  fi
  case "${status}" in
    0) echo "dwp action: installed $(dwp_asset_name "${target}") of ${repository} ${tag}" ;;
    3)
      echo "::notice::no prebuilt dwp for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?} at ${repository:-?} ${tag}: building the action's source (${DWP_ACTION_REF:-its ref})"
      source=cargo
      dwp_install_source "${dir}"
      ;;
    *) exit "${status}" ;;
  esac
  local binary="${dir}/bin/dwp"
  "${binary}" --version
  echo "${dir}/bin" >>"${GITHUB_PATH:?}"
  {
    echo "path=${binary}"
    echo "source=${source}"
    echo "version=$("${binary}" --version)"
  } >>"${GITHUB_OUTPUT:?}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi
