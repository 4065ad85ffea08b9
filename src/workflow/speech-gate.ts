// The speech gate of searches (issue 47, item 4): before a search or find_moments pays for recognising an asset's sound,
// whether it holds speech at all (media/speech-presence.ts); noise and music are never transcribed there.
import { MIN_SPEECH_SEC } from '../analysis/speech-presence.js';
import { speechIn } from '../media/speech-presence.js';
import { locateAsset, type InspectDeps } from './inspect.js';

/** Said of an asset whose sound holds no speech, where it is skipped. */
export const NO_SPEECH = 'no speech heard in its sound (noise or music): not transcribed';

/**
 * Whether an asset's sound holds speech worth transcribing; true where it cannot be judged here (no ffmpeg, or the
 * sound could not be read: recognition then says what is wrong).
 */
export async function holdsSpeech(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const rt = deps.runtime;
  if (!rt) return true;
  try {
    const { src } = await locateAsset(deps, projectId, assetId, signal);
    return (await speechIn(rt, src, signal)).speechSeconds >= MIN_SPEECH_SEC;
  } catch (err) {
    if (signal?.aborted) throw err;
    return true;
  }
}
