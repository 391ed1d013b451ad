#!/usr/bin/env bash
# Builds the container image from Containerfile and checks that it serves
# (docs/operations.md#container-image): CI's check of the image.
#
# The registry of base images may be out of reach, so the base is made here: Debian's
# `debootstrap --variant=minbase`, plus this machine's Node.js (CI installs Node 24 from npm)
# and npm, imported into buildah. Then `buildah bud --isolation chroot` builds the
# Containerfile on it (the package installed from `npm pack`'s tarball, dependencies from
# the npm registry), and `buildah run --isolation chroot` starts `statusd serve` inside it as
# its non-root user; /readyz and /healthz are reached from outside, and the image's
# HEALTHCHECK command is run inside. Installs buildah and debootstrap from Debian packages
# when missing. Must run as root (debootstrap, buildah's chroot isolation).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
say() { echo "image-check: $* ($((SECONDS - started)) s)"; }

if [ "$(id -u)" -ne 0 ]; then
  echo "image-check: run as root (debootstrap and buildah's chroot isolation need it)" >&2
  exit 1
fi
need=()
command -v buildah >/dev/null || need+=(buildah)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ "${#need[@]}" -gt 0 ]; then
  say "installing ${need[*]} from Debian packages"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi

node_bin=$(readlink -f "$(command -v node)")
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=18)?0:1)' || {
  echo "image-check: $(node --version) at $node_bin is older than 22.18" >&2
  exit 1
}
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -f "$npm_dir/bin/npm-cli.js" ] || { echo "image-check: cannot find npm's own folder" >&2; exit 1; }

work=$(mktemp -d /tmp/statusd-image.XXXXXX)
tag=localhost/statusd-check:$$
base=localhost/statusd-check-base:$$
containers=()
server_pid=
cleanup() {
  local status=$?
  [ -n "$server_pid" ] && kill -- -"$server_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && wait "$server_pid" 2>/dev/null || true
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  buildah rmi -f "$tag" "$base" >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ] && [ -f "$work/serve.log" ]; then
    echo "image-check: statusd's output:"
    tail -n 40 "$work/serve.log" || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# --- the base: Debian minbase + Node.js + npm, laid out like the official Node.js images
debootstrap --variant=minbase bookworm "$work/rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" \
  >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log"; exit 1; }
install -D -m 0755 "$node_bin" "$work/rootfs/usr/local/bin/node"
mkdir -p "$work/rootfs/usr/local/lib/node_modules"
cp -a "$npm_dir" "$work/rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/dev/"*
tar -C "$work/rootfs" -cf "$work/base.tar" .
rm -rf "$work/rootfs"
c=$(buildah from scratch)
containers+=("$c")
buildah add --quiet "$c" "$work/base.tar" / >/dev/null
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
buildah commit --quiet --rm "$c" "$base" >/dev/null
containers=()
rm -f "$work/base.tar"
say "base image $base: Debian bookworm minbase, Node.js $(node --version), npm $(npm --version)"

# --- the image, from the package as `npm pack` makes it
mkdir "$work/context"
# the package: a tarball packed before (STATUSD_PACKAGE: CI packs it before the suite, which
# rebuilds the app while this check runs beside it), else packed here
if [ -n "${STATUSD_PACKAGE:-}" ]; then
  cp "$STATUSD_PACKAGE" "$work/context/"
else
  npm pack --silent --pack-destination "$work/context" >/dev/null
fi
cp Containerfile "$work/context/"
# behind a TLS-intercepting proxy, npm in the build trusts what this machine's Node trusts
ca=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  ca=(-v "$NODE_EXTRA_CA_CERTS:/run/statusd-extra-ca.pem:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/statusd-extra-ca.pem)
fi
buildah bud --quiet --isolation chroot --format docker --layers=false "${ca[@]}" \
  --build-arg "BASE=$base" -t "$tag" -f "$work/context/Containerfile" "$work/context" >/dev/null
say "image $tag built"

# --- run it: as its own user, reached from outside
c=$(buildah from "$tag")
containers+=("$c")
user=$(buildah run --isolation chroot "$c" -- id -u)
[ "$user" != 0 ] || { echo "image-check: the image runs as root" >&2; exit 1; }
port=$(node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
setsid buildah run --isolation chroot --env "PORT=$port" "$c" -- statusd serve >"$work/serve.log" 2>&1 &
server_pid=$!
node - "$port" <<'JS'
const port = process.argv[2]
const until = Date.now() + 120_000
for (;;) {
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null)
  if (ready?.status === 200) break
  if (Date.now() > until) throw new Error('image-check: /readyz did not answer 200 within 120 s')
  await new Promise((r) => setTimeout(r, 500))
}
const health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()
if (health.status !== 'ok' || typeof health.version !== 'string') throw new Error(JSON.stringify(health))
console.log(`image-check: /readyz 200, /healthz ${JSON.stringify(health)}`)
JS
grep -q '"storage":"sqlite /data/statusd.db"' "$work/serve.log" || {
  echo "image-check: statusd did not use the SQLite file in /data" >&2
  exit 1
}
# the image's own HEALTHCHECK command, run where the runtime would run it
buildah inspect --type image "$tag" >"$work/image.json"
mapfile -t health_cmd < <(node -e '
  const image = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))
  const test = image.Docker?.config?.Healthcheck?.Test
  if (!Array.isArray(test) || test[0] !== "CMD") throw new Error("no HEALTHCHECK CMD in the image")
  for (const arg of test.slice(1)) console.log(arg)
' "$work/image.json")
[ "${#health_cmd[@]}" -gt 0 ] || { echo "image-check: the image has no HEALTHCHECK command" >&2; exit 1; }
buildah run --isolation chroot --env "PORT=$port" "$c" -- "${health_cmd[@]}" ||
  { echo "image-check: the HEALTHCHECK command failed" >&2; exit 1; }
say "statusd serves from the image as uid $user on /data; its HEALTHCHECK passes"
