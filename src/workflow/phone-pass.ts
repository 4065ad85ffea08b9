// An asset's phone pass for listening searches (issue 47, item 4): heard once (media/phone-pass.ts) and kept beside
// its transcript, under the transcript's media key (a changed file is a new key, so a new pass), with the sound it
// heard; read by every later search of the asset. One pass is made once, whoever asks: a search asking for one
// under way joins it.
import type { PhonePass } from '../media/phone-pass.js';
import { hearPhones, phonePassOf, soundKept, storedPhonePass } from '../media/phone-pass.js';
import type { MediaSource } from '../media/input.js';
import type { SphinxEngine } from '../media/speech.js';
import type { MediaRuntime } from './media-runtime.js';

export interface KeptPass extends PhonePass {
  /** The kept sound the pass heard (16 kHz mono s16le from the asset's start). */
  soundPath: string;
  /** Whether it was read from the store (true) or heard by this call. */
  stored: boolean;
}

const underWay = new Map<string, Promise<KeptPass>>();

/** The key of an asset's phone pass: the transcript's (`transcript|whole|<media key>`), as a pass. */
export const phonePassKey = (mediaKey: string): string => `phones|whole|${mediaKey}`;

/** The asset's phone pass: stored, or heard now over its whole length (`duration`, seconds) and stored. */
export async function keptPhonePass(
  rt: MediaRuntime & { phonePasses: NonNullable<MediaRuntime['phonePasses']>; scratchDir: string },
  engine: SphinxEngine,
  mediaKey: string,
  source: MediaSource,
  duration: number,
  signal: AbortSignal | undefined,
  onProgress: (fraction: number) => void,
): Promise<KeptPass> {
  const key = phonePassKey(mediaKey);
  const soundPath = await rt.phonePasses.soundPathOf(key);
  const stored = await rt.phonePasses.get(key);
  // A pass kept before it recorded the asset's feature mean is heard again (once), for the spotter to start from it.
  if (stored?.featureMean && (await soundKept(soundPath, stored.samples)))
    return { ...phonePassOf(stored), soundPath, stored: true };
  let making = underWay.get(key);
  if (!making) {
    making = rt.listening
      .run(() =>
        hearPhones({
          ffmpeg: rt.ffmpeg,
          engine,
          limiter: rt.limiter,
          source,
          fromSec: 0,
          toSec: duration,
          scratchDir: rt.scratchDir,
          soundPath,
          pieces: Math.max(1, rt.limiter.limit),
          timeoutMs: Math.max(60_000, duration * 3000),
          ...(signal ? { signal } : {}),
          onProgress,
        }),
      )
      .then(async (pass) => {
        await rt.phonePasses.set(key, storedPhonePass(pass));
        return { ...pass, soundPath, stored: false };
      })
      .finally(() => underWay.delete(key));
    underWay.set(key, making);
  }
  return making;
}
