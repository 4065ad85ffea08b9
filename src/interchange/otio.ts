// OpenTimelineIO JSON (the .otio file): a Timeline whose Stack holds one video track of Clips, a track of each
// cut's own sound, then one audio track per overlay, placed with Gaps. Times are RationalTime {rate, value}; a
// clip's source_range is in its source's frame rate (an overlay's starts at its `from`). OTIO has no standard
// volume, so levels (and cutroom's own ids, in and out points, crop, mix: gain, fades, role, duck, and sound handles)
// travel in clip metadata under the "cutroom" key. Pure: text in, text out.
import {
  MAX_IMPORT_ITEMS,
  heldExactly,
  noteList,
  quoteOf,
  rateFromNumber,
  seconds,
  soundHandlesFrom,
  type ExchangeMix,
  type ExportDocument,
  type ImportedCut,
  type ImportedOverlay,
  type ImportedTimeline,
  type ImportNote,
  type MediaHints,
} from './document.js';

const rt = (value: number, rate: number) => ({ OTIO_SCHEMA: 'RationalTime.1', rate, value });
const range = (start: number, duration: number, rate: number) => ({
  OTIO_SCHEMA: 'TimeRange.1',
  duration: rt(duration, rate),
  start_time: rt(start, rate),
});
const item = (schema: string, name: string, extra: Record<string, unknown>) => ({
  OTIO_SCHEMA: schema,
  metadata: {},
  name,
  source_range: null,
  effects: [],
  markers: [],
  enabled: true,
  ...extra,
});
const rateOf = (f: { num: number; den: number }) => f.num / f.den;

function reference(doc: ExportDocument, assetId: string) {
  const m = doc.media.get(assetId);
  // The media's own clock starts at its timecode: its first frame's label, as OpenTimelineIO's adapters write it.
  const available =
    m?.durationMs !== undefined
      ? range(
          m.rate ? (m.timecodeFrame ?? 0) : 0,
          m.rate ? (m.durationMs / 1000) * rateOf(m.rate) : m.durationMs / 1000,
          m.rate ? rateOf(m.rate) : 1,
        )
      : null;
  return {
    media_references: {
      DEFAULT_MEDIA: {
        OTIO_SCHEMA: 'ExternalReference.1',
        metadata: {},
        name: m?.name ?? assetId,
        available_range: available,
        available_image_bounds: null,
        target_url: m?.url ?? '',
      },
    },
    active_media_reference_key: 'DEFAULT_MEDIA',
  };
}

const levelsMeta = (levels: { level: number; fromMs: number; toMs: number }[]) =>
  levels.map((l) => ({ level: l.level, start_ms: l.fromMs, end_ms: l.toMs }));

