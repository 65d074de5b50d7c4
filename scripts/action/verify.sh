#!/usr/bin/env bash
# Verify step of the dwp GitHub Action (action.yml): `dwp verify --all ROOT --format sarif`
# into a file, its exit code and verdict as step outputs, the same findings as text in the job
# log, and the step failed unless the verdict is CONFORMANT (docs/ci.md has the exit codes).
#
# Environment (action.yml sets it from the inputs):
#   DWP_ROOT        the repository root to verify (default `.`)
#   DWP_STRICT      `true`: advisories fail too (`--strict`); `false` or empty: they do not
#   DWP_SARIF_FILE  where the SARIF log goes (default $RUNNER_TEMP/dwp.sarif)
#   DWP_BIN         the dwp binary (default: `dwp` on PATH)
#   GITHUB_OUTPUT   the step's output file
#
# Outputs: `exit` (dwp's exit code), `verdict` (CONFORMANT, NOT CONFORMANT, UNVERIFIED or
# USAGE ERROR) and `sarif-file` (set only when a SARIF log was written).
set -euo pipefail

# The verdict an exit code of `dwp verify` stands for.
dwp_verdict() {
  case "$1" in
    0) echo CONFORMANT ;;
    1) echo "NOT CONFORMANT" ;;
    5) echo UNVERIFIED ;;
    2) echo "USAGE ERROR" ;;
    *) echo "ERROR $1" ;;
  esac
}

main() {
  local dwp="${DWP_BIN:-dwp}" root="${DWP_ROOT:-.}"
  local sarif="${DWP_SARIF_FILE:-${RUNNER_TEMP:-/tmp}/dwp.sarif}"
  local args=(verify --all "${root}")
  case "${DWP_STRICT:-false}" in
    true) args+=(--strict) ;;
    false | "") ;;
    *)
      echo "dwp action: strict is '${DWP_STRICT}', not true or false" >&2
      exit 2
      ;;
  esac
  mkdir -p "$(dirname "${sarif}")"

  local code=0
  "${dwp}" "${args[@]}" --format sarif >"${sarif}" || code=$?
  local verdict
  verdict=$(dwp_verdict "${code}")
  {
    echo "exit=${code}"
    echo "verdict=${verdict}"
    case "${code}" in
      0 | 1 | 5) echo "sarif-file=${sarif}" ;;
      *) ;;
    esac
  } >>"${GITHUB_OUTPUT:?}"

  case "${code}" in
    0 | 1 | 5) "${dwp}" "${args[@]}" || true ;;
    *) ;;
  esac
  if [ "${code}" -ne 0 ]; then
    echo "::error title=dwp verify::${verdict} (exit ${code}): the findings are listed above"
    exit "${code}"
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi
