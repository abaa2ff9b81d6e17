#!/usr/bin/env bash
# Run a command on a machine that has Debian's redis-server, installing it when missing
# (needs root), so the scale-out tests run a real Redis.  The tests start their own
# throwaway server on a free loopback port (tests/redisserver.py); this script only makes
# sure the binary is there.  Without it (not root, no apt) those tests report as skipped.
set -euo pipefail
if ! command -v redis-server >/dev/null 2>&1; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    echo "with-redis: installing Debian's redis-server (one time)" >&2
    for attempt in 1 2 3 4 5; do  # another apt user may hold the dpkg lock for a while
      if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends redis-server >/dev/null) >&2; then
        break
      fi
      sleep $((attempt * 5))
    done
  fi
fi
if ! command -v redis-server >/dev/null 2>&1; then
  echo "with-redis: redis-server is not installed and cannot be installed here;" \
       "the Redis scale-out tests will report as skipped" >&2
fi
exec "$@"