export function writeOtio(doc: ExportDocument): string {
  const fps = rateOf(doc.fps);
  const clipOf = (c: ExportDocument['clips'][number], role: 'picture' | 'sound') => {
    const m = doc.media.get(c.assetId);
    const sourceRate = m?.rate ? rateOf(m.rate) : fps;
    // In the source's rate when the timeline is at it: its first frame and the cut's frames, whole. At another rate,
    // in the timeline's: the cut's length is whole frames there (a fraction of a frame in the source's rate makes
    // OpenTimelineIO's own EDL writer drop a frame), its start the source time on that clock.
    const rate = Math.abs(sourceRate - fps) < 1e-9 ? sourceRate : fps;
    const tc = m?.rate ? ((m.timecodeFrame ?? 0) * rate) / sourceRate : 0;
    const start =
      (rate === sourceRate && c.sourceInFrame !== undefined ? c.sourceInFrame : seconds(c.sourceIn) * rate) + tc;
    const duration = rate === sourceRate ? (c.frames * doc.fps.den * rate) / doc.fps.num : c.frames;
    return {
      ...item('Clip.2', m?.name ?? c.assetId, {
        source_range: range(start, duration, rate),
        ...reference(doc, c.assetId),
      }),
      metadata: {
        cutroom: {
          asset_id: c.assetId,
          role,
          in_ms: c.inMs,
          out_ms: c.outMs,
          levels: levelsMeta(c.levels),
          ...(c.crop ? { crop: c.crop } : {}),
          ...(c.focus ? { focus: c.focus } : {}),
          ...(c.mix ? { mix: c.mix } : {}),
          ...(c.soundHandles ? { sound_handles: c.soundHandles } : {}),
        },
      },
    };
  };
  const video = item('Track.1', 'V1', { kind: 'Video', children: doc.clips.map((c) => clipOf(c, 'picture')) });
  const sound = item('Track.1', 'A1', { kind: 'Audio', children: doc.clips.map((c) => clipOf(c, 'sound')) });
  const overlays = doc.overlays.map((o, k) => {
    const m = doc.media.get(o.assetId);
    // On the timeline's frames, whole (the exact milliseconds travel in the metadata, for cutroom to read back).
    const startFrames = Math.round((o.startMs / 1000) * fps);
    const endFrames = Math.max(startFrames + 1, Math.round((o.endMs / 1000) * fps));
    const children: unknown[] = [];
    if (startFrames > 0) children.push(item('Gap.1', '', { source_range: range(0, startFrames, fps) }));
    children.push({
      // Its source range starts where it plays from in its audio (`from`; the exact milliseconds in the metadata).
      ...item('Clip.2', m?.name ?? o.assetId, {
        source_range: range(Math.round(((o.fromMs ?? 0) / 1000) * fps), endFrames - startFrames, fps),
        ...reference(doc, o.assetId),
      }),
      metadata: {
        cutroom: {
          asset_id: o.assetId,
          role: 'overlay',
          start_ms: o.startMs,
          end_ms: o.endMs,
          levels: levelsMeta(o.levels),
          ...(o.fromMs ? { from_ms: o.fromMs } : {}),
          ...(o.mix ? { mix: o.mix } : {}),
        },
      },
    });
    return item('Track.1', `A${k + 2}`, { kind: 'Audio', children });
  });
  const timeline = {
    OTIO_SCHEMA: 'Timeline.1',
    metadata: {
      cutroom: {
        resolution: `${doc.width}x${doc.height}`,
        fps_num: doc.fps.num,
        fps_den: doc.fps.den,
        filename: doc.filename,
      },
    },
    name: doc.name,
    global_start_time: rt(0, fps),
    tracks: item('Stack.1', 'tracks', { children: [video, sound, ...overlays] }),
  };
  return `${JSON.stringify(timeline, null, 2)}\n`;
}

// ---- Reading ----

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const schemaOf = (v: Json) => (typeof v.OTIO_SCHEMA === 'string' ? v.OTIO_SCHEMA : '');
const kindOf = (v: Json) => schemaOf(v).split('.')[0] ?? '';
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * A RationalTime in seconds, or undefined when it is not one. Its rate as the fraction it means: editors write 29.97
 * for 30000/1001, and value/29.97 falls a hair past the frame (60 frames: 2.002002 s for 2.002 s).
 */
function timeSec(v: unknown): { sec: number; rate: number } | undefined {
  if (!isObj(v)) return undefined;
  const rate = num(v.rate);
  const value = num(v.value);
  const exact = rate === undefined ? undefined : rateFromNumber(rate);
  if (rate === undefined || value === undefined || !exact) return undefined;
  return { sec: (value * exact.den) / exact.num, rate };
}

function rangeSec(v: unknown): { start: number; duration: number; rate: number } | undefined {
  if (!isObj(v)) return undefined;
  const start = timeSec(v.start_time);
  const duration = timeSec(v.duration);
  if (!start || !duration) return undefined;
  return { start: start.sec, duration: duration.sec, rate: start.rate };
}

/** The first time of a TimeRange too large to hold exactly, described for a note; undefined when there is none. */
function tooLarge(range: unknown, name: string): string | undefined {
  if (!isObj(range)) return undefined;
  for (const key of ['start_time', 'duration']) {
    const t = range[key];
    const value = isObj(t) ? num(t.value) : undefined;
    const rate = isObj(t) ? num(t.rate) : undefined;
    if (value !== undefined && rate !== undefined && rate > 0 && !heldExactly(value, value / rate))
      return `its ${name} ${key} (${value} at rate ${rate})`;
  }
  return undefined;
}

