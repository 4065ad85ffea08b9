#!/usr/bin/env bash
# Installs, from Debian's/Ubuntu's packages, the system tools cutroom uses that are missing: ffmpeg (renders,
# previews, inspections), DejaVu fonts (burned-in captions), PocketSphinx with its English model (transcripts), flite (the tests' speech) and chromium
# (the tests of the MCP App view, driven by playwright-core, which downloads no browser) and redis-server (the job
# queue's tests start their own on a free loopback port; no system service is needed) and Python's yaml (the test
# that reads docker-compose.yml as Compose does, since Docker itself is not run) and WordNet's files (wordnet-base).
# Sourced by scripts/quickstart.sh and .ci/run.
install_system_deps() {
  local missing=()
  { command -v ffmpeg && command -v ffprobe; } >/dev/null 2>&1 || missing+=(ffmpeg)
  { command -v pocketsphinx_continuous || command -v pocketsphinx; } >/dev/null 2>&1 || missing+=(pocketsphinx)
  [ -f /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict ] || missing+=(pocketsphinx-en-us)
  command -v flite >/dev/null 2>&1 || missing+=(flite)
  # The captions' font (libass finds it through fontconfig).
  [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
  { command -v chromium || command -v chromium-browser; } >/dev/null 2>&1 || missing+=(chromium)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  python3 -c 'import yaml' >/dev/null 2>&1 || missing+=(python3-yaml)
  # WordNet's dictionary files: find_moments' about counts related words ("storm": wind, sea); optional.
  [ -f /usr/share/wordnet/data.noun ] || missing+=(wordnet-base)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing from the system's packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
