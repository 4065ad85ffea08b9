// A cut's clip: its segment (H.264 picture, PCM sound in NUT, which no browser plays) made into an mp4 a browser
// or any player plays, the picture copied and the sound encoded, so that a person can watch a cut as soon as it is
// rendered, while the rest of its preview renders. Written under a temporary name and renamed: never seen half-made.
import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { runProcess, whyFailed } from './process.js';
import { RenderError } from './render-error.js';
import { aacArgs, num, type EncodeSettings } from './timeline-args.js';

/** `sound`: the preview's encode settings (its AAC options: the clip sounds as the preview does). */
export function cutClipArgs(segment: string, seconds: number, output: string, sound: EncodeSettings): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-nostats',
    '-v',
    'error',
    '-y',
    '-f',
    'nut',
    '-protocol_whitelist',
    'file',
    '-i',
    `file:${segment}`,
    // Its sound is its range's (the join places it); here it plays from the cut's first frame, as long as the picture.
    '-map',
    '0:v',
    '-map',
    '0:a?',
    '-t',
    num(seconds),
    '-c:v',
    'copy',
    ...aacArgs(sound),
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    output,
  ];
}

/**
 * Makes the clip of a segment at `output`. A small process (a copy and a few seconds of sound encoded): it does not
 * wait for an ffmpeg slot, which the preview's own processes hold; the caller bounds how many run.
 */
export async function makeCutClip(
  ffmpeg: string,
  segment: string,
  seconds: number,
  output: string,
  sound: EncodeSettings,
  signal?: AbortSignal,
): Promise<void> {
  const tmp = `${output}.${randomBytes(4).toString('hex')}.part`;
  const r = await runProcess(ffmpeg, cutClipArgs(segment, seconds, tmp, sound), {
    timeoutMs: 60_000,
    signal,
    maxStderr: 8 * 1024,
  });
  if (r.cancelled || r.timedOut || r.code !== 0) {
    await rm(tmp, { force: true });
    if (r.cancelled) throw new RenderError('cancelled', true);
    throw new RenderError(
      `the cut's clip could not be made (${r.timedOut ? 'timed out' : whyFailed(r)})`,
      false,
      /No space left on device/i.test(r.stderr),
    );
  }
  await rename(tmp, output);
}