function cutroomMeta(v: Json): Json | undefined {
  return isObj(v.metadata) && isObj(v.metadata.cutroom) ? v.metadata.cutroom : undefined;
}

/** A clip's active media reference (OTIO 0.15+'s media_references, or the older media_reference). */
function mediaRefOf(clip: Json): Json | undefined {
  if (isObj(clip.media_references)) {
    const key = typeof clip.active_media_reference_key === 'string' ? clip.active_media_reference_key : 'DEFAULT_MEDIA';
    const refs = clip.media_references;
    return isObj(refs[key]) ? refs[key] : (Object.values(refs).find(isObj) as Json | undefined);
  }
  return isObj(clip.media_reference) ? clip.media_reference : undefined;
}

/**
 * OTIO's JSON as OpenTimelineIO writes it: its serializer writes infinite and undefined numbers as bare Inf, -Inf
 * and NaN (or Infinity), which JSON has no word for. Outside strings they are read as null (a value not given).
 */
export function parseOtioJson(text: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
      continue;
    }
    const word = /^-?(?:Infinity|Inf|NaN)(?![A-Za-z0-9_])/.exec(text.slice(i, i + 10));
    if (word) {
      out += 'null';
      i += word[0].length - 1;
      continue;
    }
    out += c;
  }
  return JSON.parse(out);
}

function hintsOf(clip: Json): MediaHints {
  const names: string[] = [];
  if (typeof clip.name === 'string' && clip.name) names.push(clip.name);
  const ref = mediaRefOf(clip);
  let url: string | undefined;
  if (ref) {
    if (typeof ref.name === 'string' && ref.name) names.push(ref.name);
    if (kindOf(ref) === 'ExternalReference' && typeof ref.target_url === 'string' && ref.target_url)
      url = ref.target_url;
  }
  const meta = cutroomMeta(clip);
  const assetId = typeof meta?.asset_id === 'string' ? meta.asset_id : undefined;
  return { ...(assetId ? { assetId } : {}), ...(url ? { url } : {}), names };
}

/**
 * The span cutroom wrote a clip's levels against (its in and out, or an overlay's start and end), from its metadata.
 */
function levelSpanFrom(
  meta: Json | undefined,
  from: string,
  to: string,
): { levelSpan?: { fromSec: number; toSec: number } } {
  const a = num(meta?.[from]);
  const b = num(meta?.[to]);
  return a !== undefined && b !== undefined && b > a ? { levelSpan: { fromSec: a / 1000, toSec: b / 1000 } } : {};
}

function levelsFrom(meta: Json | undefined): { level: number; fromSec: number; toSec: number }[] {
  if (!Array.isArray(meta?.levels)) return [];
  return meta.levels.flatMap((l) => {
    if (!isObj(l)) return [];
    const level = num(l.level);
    const from = num(l.start_ms);
    const to = num(l.end_ms);
    return level !== undefined && from !== undefined && to !== undefined
      ? [{ level, fromSec: from / 1000, toSec: to / 1000 }]
      : [];
  });
}

/** cutroom's mix from its metadata: only numbers (normalizeEdit checks their ranges when the edit is made). */
function mixFrom(meta: Json | undefined): ExchangeMix | undefined {
  if (!isObj(meta?.mix)) return undefined;
  const mix: ExchangeMix = {};
  for (const k of ['gain_db', 'fade_in', 'fade_out', 'duck_db'] as const) {
    const v = num(meta.mix[k]);
    if (v !== undefined) mix[k] = v;
  }
  const role = meta.mix.role;
  if (role === 'dialogue' || role === 'music' || role === 'effects') mix.role = role;
  return Object.keys(mix).length ? mix : undefined;
}

