// An imported timeline back into an edit draft of the project: each clip's media mapped to an asset, times put
// where cutroom's render lands them on the same frames, and a note for everything that does not map.
import { OUTPUT_FORMAT } from '../edit/model.js';
import { fpsRational, outputFilenameProblem } from '../edit/normalize.js';
import {
  quoteOf,
  type ExchangeMix,
  type ImportedOverlay,
  type ImportedTimeline,
  type ImportNote,
  type MediaHints,
  type ImportedCut,
} from './document.js';
import { dropFrameRate, timecodeBase, timecodeToFrames } from './edl.js';

export interface AssetCandidate {
  id: string;
  kind: 'video' | 'audio' | 'image' | 'unknown';
  /** The asset's name, and its file's name. */
  names: string[];
  /** Its link or file path, without a query string. */
  url?: string;
  /** The file it was imported from (exports point an editor at it), when cutroom knows it. */
  importedFrom?: string;
  /** Its video's constant frame rate, when known: a cut's in point then lands on that source's frame. */
  rate?: { num: number; den: number };
  /** Its start timecode in seconds, when it has one: an EDL's source in points count from it. */
  timecodeSec?: number;
  /** Its measured length in seconds, when known: a clip that plays its whole media without saying how long lasts it. */
  durationSec?: number;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** A URL or path, compared without query, fragment or file: prefix. */
export function plainLocation(url: string): string {
  let u = url.trim();
  try {
    const parsed = new URL(u);
    if (parsed.protocol === 'file:') return decodeURIComponent(parsed.pathname);
    parsed.search = '';
    parsed.hash = '';
    return parsed.href;
  } catch {
    u = u.replace(/[?#].*$/, '');
    return u;
  }
}

const baseName = (s: string) =>
  s
    .replace(/[?#].*$/, '')
    .split(/[\\/]/)
    .pop() ?? s;
const stem = (s: string) => baseName(s).replace(/\.[^.]*$/, '');

/**
 * Media mapped by hand: a name or path as the file has it (or its file name, or that without extension) -> asset id.
 */
export type MediaMap = Record<string, string>;

/** The media_map key that names these hints: a path or link, a file name, or a name, whole or without extension. */
function mapKeyOf(h: MediaHints, map: MediaMap): string | undefined {
  const said = [
    ...(h.url ? [plainLocation(h.url), baseName(plainLocation(h.url))] : []),
    ...h.names.map((n) => n.trim()).filter(Boolean),
  ];
  const keys = Object.keys(map);
  for (const k of keys) if (said.includes(k.trim()) || (h.url && plainLocation(k) === plainLocation(h.url))) return k;
  for (const k of keys)
    if (said.some((n) => baseName(n) === baseName(k.trim()) || stem(n) === stem(k.trim()))) return k;
  return undefined;
}

export interface Resolved {
  asset?: AssetCandidate;
  via?: string;
  relinkedFrom?: string;
  /** The media_map key used. */
  mapKey?: string;
  /** No asset chosen: this name matches several. */
  ambiguous?: { name: string; assets: AssetCandidate[] };
}

/**
 * The asset a clip names: a media_map entry; else its cutroom id; else its path or link (without query); else an asset
 * id inside its file name (exports name downloaded media after the asset); else a unique name, file name or reel (an
 * id prefix). Where the path names another asset than the id cutroom left in the file, an editor relinked the clip:
 * the path wins, and `relinkedFrom` names the asset the id named. A name several assets share chooses none.
 */
export function resolveMedia(h: MediaHints, assets: AssetCandidate[], map: MediaMap = {}): Resolved {
  const byId = (id: string) => assets.find((a) => a.id.toLowerCase() === id.toLowerCase());
  const key = mapKeyOf(h, map);
  if (key !== undefined) {
    const a = byId(map[key]!.trim());
    if (a) return { asset: a, via: `media_map "${quoteOf(key, 120)}"`, mapKey: key };
  }
  if (h.assetId) {
    const a = byId(h.assetId);
    const byPath = h.url ? resolveMedia({ url: h.url, names: [] }, assets) : {};
    if (a && byPath.asset && byPath.asset.id !== a.id) return { ...byPath, relinkedFrom: a.id };
    if (a) return { asset: a, via: 'its cutroom asset id' };
  }
  if (h.url) {
    const loc = plainLocation(h.url);
    const a = assets.find((x) => x.url && plainLocation(x.url) === loc);
    if (a) return { asset: a, via: 'its path' };
    // The file an asset was imported from, when only one asset was (a file imported twice names neither).
    const from = assets.filter((x) => x.importedFrom === loc);
    if (from.length === 1) return { asset: from[0]!, via: 'the file it was imported from' };
    const id = UUID.exec(baseName(loc))?.[0];
    const b = id ? byId(id) : undefined;
    if (b) return { asset: b, via: 'the asset id in its file name' };
  }
  let ambiguous: Resolved['ambiguous'];
  for (const raw of h.names) {
    const name = raw.trim();
    if (!name) continue;
    const id = UUID.exec(name)?.[0];
    if (id && byId(id)) return { asset: byId(id), via: 'the asset id in its name' };
    const exact = assets.filter((a) => a.names.some((n) => n === name || stem(n) === stem(name)));
    if (exact.length === 1) return { asset: exact[0], via: `its name "${name}"` };
    if (exact.length > 1) ambiguous ??= { name, assets: exact };
    // A reel (8 characters at most in an EDL) that begins an asset id.
    if (/^[0-9a-f]{4,8}$/i.test(name)) {
      const prefixed = assets.filter((a) => a.id.toLowerCase().startsWith(name.toLowerCase()));
      if (prefixed.length === 1) return { asset: prefixed[0], via: `its reel ${name}` };
    }
  }
  return ambiguous ? { ambiguous } : {};
}

/** An asset as a note names it: its id and what it is called. */
const labelOf = (a: AssetCandidate) =>
  a.names[0] && a.names[0] !== a.id ? `${a.id} (${quoteOf(a.names[0], 80)})` : a.id;

/** Why a clip's media maps to no asset, and how to map it by hand. */
function unmappedMessage(h: MediaHints, r: Resolved): string {
  const key = h.names.find((n) => n.trim())?.trim() ?? (h.url ? baseName(plainLocation(h.url)) : undefined);
  const how = `map it with media_map: {"${quoteOf(key ?? 'its name or path', 80)}": "<asset id>"}`;
  if (r.ambiguous) {
    const listed = r.ambiguous.assets.slice(0, 5).map(labelOf).join(', ');
    const more = r.ambiguous.assets.length > 5 ? ` and ${r.ambiguous.assets.length - 5} more` : '';
    return `its media ("${quoteOf(r.ambiguous.name, 120)}") matches ${r.ambiguous.assets.length} assets: ${listed}${more}; choose one with media_map: {"${quoteOf(r.ambiguous.name, 80)}": "<asset id>"}`;
  }
  return `its media (${describeHints(h)}) matches no asset of the project; ${how}`;
}

/** Why a clip that plays the whole of its media has no length: no asset, an image, or an asset not measured. */
function unsizedMessage(h: MediaHints, r: Resolved): string {
  if (!r.asset) return unmappedMessage(h, r);
  if (r.asset.kind === 'image') return `it maps to asset ${labelOf(r.asset)}, an image, which has no length of its own`;
  return `the length of asset ${labelOf(r.asset)} is not known (it could not be measured)`;
}

const relinkNote = (h: MediaHints, from: string, to: string) =>
  `its media was relinked in the editor: the file still carries cutroom's id of asset ${from}, but its path (${quoteOf(plainLocation(h.url ?? ''), 200)}) is asset ${to}'s; the path was taken, as the editor meant`;

export interface DraftResult {
  /** An edit draft as compose_edit takes it (EditDraftSchema). */
  draft: {
    video_output_resolution: string;
    video_output_fps: number;
    video_output_filename?: string;
    video_series_sequential: ({
      video_id: string;
      video_start_time: number;
      video_end_time: number;
      audio_levels: { audio_level: number; start_time: number; end_time: number }[];
      crop?: { zoom: number; position_x: number; position_y: number };
      focus?: { x: number; y: number } | 'auto';
      sound_handles?: { before?: number; after?: number };
    } & ExchangeMix)[];
    audio_overlay: ({
      audio_id: string;
      audio_start_time: number;
      audio_end_time: number;
      audio_levels: { audio_level: number; start_time: number; end_time: number }[];
      from?: number;
    } & ExchangeMix)[];
  };
  notes: ImportNote[];
  /** How each cut's and overlay's media was found, for the agent to check. */
  mapped: string[];
  /** Assets played whole whose length is not known: measured, they let those cuts be placed (import_edit). */
  unsized: string[];
}

/**
 * An EDL event's source span in seconds: its timecodes counted at the source's rate where that is another timecode
 * rate than the EDL's (and the labels are valid there), else at the EDL's. Drop-frame as the event's FCM line says:
 * at the EDL's rate when its base is 30 or 60 (an EDL read at 30 may mean 29.97), at a source's when that is 29.97 or
 * 59.94.
 */
function edlSourceSpan(
  src: NonNullable<ImportedCut['edlSource']>,
  edlRate: { num: number; den: number },
  sourceRate?: { num: number; den: number },
): { inSec: number; lengthSec: number; frameSec: number } | undefined {
  for (const rate of sourceRate && sourceRate.num * edlRate.den !== edlRate.num * sourceRate.den
    ? [sourceRate, edlRate]
    : [edlRate]) {
    const base = timecodeBase(rate);
    if (!base) continue;
    const drop = src.drop && (rate === edlRate || dropFrameRate(rate));
    const [a, b] = src.tc.map((tc) => timecodeToFrames(tc, base, drop));
    if (a === undefined || b === undefined) continue;
    const sec = (f: number) => (f * rate.den) / rate.num;
    return { inSec: sec(a), lengthSec: sec(b - a), frameSec: sec(1) };
  }
  return undefined;
}

/**
 * A cut's sound handles at its edges as imported (ms). A handle is a stretch of pause in the source beyond the edge it
 * was measured from: where the edge moved out into it, what is left of it; where it moved in by up to a frame (the
 * round trip's rounding to frames), the handle as it was (beyond the edge lies the cut's own sound, then the pause);
 * where an editor moved it further in, what lies beyond is not known to be pause, and that side has none (said).
 */
function handlesAt(
  h: NonNullable<ImportedCut['soundHandles']>,
  inMs: number,
  outMs: number,
  frameMs: number,
): { kept?: { before?: number; after?: number }; dropped?: string } {
  const side = (handle: number, outward: number) =>
    handle <= 0 || outward < -(frameMs + 1)
      ? 0
      : Math.max(0, Math.floor(Math.min(handle * 1000, handle * 1000 - outward) + 1e-6));
  const before = side(h.before, Math.round(h.inSec * 1000) - inMs);
  const after = side(h.after, outMs - Math.round(h.outSec * 1000));
  const lost = [...(h.before > 0 && !before ? ['in'] : []), ...(h.after > 0 && !after ? ['out'] : [])];
  return {
    ...(before || after
      ? { kept: { ...(before ? { before: before / 1000 } : {}), ...(after ? { after: after / 1000 } : {}) } }
      : {}),
    ...(lost.length
      ? {
          dropped: `its ${lost.join(' and ')} point moved from where cutroom measured the pause beyond it, so its join there is not crossfaded (it fades out and in)`,
        }
      : {}),
  };
}

const fpsValue = (f: { num: number; den: number }) => Math.round((f.num / f.den) * 1000) / 1000;
const s = (ms: number) => ms / 1000;

export function toEditDraft(
  t: ImportedTimeline,
  assets: AssetCandidate[],
  defaults: { fps?: number; resolution?: string } = {},
  mediaMap: MediaMap = {},
): DraftResult {
  const notes = [...t.notes];
  const mapped: string[] = [];
  const unsized: string[] = [];
  const usedKeys = new Set<string>();
  const resolve = (h: MediaHints) => {
    const r = resolveMedia(h, assets, mediaMap);
    if (r.mapKey !== undefined) usedKeys.add(r.mapKey);
    return r;
  };
  // The edit's rate as a number (29.97), and the exact fraction the render uses for it (normalize.ts). A rate the
  // file gives that cutroom cannot render (0, negative, absurd) is an error, and the clips are placed at 30 fps.
  let fpsNumber = defaults.fps ?? (t.fps ? fpsValue(t.fps) : 30);
  if (!(fpsNumber >= 1 && fpsNumber <= 120)) {
    notes.push({
      severity: 'error',
      place: 'the file',
      message: `its frame rate (${t.fps ? `${t.fps.num}/${t.fps.den}` : fpsNumber}) is not one cutroom renders (1 to 120 fps): give fps`,
    });
    fpsNumber = 30;
  }
  const exact = fpsRational(fpsNumber);
  const frameMs = (frames: number) => Math.round((frames * exact.den * 1000) / exact.num);
  const resolution = defaults.resolution ?? (t.width && t.height ? `${t.width}x${t.height}` : '1920x1080');

  const cuts: DraftResult['draft']['video_series_sequential'] = [];
  let elapsedSec = 0;
  let recordFrames = 0;
  for (const cut of t.cuts) {
    const c = { ...cut, place: quoteOf(cut.place, 120) };
    let found: Resolved | undefined;
    if (c.wholeMedia) {
      // A clip the file gives no range: the whole of its asset, in the edit's frames that fit in it.
      found = resolve(c.media);
      const whole = found.asset?.durationSec;
      if (!found.asset || whole === undefined) {
        if (found.asset) unsized.push(found.asset.id);
        const why = unsizedMessage(c.media, found);
        notes.push({
          severity: 'error',
          place: c.place,
          message: `the clip has no source_range and its media no available_range, so it plays its whole asset; but ${why}. It was left out`,
        });
        continue;
      }
      c.durationSec = (Math.floor((whole * exact.num) / exact.den + 1e-9) * exact.den) / exact.num;
      notes.push({
        severity: 'warning',
        place: c.place,
        message: `the clip has no source_range and its media no available_range: it plays the whole of asset ${labelOf(found.asset)} (${whole.toFixed(3)} s, as measured)`,
      });
    }
    if (!(c.durationSec > 0)) {
      // A negative length must not eat into the next cut's: the clip is left out whole.
      notes.push({
        severity: 'warning',
        place: c.place,
        message: `its length (${c.durationSec} s) is not a length; it was left out`,
      });
      continue;
    }
    found ??= resolve(c.media);
    const { asset, via, relinkedFrom } = found;
    if (relinkedFrom)
      notes.push({ severity: 'warning', place: c.place, message: relinkNote(c.media, relinkedFrom, asset!.id) });
    // The cut's end on the timeline, on a frame: the frames it covers are kept, whatever the file's rounding.
    elapsedSec += c.durationSec;
    const endFrame = Math.round((elapsedSec * exact.num) / exact.den);
    const frames = endFrame - recordFrames;
    if (frames <= 0) {
      notes.push({
        severity: 'warning',
        place: c.place,
        message: 'this clip is shorter than one frame on the timeline; it was left out',
      });
      continue;
    }
    const durationMs = frameMs(endFrame) - frameMs(recordFrames);
    recordFrames = endFrame;
    if (!asset) {
      notes.push({ severity: 'error', place: c.place, cut: cuts.length, message: unmappedMessage(c.media, found) });
    } else {
      mapped.push(`cut ${cuts.length + 1} (${c.place}): asset ${labelOf(asset)}, found by ${via}`);
      if (asset.kind !== 'video' && asset.kind !== 'unknown')
        notes.push({
          severity: 'error',
          place: c.place,
          cut: cuts.length,
          message: `its media maps to asset ${asset.id}, which is ${asset.kind === 'image' ? 'an image' : 'audio'}, not a video`,
        });
    }
    // A source with a constant rate: the millisecond at or just before its frame, as cutroom starts a cut on the
    // next frame start. Without one the in point is played as it is: the millisecond at or just after the time.
    // An EDL's source timecodes count at the source's own rate (as conform tools read them) and from its timecode
    // (OTIO and FCPXML readers took that off already).
    let sourceInSec = c.sourceInSec;
    if (c.edlSource && t.fps) {
      const read = edlSourceSpan(c.edlSource, t.fps, asset?.rate);
      if (read) {
        sourceInSec = read.inSec;
        const recordSec = (c.edlSource.recordFrames * t.fps.den) / t.fps.num;
        if (read.lengthSec > 0 && Math.abs(read.lengthSec - recordSec) > read.frameSec / 2)
          notes.push({
            severity: 'warning',
            place: c.place,
            message:
              'its source and record lengths differ (a speed change): it plays at its own speed for its record length',
          });
      }
      if (asset?.timecodeSec) sourceInSec -= asset.timecodeSec;
    }
    const fileInMs = asset?.rate ? frameStartMs(sourceInSec, asset.rate) : Math.ceil(sourceInSec * 1000 - 1e-6);
    if (fileInMs < 0)
      notes.push({
        severity: 'warning',
        place: c.place,
        message: `its in point is ${(-fileInMs / 1000).toFixed(3)} s before its media starts; it starts at the media's start`,
      });
    const inMs = Math.max(0, fileInMs);
    const handles =
      c.soundHandles && !relinkedFrom ? handlesAt(c.soundHandles, inMs, inMs + durationMs, frameMs(1)) : {};
    if (handles.dropped)
      notes.push({ severity: 'warning', place: c.place, cut: cuts.length, message: handles.dropped });
    cuts.push({
      video_id: asset?.id ?? `unmapped:${c.place}`,
      video_start_time: s(inMs),
      video_end_time: s(inMs + durationMs),
      audio_levels: fitLevels(
        c.levels,
        { fromSec: c.sourceInSec, toSec: c.sourceInSec + c.durationSec, fromMs: inMs, toMs: inMs + durationMs },
        c.levelSpan,
      ),
      ...(c.crop ? { crop: c.crop } : {}),
      ...(c.focus ? { focus: c.focus } : {}),
      ...(handles.kept ? { sound_handles: handles.kept } : {}),
      ...c.mix,
    });
  }

  const overlays: DraftResult['draft']['audio_overlay'] = [];
  // Where the last picture ends: an overlay past it (an editor trimmed the pictures under it) ends there.
  const totalMs = frameMs(recordFrames);
  for (const overlay of t.overlays) {
    const o = { ...overlay, place: quoteOf(overlay.place, 120) };
    const found = resolve(o.media);
    const { asset, via, relinkedFrom } = found;
    if (relinkedFrom)
      notes.push({ severity: 'warning', place: o.place, message: relinkNote(o.media, relinkedFrom, asset!.id) });
    const startMs = Math.round(o.startSec * 1000);
    let endMs = startMs + Math.round(o.durationSec * 1000);
    if (!(endMs > startMs)) {
      notes.push({ severity: 'warning', place: o.place, message: 'this audio clip has no length; it was left out' });
      continue;
    }
    if (cuts.length && startMs >= totalMs) {
      notes.push({
        severity: 'warning',
        place: o.place,
        message: `it starts at ${s(startMs)} s, where the pictures have ended (${s(totalMs)} s); it was left out`,
      });
      continue;
    }
    if (cuts.length && endMs > totalMs) {
      // Past by less than a frame is the pictures' rounding to frames (an edit's own overlay ending with it): quietly.
      if (endMs - totalMs > frameMs(1))
        notes.push({
          severity: 'warning',
          place: o.place,
          message: `it ran ${((endMs - totalMs) / 1000).toFixed(3)} s past the last picture (the pictures under it were trimmed?); it now ends with the timeline at ${s(totalMs)} s`,
        });
      endMs = totalMs;
    }
    if (!asset)
      notes.push({
        severity: 'error',
        place: o.place,
        overlay: overlays.length,
        message: unmappedMessage(o.media, found),
      });
    else {
      mapped.push(`overlay ${overlays.length + 1} (${o.place}): asset ${labelOf(asset)}, found by ${via}`);
      if (asset.kind === 'image')
        notes.push({
          severity: 'error',
          place: o.place,
          overlay: overlays.length,
          message: `its media maps to asset ${asset.id}, an image, which has no sound`,
        });
    }
    // An overlay that starts inside its source plays from there (the edit's `from`), to the millisecond.
    const fromMs = Math.round(o.sourceInSec * 1000);
    overlays.push({
      audio_id: asset?.id ?? `unmapped:${o.place}`,
      audio_start_time: s(startMs),
      audio_end_time: s(endMs),
      audio_levels: fitLevels(
        movedWith(o),
        { fromSec: o.startSec, toSec: o.startSec + o.durationSec, fromMs: startMs, toMs: endMs, fromStart: true },
        o.levelSpan && { fromSec: o.startSec, toSec: o.startSec + (o.levelSpan.toSec - o.levelSpan.fromSec) },
      ),
      ...(fromMs > 0 ? { from: s(fromMs) } : {}),
      ...o.mix,
    });
  }
  for (const k of Object.keys(mediaMap)) {
    if (!usedKeys.has(k))
      notes.push({
        severity: 'warning',
        place: 'media_map',
        message: `"${quoteOf(k, 120)}" names no clip's media in the file (give a name or path as the file has it, or its file name)`,
      });
  }
  return {
    draft: {
      video_output_resolution: resolution,
      video_output_fps: fpsNumber,
      ...(t.filename ? { video_output_filename: t.filename } : fileNameOf(t.name)),
      video_series_sequential: cuts,
      audio_overlay: overlays,
    },
    notes,
    mapped,
    unsized,
  };
}

/**
 * The millisecond at or just before the start of the source frame that shows at `sec` or next (a file may count
 * source time in another rate: an EDL counts it in the edit's frames). cutroom starts the cut on that frame.
 */
function frameStartMs(sec: number, rate: { num: number; den: number }): number {
  const k = Math.ceil((sec * rate.num) / rate.den - 1e-6);
  return Math.floor(((k * rate.den) / rate.num) * 1000 + 1e-6);
}

/** An overlay's windows are on the timeline clock: when an editor moved the overlay, they move with it. */
function movedWith(o: ImportedOverlay): ImportedOverlay['levels'] {
  const shift = o.levelSpan ? o.startSec - o.levelSpan.fromSec : 0;
  return Math.abs(shift) < 1e-6
    ? o.levels
    : o.levels.map((l) => ({ ...l, fromSec: l.fromSec + shift, toSec: l.toSec + shift }));
}

/**
 * A clip's level windows fitted to the span it was given here. An edge at the clip's start or end in the file, or at
 * the span the levels were written against (an editor may have trimmed the clip since), or beyond, is that start or
 * end as put on frames here: rounding to frames and trims leave no stretch of the clip without its level. Any
 * other edge is its own millisecond, within the span; windows left empty are dropped. With `fromStart` (an overlay,
 * whose sound plays from its beginning wherever it is put) an edge is counted in whole milliseconds from the clip's
 * start, so that the clip's start and the edge, rounded apart, cannot move a window by a millisecond against its sound.
 */
function fitLevels(
  levels: { level: number; fromSec: number; toSec: number }[],
  span: { fromSec: number; toSec: number; fromMs: number; toMs: number; fromStart?: boolean },
  writtenFor?: { fromSec: number; toSec: number },
) {
  const near = (a: number, b: number | undefined) => b !== undefined && Math.abs(a - b) < 1e-6;
  const ms = (sec: number) =>
    span.fromStart ? span.fromMs + Math.round((sec - span.fromSec) * 1000) : Math.round(sec * 1000);
  return levels
    .map((l) => {
      const from =
        l.fromSec <= span.fromSec + 1e-6 || near(l.fromSec, writtenFor?.fromSec)
          ? span.fromMs
          : Math.min(span.toMs, ms(l.fromSec));
      const to =
        l.toSec >= span.toSec - 1e-6 || near(l.toSec, writtenFor?.toSec)
          ? span.toMs
          : Math.max(span.fromMs, ms(l.toSec));
      return { audio_level: roundLevel(l.level), start_time: s(from), end_time: s(to) };
    })
    .filter((l) => l.end_time > l.start_time);
}

/** Levels travel as decibels in some formats: six decimals keep what an edit can say and drop the float noise. */
const roundLevel = (level: number) => Math.min(1, Math.max(0, Math.round(level * 1e6) / 1e6));

function describeHints(h: MediaHints): string {
  const parts = [
    h.assetId && `id ${quoteOf(h.assetId)}`,
    h.url && `at ${quoteOf(plainLocation(h.url), 200)}`,
    h.names.length &&
      `named ${h.names
        .slice(0, 3)
        .map((n) => `"${quoteOf(n)}"`)
        .join(', ')}`,
  ].filter(Boolean);
  return parts.join(', ') || 'no name or path';
}

/**
 * The render's file name a timeline's own name gives ("Rough cut v2" -> "Rough cut v2.mp4"): what the person called
 * the sequence in their editor names what they get back. Characters a file name should not hold become "-".
 */
export function fileNameOf(name: string | undefined): { video_output_filename?: string } {
  const plain = (name ?? '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 120)
    .trim();
  if (!plain) return {};
  const file = `${plain}.${OUTPUT_FORMAT}`;
  return outputFilenameProblem(file) ? {} : { video_output_filename: file };
}
