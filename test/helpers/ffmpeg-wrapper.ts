// An ffmpeg that misbehaves on request, for races the real one rarely shows: FFMPEG_PATH pointed at a script that
// runs the ffmpeg on PATH, and, while a flag file is in its folder,
//  - slow-term: takes 1.5 s to stop when asked to (SIGTERM), as an ffmpeg flushing a large file does;
// - fail-clip: fails every cut clip (an output named cut-N.mp4.<hex>.part), naming its output on stderr as ffmpeg does;
//  - slow-clip: starts every cut clip 20 s late (a busy machine).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type WrapperFlag = 'slow-term' | 'fail-clip' | 'slow-clip';

export function ffmpegWrapper(): { dir: string; path: string; set: (flag: WrapperFlag, on: boolean) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-ffwrap-'));
  const path = join(dir, 'ffmpeg');
  writeFileSync(
    path,
    [
      '#!/bin/bash',
      'W="$(dirname "$0")"',
      'last="${@: -1}"',
      'if [[ -e "$W/fail-clip" && "$last" =~ cut-[0-9]+\\.mp4\\.[0-9a-f]+\\.part$ ]]; then echo "$last: Permission denied" >&2; exit 1; fi',
      'if [[ -e "$W/slow-clip" && "$last" =~ cut-[0-9]+\\.mp4\\.[0-9a-f]+\\.part$ ]]; then sleep 20 </dev/null >/dev/null 2>&1; fi',
      'if [[ -e "$W/slow-term" ]]; then',
      '  ffmpeg "$@" & pid=$!',
      "  trap 'sleep 1.5; kill -TERM $pid 2>/dev/null; wait $pid; exit 255' TERM",
      '  wait $pid; exit $?',
      'fi',
      'exec ffmpeg "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return {
    dir,
    path,
    set: (flag, on) => (on ? writeFileSync(join(dir, flag), '') : rmSync(join(dir, flag), { force: true })),
  };
}
