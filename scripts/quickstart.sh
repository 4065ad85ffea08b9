#!/usr/bin/env bash
# Installs what cutroom needs on a Debian/Ubuntu machine, builds it, and runs the main job end to end on the
# local backend (scripts/demo.mjs): sample clips -> project -> import -> compose -> preview -> render.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1 || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "cutroom needs Node.js 20 or newer (found: $(node --version 2>/dev/null || echo none))." >&2
  echo "Install it from https://nodejs.org or your distribution (Ubuntu 24.04: apt-get install nodejs), then run this again." >&2
  exit 1
fi

# ffmpeg, PocketSphinx and its English model, flite, chromium, redis-server: from the system's packages when missing.
. scripts/system-deps.sh
install_system_deps

npm ci --no-audit --no-fund
npm run build
node scripts/demo.mjs "$@"
