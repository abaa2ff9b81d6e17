#!/usr/bin/env bash
# Run a command with Debian's chromium available for the browser tests (tests/browser),
# exported as TOKENRISK_TEST_CHROMIUM.  Installs the `chromium` package when it is missing
# (needs root; Playwright's own browser download cannot work here).  Without root and
# without chromium the browser tests are skipped, and this says so loudly.
set -euo pipefail

find_chromium() { command -v chromium || command -v chromium-browser || true; }
if [[ -z "${TOKENRISK_TEST_CHROMIUM:-}" ]]; then
  if [[ -z "$(find_chromium)" && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    echo "with-chromium: installing Debian's chromium (one time)" >&2
    for attempt in 1 2 3 4 5; do  # another apt may hold the dpkg lock for a moment
      if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
          apt-get install -y -qq --no-install-recommends chromium >/dev/null) >&2; then break; fi
      echo "with-chromium: apt-get failed (attempt $attempt), retrying" >&2
      sleep 10
    done
  fi
  TOKENRISK_TEST_CHROMIUM="$(find_chromium)"
fi
if [[ -z "$TOKENRISK_TEST_CHROMIUM" ]]; then
  echo "##################################################################################" >&2
  echo "with-chromium: chromium is NOT installed and cannot be installed (not root)." >&2
  echo "with-chromium: the browser tests (tests/browser) will be SKIPPED, not passed." >&2
  echo "##################################################################################" >&2
fi
export TOKENRISK_TEST_CHROMIUM
exec "$@"