/** What an item carries that cutroom cannot: effects (speed changes among them), markers are harmless. */
function effectNotes(v: Json, place: string, notes: ImportNote[]): void {
  if (!Array.isArray(v.effects)) return;
  for (const e of v.effects) {
    if (!isObj(e)) continue;
    const kind = kindOf(e);
    const what =
      kind === 'LinearTimeWarp' || kind === 'FreezeFrame'
        ? `a speed change (${kind}${num(e.time_scalar) !== undefined ? `, x${num(e.time_scalar)}` : ''})`
        : `an effect (${quoteOf(typeof e.effect_name === 'string' && e.effect_name ? e.effect_name : kind || 'unnamed')})`;
    notes.push({
      severity: 'warning',
      place,
      message: `${what} was dropped: cutroom plays clips at their own speed, without effects`,
    });
  }
}

export function readOtio(text: string): ImportedTimeline {
  const notes = noteList();
  const out: ImportedTimeline = { format: 'otio', cuts: [], overlays: [], notes };
  let root: unknown;
  try {
    root = parseOtioJson(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    notes.push({
      severity: 'error',
      place: 'the file',
      message: `it is not JSON (${(err as Error).message}); an .otio file is OpenTimelineIO's JSON`,
    });
    return out;
  }
  // A SerializableCollection holds timelines: take the first.
  if (isObj(root) && kindOf(root) === 'SerializableCollection' && Array.isArray(root.children)) {
    const timelines = root.children.filter((c) => isObj(c) && kindOf(c) === 'Timeline');
    if (timelines.length > 1)
      notes.push({
        severity: 'warning',
        place: 'the file',
        message: `it holds ${timelines.length} timelines; only the first was read`,
      });
    root = timelines[0];
  }
  if (!isObj(root) || kindOf(root) !== 'Timeline' || !isObj(root.tracks)) {
    notes.push({
      severity: 'error',
      place: 'the file',
      message: 'it holds no OpenTimelineIO Timeline (OTIO_SCHEMA "Timeline.1" with a tracks Stack)',
    });
    return out;
  }
  if (typeof root.name === 'string' && root.name) out.name = root.name;
  const meta = cutroomMeta(root);
  if (meta) {
    const res = typeof meta.resolution === 'string' ? /^(\d+)x(\d+)$/.exec(meta.resolution) : null;
    if (res) {
      out.width = Number(res[1]);
      out.height = Number(res[2]);
    }
    const n = num(meta.fps_num);
    const d = num(meta.fps_den);
    if (n && d) out.fps = { num: n, den: d };
    if (typeof meta.filename === 'string') out.filename = meta.filename;
  }
  const tracks = Array.isArray(root.tracks.children) ? root.tracks.children.filter(isObj) : [];
  if (!out.fps) {
    const g = timeSec(root.global_start_time);
    const first = tracks
      .flatMap((t) => (Array.isArray(t.children) ? t.children.filter(isObj) : []))
      .map((c) => rangeSec(c.source_range))
      .find(Boolean);
    const rate = g?.rate ?? first?.rate;
    if (rate) out.fps = rateFromNumber(rate);
  }
  const videoTracks = tracks.filter((t) => t.kind === 'Video');
  const audioTracks = tracks.filter((t) => t.kind === 'Audio');
  if (!videoTracks.length) notes.push({ severity: 'error', place: 'the timeline', message: 'it has no video track' });
  videoTracks.slice(1).forEach((t, i) =>
    notes.push({
      severity: 'warning',
      place: `video track ${i + 2} (${quoteOf(String(t.name ?? ''))})`,
      message: 'only the first video track is read: cutroom plays one picture at a time',
    }),
  );

  // The picture: clips in order; gaps close up (cutroom has no black); transitions become cuts.
  const video = videoTracks[0];
  // One more item than import_edit takes is enough for it to refuse the file: the rest is not read.
  const videoItems = Array.isArray(video?.children) ? video.children.slice(0, MAX_IMPORT_ITEMS + 1).filter(isObj) : [];
  videoItems.forEach((it, i) => {
    const place = `video track 1, item ${i + 1}${typeof it.name === 'string' && it.name ? ` ("${quoteOf(it.name)}")` : ''}`;
    const kind = kindOf(it);
    if (kind === 'Transition') {
      notes.push({
        severity: 'warning',
        place,
        message: `a transition (${quoteOf(String(it.transition_type ?? 'unnamed'))}) became a straight cut: cutroom has no transitions`,
      });
      return;
    }
    if (kind === 'Gap') {
      const r = rangeSec(it.source_range);
      notes.push({
        severity: 'warning',
        place,
        message: `a gap${r ? ` of ${r.duration.toFixed(3)} s` : ''} was closed up: cutroom plays its cuts back to back`,
      });
      return;
    }
    if (kind !== 'Clip') {
      notes.push({
        severity: 'warning',
        place,
        message: `a ${quoteOf(kind || 'nameless')} item is not something cutroom can play; it was left out`,
      });
      return;
    }
    const huge =
      tooLarge(it.source_range, 'source_range') ?? tooLarge(mediaRefOf(it)?.available_range, "media's available_range");
    if (huge) {
      notes.push({ severity: 'error', place, message: `${huge} is too large to hold exactly; the clip was left out` });
      return;
    }
    // The media's own clock: its available_range starts at its first frame's time (a timecode); an in point in the
    // file is on that clock, cutroom's from the media's start. Without a source_range a clip plays its whole media:
    // its available_range, or without one the whole asset it maps to (to-edit.ts, once the asset is measured).
    const available = rangeSec(mediaRefOf(it)?.available_range);
    const wholeMedia = !rangeSec(it.source_range) && !available;
    const r = rangeSec(it.source_range) ?? available ?? { start: 0, duration: 0, rate: 0 };
    if (!rangeSec(it.source_range) && available)
      notes.push({
        severity: 'warning',
        place,
        message: `the clip has no source_range: it plays its whole media (${r.duration.toFixed(3)} s, its available_range)`,
      });
    if (available?.start) r.start -= available.start;
    if (it.enabled === false) {
      notes.push({ severity: 'warning', place, message: 'the clip is disabled in the file; it was left out' });
      return;
    }
    effectNotes(it, place, notes);
    const m = cutroomMeta(it);
    const mix = mixFrom(m);
    const handles = soundHandlesFrom(m?.sound_handles, m?.in_ms, m?.out_ms);
    const cut: ImportedCut = {
      media: hintsOf(it),
      sourceInSec: r.start,
      durationSec: r.duration,
      levels: levelsFrom(m),
      ...levelSpanFrom(m, 'in_ms', 'out_ms'),
      place,
      ...(wholeMedia ? { wholeMedia } : {}),
      ...(mix ? { mix } : {}),
      ...(handles ? { soundHandles: handles } : {}),
    };
    if (isObj(m?.crop)) {
      const z = num(m.crop.zoom);
      const x = num(m.crop.position_x);
      const y = num(m.crop.position_y);
      if (z !== undefined && x !== undefined && y !== undefined) cut.crop = { zoom: z, position_x: x, position_y: y };
    }
    if (m?.focus === 'auto') cut.focus = 'auto';
    else if (isObj(m?.focus)) {
      const x = num(m.focus.x);
      const y = num(m.focus.y);
      if (x !== undefined && y !== undefined) cut.focus = { x, y };
    }
    out.cuts.push(cut);
  });

  // The sound: a track of cutroom's cut sound carries the cuts' levels; any other audio clip is an overlay.
  audioTracks.slice(0, MAX_IMPORT_ITEMS + 1).forEach((t, ti) => {
    let at = 0;
    const items = Array.isArray(t.children) ? t.children.slice(0, MAX_IMPORT_ITEMS + 1).filter(isObj) : [];
    items.forEach((it, i) => {
      if (out.cuts.length + out.overlays.length > MAX_IMPORT_ITEMS) return;
      const place = `audio track ${ti + 1}, item ${i + 1}${typeof it.name === 'string' && it.name ? ` ("${quoteOf(it.name)}")` : ''}`;
      const kind = kindOf(it);
      // Without a source_range a clip plays its whole media, as its available_range gives it.
      const available = kind === 'Clip' ? rangeSec(mediaRefOf(it)?.available_range) : undefined;
      const r = rangeSec(it.source_range) ?? available;
      if (kind === 'Transition') {
        notes.push({
          severity: 'warning',
          place,
          message: 'an audio transition was dropped: cutroom has no transitions',
        });
        return; // Transitions overlap their neighbours: they take no time of their own.
      }
      const start = at;
      at += r?.duration ?? 0;
      if (kind === 'Gap') return;
      if (kind === 'Clip' && !r) {
        // The sound of a picture clip that plays its whole asset too: that cut's own sound.
        if (out.cuts.some((c) => c.wholeMedia && sameMedia(c.media, hintsOf(it)))) return;
        notes.push({
          severity: 'warning',
          place,
          message:
            'an audio clip with no source_range, whose media has no available_range, was left out: the file does not say how long it plays, so nor where what follows it on its track starts',
        });
        return;
      }
      if (kind !== 'Clip' || !r) {
        notes.push({
          severity: 'warning',
          place,
          message: `a ${quoteOf(kind || 'nameless')} item without a usable source_range was left out`,
        });
        return;
      }
      const m = cutroomMeta(it);
      if (m?.role === 'sound' || m?.role === 'picture') return; // the cut's own sound: its levels came with the picture
      const huge =
        tooLarge(it.source_range, 'source_range') ??
        tooLarge(mediaRefOf(it)?.available_range, "media's available_range");
      if (huge) {
        notes.push({
          severity: 'error',
          place,
          message: `${huge} is too large to hold exactly; the clip was left out`,
        });
        return;
      }
      if (it.enabled === false) {
        notes.push({ severity: 'warning', place, message: 'the clip is disabled in the file; it was left out' });
        return;
      }
      if (!rangeSec(it.source_range))
        notes.push({
          severity: 'warning',
          place,
          message: `the clip has no source_range: it plays its whole media (${r.duration.toFixed(3)} s, its available_range)`,
        });
      effectNotes(it, place, notes);
      // cutroom's own milliseconds, where the file still places the clip on the frames they round to (not moved).
      const ms =
        m && num(m.start_ms) !== undefined && num(m.end_ms) !== undefined
          ? { from: num(m.start_ms)! / 1000, to: num(m.end_ms)! / 1000 }
          : undefined;
      const sameFrames =
        ms &&
        Math.round(ms.from * r.rate) === Math.round(start * r.rate) &&
        Math.max(Math.round(ms.from * r.rate) + 1, Math.round(ms.to * r.rate)) ===
          Math.round((start + r.duration) * r.rate);
      // Where it plays from in its audio: cutroom's exact milliseconds where the file still starts it on their frame.
      const sourceIn = r.start - (available?.start ?? 0);
      const fromMs = num(m?.from_ms);
      const exactFrom =
        fromMs !== undefined && Math.round((fromMs / 1000) * r.rate) === Math.round(sourceIn * r.rate)
          ? fromMs / 1000
          : sourceIn;
      const mix = mixFrom(m);
      const overlay: ImportedOverlay = {
        media: hintsOf(it),
        startSec: sameFrames ? ms!.from : start,
        durationSec: sameFrames ? ms!.to - ms!.from : r.duration,
        sourceInSec: exactFrom,
        levels: levelsFrom(m),
        ...levelSpanFrom(m, 'start_ms', 'end_ms'),
        ...(mix ? { mix } : {}),
        place,
      };
      // A foreign audio clip that mirrors a cut (same media, same place) is that cut's sound, not an overlay.
      if (!m && mirrorsCut(out.cuts, overlay)) return;
      out.overlays.push(overlay);
    });
  });
  return out;
}

/** Whether two clips name the same media: the same link or path, or the same first name. */
const sameMedia = (a: MediaHints, b: MediaHints) =>
  !!((a.url && a.url === b.url) || (a.names[0] && a.names[0] === b.names[0]));

/** An audio clip lying exactly under a cut of the same media (editors write a clip's sound on its own track). */
function mirrorsCut(cuts: ImportedCut[], o: ImportedOverlay): boolean {
  let at = 0;
  for (const c of cuts) {
    const same = sameMedia(c.media, o.media);
    if (same && Math.abs(at - o.startSec) < 0.001 && Math.abs(c.sourceInSec - o.sourceInSec) < 0.001) return true;
    at += c.durationSec;
  }
  return false;
}
