#!/usr/bin/env bash
# Checks deploy/statusd.service with `systemd-analyze verify` (docs/operations.md#running-under-systemd).
# verify refuses a unit whose ExecStart program is missing, and this machine has no
# /opt/statusd: so it checks a copy of the unit, in a temp folder, whose ExecStart names this
# machine's node and this checkout's bin/statusd.js. Everything else is the shipped file.
# Installs systemd from Debian packages when systemd-analyze is missing (CI).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }
if ! command -v systemd-analyze >/dev/null; then
  echo "unit-check: installing systemd from Debian packages"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends systemd
fi

dir=$(mktemp -d /tmp/statusd-unit.XXXXXX)
trap 'rm -rf "$dir"' EXIT
node=$(command -v node)
sed -e "s#^ExecStart=/usr/bin/node #ExecStart=$node #" \
  -e "s# /opt/statusd/bin/statusd.js # $PWD/bin/statusd.js #" \
  deploy/statusd.service >"$dir/statusd.service"
grep -q "^ExecStart=$node .* $PWD/bin/statusd.js serve\$" "$dir/statusd.service" || {
  echo "unit-check: ExecStart is not the expected '/usr/bin/node … /opt/statusd/bin/statusd.js serve'" >&2
  exit 1
}
# verify prints warnings and errors; any output at all fails the check
out=$(systemd-analyze verify "$dir/statusd.service" 2>&1) || { echo "$out" >&2; exit 1; }
if [ -n "$out" ]; then echo "$out" >&2; exit 1; fi
echo "unit-check: deploy/statusd.service verified (systemd $(systemd-analyze --version | awk 'NR==1{print $2}'))"
