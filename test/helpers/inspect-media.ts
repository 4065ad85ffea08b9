// Reading rendered media back with ffmpeg: the colour at a time, the loudness of a span, the duration.
import { spawnSync } from 'node:child_process';

/** Mean RGB of a region (default: the centre) of the frame shown at time t. */
export function colourAt(file: string, t: number, region = 'crop=iw/4:ih/4:iw*3/8:ih*3/8'): [number, number, number] {
  const seek = t > 0 ? ['-ss', t.toFixed(3)] : [];
  const r = spawnSync(
    'ffmpeg',
    [
      '-v',
      'error',
      ...seek,
      '-i',
      file,
      '-frames:v',
      '1',
      '-vf',
      `${region},scale=1:1:flags=area`,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ],
    { maxBuffer: 1024 },
  );
  if (r.status !== 0 || r.stdout.length < 3) throw new Error(`no frame at ${t}: ${r.stderr}`);
  return [r.stdout[0]!, r.stdout[1]!, r.stdout[2]!];
}

export function colourName([r, g, b]: [number, number, number]): string {
  const hi = (v: number) => v > 150;
  const lo = (v: number) => v < 60;
  if (hi(r) && lo(g) && lo(b)) return 'red';
  if (lo(r) && lo(g) && hi(b)) return 'blue';
  if (lo(r) && g > 90 && lo(b)) return 'green';
  if (hi(r) && hi(g) && lo(b)) return 'yellow';
  if (lo(r) && lo(g) && lo(b)) return 'black';
  return `rgb(${r},${g},${b})`;
}

/** RMS level (dBFS) of [from, to) of the file's audio, after an optional filter. -Infinity for silence. */
export function rmsDb(file: string, from: number, to: number, filter?: string): number {
  const af = `${filter ? `${filter},` : ''}astats=measure_perchannel=none:measure_overall=RMS_level`;
  const r = spawnSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-nostats',
      '-ss',
      from.toFixed(3),
      '-t',
      (to - from).toFixed(3),
      '-i',
      file,
      '-vn',
      '-af',
      af,
      '-f',
      'null',
      '-',
    ],
    { encoding: 'utf8' },
  );
  const m = /RMS level dB: (\S+)/.exec(r.stderr);
  if (!m) throw new Error(`no audio level for ${from}-${to}: ${r.stderr.slice(-300)}`);
  return m[1]!.includes('inf') ? -Infinity : Number(m[1]);
}

export function probe(file: string): { duration: number; width: number; height: number; videoFrames: number } {
  const r = spawnSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-count_frames',
      '-select_streams',
      'v:0',
      '-show_entries',
      'format=duration:stream=width,height,nb_read_frames',
      '-of',
      'json',
      file,
    ],
    { encoding: 'utf8' },
  );
  const j = JSON.parse(r.stdout);
  return {
    duration: Number(j.format.duration),
    width: j.streams[0].width,
    height: j.streams[0].height,
    videoFrames: Number(j.streams[0].nb_read_frames),
  };
}

/**
 * What plays: the sound's packets as stored (dts, pts, duration, size, hash of the bytes), the hash of the sound as a
 * player decodes it (the encoder's priming skipped by the edit list), and the hash of the decoded pictures. Equal for
 * two files that play the same (the picture's packets may differ in x264's SEI, which names its thread count).
 */
export function playedContent(file: string): { audioPackets: string[]; decodedAudio: string; decodedVideo: string } {
  const run = (args: string[]) => {
    const r = spawnSync('ffmpeg', ['-v', 'error', '-i', file, ...args, '-'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`reading ${file}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    audioPackets: run(['-map', '0:a', '-c', 'copy', '-f', 'framemd5'])
      .split('\n')
      .filter((l) => l && !l.startsWith('#')),
    decodedAudio: run(['-map', '0:a', '-f', 'md5']).trim(),
    decodedVideo: run(['-map', '0:v', '-f', 'md5']).trim(),
  };
}
