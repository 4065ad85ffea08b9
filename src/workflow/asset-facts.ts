// What is already known of assets' media (duration, size, sound), for get_project and the project resource: what the
// backend recorded, else what this process probed, else what an inspection stored. Nothing is measured here, so
// listing a project never runs ffprobe on every asset.
import type { Asset } from '../api/models.js';
import { mediaIdentity } from '../media/inspect-cache.js';
import { sourceFromUrl } from '../media/input.js';
import type { InspectDeps } from './inspect.js';
import { inspectionKey } from './inspection.js';

interface Facts {
  duration_ms?: number;
  width?: number;
  height?: number;
  has_audio?: boolean;
}

/** The asset says all there is to know: a record written with its facts (has_audio is recorded with them). */
const complete = (a: Asset) => typeof (a as Facts).has_audio === 'boolean';

async function knownFacts(deps: InspectDeps, a: Asset): Promise<Facts | undefined> {
  const probed = deps.prober?.known(a.id);
  if (probed)
    return { duration_ms: probed.durationMs, width: probed.width, height: probed.height, has_audio: probed.hasAudio };
  const inspections = deps.runtime?.inspections;
  if (!inspections) return undefined;
  const src = sourceFromUrl(a.url, { allowFile: deps.backend.kind === 'local' });
  if ('error' in src) return undefined;
  const stored = await inspections.get(inspectionKey(a.id, await mediaIdentity(src))).catch(() => undefined);
  const i = stored?.inspection;
  if (!i) return undefined;
  return {
    ...(i.duration_seconds > 0 ? { duration_ms: Math.round(i.duration_seconds * 1000) } : {}),
    width: i.width,
    height: i.height,
    has_audio: i.has_audio,
  };
}

/** The assets from `from` to `to` (the ones about to be shown) with what is known of their media filled in. */
export async function withKnownFacts(
  deps: InspectDeps,
  assets: Asset[],
  from = 0,
  to = assets.length,
): Promise<Asset[]> {
  const out = [...assets];
  await Promise.all(
    out.slice(from, to).map(async (a, i) => {
      if (complete(a)) return;
      const f = await knownFacts(deps, a);
      if (!f) return;
      const own = a as Asset & Facts;
      out[from + i] = {
        ...a,
        ...(own.duration_ms === undefined && f.duration_ms !== undefined ? { duration_ms: f.duration_ms } : {}),
        ...(own.width === undefined && f.width && f.height ? { width: f.width, height: f.height } : {}),
        ...(own.has_audio === undefined && f.has_audio !== undefined ? { has_audio: f.has_audio } : {}),
      };
    }),
  );
  return out;
}
