// From an edit as a model wrote it to the canonical edit and a timeline in milliseconds, with every problem
// that can be found without media reported at its JSON pointer. Pure: no I/O.
import {
  DEFAULT_FILENAME,
  DEFAULT_FPS,
  OUTPUT_PRESET_NAMES,
  MAX_HEIGHT,
  MAX_WIDTH,
  resolvePreset,
  LOUDNESS_PRESETS,
  MAX_TARGET_LUFS,
  MAX_TRUE_PEAK_DB,
  MIN_TARGET_LUFS,
  MIN_TRUE_PEAK_DB,
  type Loudness,
  EDIT_VERSION,
  DEFAULT_DUCK_DB,
  MAX_DUCK_DB,
  MAX_GAIN_DB,
  MIN_GAIN_DB,
  ROLES,
  MAX_FPS,
  MIN_FPS,
  MAX_SOUND_HANDLE,
  OUTPUT_FORMAT,
  type AudioLevel,
  type AudioSegment,
  type Crop,
  type Focus,
  type SoundHandles,
  type Diagnostic,
  type Edit,
  type VideoSegment,
} from './model.js';
import { MAX_MS, formatShort, formatTimecode, parseTimecode } from './timecode.js';
import {
  CAPTION_POSITIONS,
  DEFAULT_CAPTION_STYLE,
  MAX_CAPTION_MARGIN,
  MAX_CAPTION_SIZE,
  MIN_CAPTION_SIZE,
  type CaptionStyle,
  type Captions,
} from './model.js';

export interface LevelWindow {
  level: number;
  startMs: number;
  endMs: number;
}

/** A cut's or overlay's mix beyond its level windows (model.ts MixFields). */
export interface Mix {
  gainDb?: number;
  fadeInMs?: number;
  fadeOutMs?: number;
}

export interface TimelineCut extends Mix {
  index: number;
  assetId: string;
  inMs: number;
  outMs: number;
  /** Where the cut sits on the output timeline. */
  startMs: number;
  endMs: number;
  /** On the source clip's clock, like inMs/outMs. */
  levels: LevelWindow[];
  crop?: Crop;
  /** Framed around a point of the source picture (0-1), or following its action (model.ts FocusSchema). */
  focus?: Focus;
  /** Pause in its source before its in point and after its out point, ms (model.ts SoundHandlesSchema). */
  soundHandles?: { beforeMs: number; afterMs: number };
}

export interface TimelineOverlay extends Mix {
  index: number;
  /** Where in the audio it starts playing. */
  fromMs?: number;
  role?: (typeof ROLES)[number];
  /** Music: dB it is lowered by under speech. */
  duckDb?: number;
  assetId: string;
  startMs: number;
  endMs: number;
  /** On the output timeline's clock. */
  levels: LevelWindow[];
}

export interface Fps {
  num: number;
  den: number;
  value: number;
}

export interface Timeline {
  width: number;
  height: number;
  fps: Fps;
  filename: string;
  cuts: TimelineCut[];
  overlays: TimelineOverlay[];
  totalMs: number;
  /** The integrated loudness and true peak ceiling the output is brought to, when asked. */
  loudness?: { targetLufs: number; truePeakDb: number };
  /** The cuts' own sound levelled to one loudness (default true; level_dialogue false turns it off). */
  levelDialogue: boolean;
  /** Captions asked for (the edit's `captions`): whether burned in, and their look. */
  captions?: { burn: boolean; style: CaptionStyle };
}

export interface Normalized {
  /** Present when the edit is structurally sound (it may still have semantic errors). */
  edit?: Edit;
  timeline?: Timeline;
  diagnostics: Diagnostic[];
}

export const LONG_EDIT_MS = 10 * 60_000;
const KNOWN_TOP = new Set([
  'video_edit_version',
  'video_output_format',
  'video_output_resolution',
  'video_output_fps',
  'video_output_filename',
  'video_series_sequential',
  'audio_overlay',
  'name',
  'description',
  'skip_rendering',
  'subtitle_from_audio_overlay',
  'loudness',
  'level_dialogue',
  'captions',
]);

class Collector {
  readonly list: Diagnostic[] = [];
  error(path: string, message: string, hint?: string) {
    this.list.push({ severity: 'error', path, message, ...(hint ? { hint } : {}) });
  }
  warning(path: string, message: string, hint?: string) {
    this.list.push({ severity: 'warning', path, message, ...(hint ? { hint } : {}) });
  }
  get errors() {
    return this.list.filter((d) => d.severity === 'error').length;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Parses "1920x1080" (any case, spaces allowed). */
export function parseResolution(value: unknown): { width: number; height: number } | { reason: string } {
  if (typeof value !== 'string') return { reason: 'must be a string WIDTHxHEIGHT such as "1920x1080"' };
  const m = /^\s*(\d{1,5})\s*[xX×]\s*(\d{1,5})\s*$/.exec(resolvePreset(value));
  if (!m)
    return {
      reason: `"${value.slice(0, 40)}" is not WIDTHxHEIGHT (e.g. "1920x1080") or a preset (${OUTPUT_PRESET_NAMES})`,
    };
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width < 2 || height < 2) return { reason: `${width}x${height} is too small` };
  if (width % 2 || height % 2) return { reason: `${width}x${height} has an odd side; H.264 needs even numbers` };
  if (width > MAX_WIDTH || height > MAX_HEIGHT)
    return { reason: `${width}x${height} is beyond 8K (${MAX_WIDTH}x${MAX_HEIGHT})` };
  return { width, height };
}

/** 29.97 -> 30000/1001 and the other NTSC rates; anything else to a rational with millisecond precision. */
export function fpsRational(fps: number): Fps {
  for (const base of [24, 30, 60, 120]) {
    if (Math.abs(fps - (base * 1000) / 1001) < 0.005) return { num: base * 1000, den: 1001, value: fps };
  }
  if (Number.isInteger(fps)) return { num: fps, den: 1, value: fps };
  const den = 1000;
  const num = Math.round(fps * den);
  const g = gcd(num, den);
  return { num: num / g, den: den / g, value: fps };
}

function gcd(a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return 1;
  while (b !== 0) [a, b] = [b, a % b];
  return Math.abs(a);
}

/** What is wrong with an output file name, if anything: a plain name of at most 200 characters ending in .mp4. */
export function outputFilenameProblem(value: unknown): { message: string; hint?: string } | undefined {
  const plain = `use a plain name such as "${DEFAULT_FILENAME}"`;
  if (typeof value !== 'string' || !value.trim())
    return { message: 'the output file name must be a non-empty string', hint: plain };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value))
    return { message: 'the output file name contains control characters', hint: plain };
  if (/[/\\]/.test(value) || value === '.' || value === '..' || /^[a-z]:/i.test(value))
    return {
      message: `"${value.slice(0, 80)}" is a path; the output file name must be a plain name`,
      hint: `drop the folders: "${value.split(/[/\\]/).pop() || DEFAULT_FILENAME}"`,
    };
  if (value.length > 200) return { message: 'the output file name is longer than 200 characters' };
  const ext = /\.([^.]+)$/.exec(value)?.[1]?.toLowerCase();
  if (ext !== OUTPUT_FORMAT)
    return {
      message: `the output file name must end in .${OUTPUT_FORMAT}${ext ? `, not .${ext}` : ''}`,
      hint: `e.g. "${value.replace(/\.[^.]*$/, '')}.${OUTPUT_FORMAT}"`,
    };
  return undefined;
}

function checkFilename(value: unknown, c: Collector): string | undefined {
  if (value === undefined) return DEFAULT_FILENAME;
  const problem = outputFilenameProblem(value);
  if (!problem) return value as string;
  c.error('/video_output_filename', problem.message, problem.hint);
  return undefined;
}

function time(value: unknown, path: string, what: string, c: Collector): number | undefined {
  if (value === undefined || value === null) {
    c.error(path, `${what} is missing`, 'give a time such as "00:00:05.000" or a number of seconds');
    return undefined;
  }
  const r = parseTimecode(value);
  if (!r.ok) {
    c.error(path, `${what} ${r.reason}`, 'times are HH:MM:SS, HH:MM:SS.mmm or seconds, e.g. "00:01:05.250" or 65.25');
    return undefined;
  }
  return r.ms;
}

/**
 * Volume windows of one segment. `lo`/`hi` bound them on the segment's own clock (source time for video cuts,
 * timeline time for overlays). Windows must sit inside and must not overlap.
 */
function levels(
  raw: unknown,
  base: string,
  lo: number | undefined,
  hi: number | undefined,
  clock: string,
  c: Collector,
): { windows: LevelWindow[]; canonical: AudioLevel[] } {
  const windows: LevelWindow[] = [];
  const canonical: AudioLevel[] = [];
  if (raw === undefined || raw === null) return { windows, canonical };
  if (!Array.isArray(raw)) {
    c.error(base, 'audio_levels must be a list of {audio_level, start_time, end_time}');
    return { windows, canonical };
  }
  raw.forEach((item, j) => {
    const p = `${base}/${j}`;
    if (!isObject(item)) {
      c.error(p, 'each audio level must be an object {audio_level, start_time, end_time}');
      return;
    }
    const level = item.audio_level;
    let okLevel = true;
    if (typeof level !== 'number' || !Number.isFinite(level)) {
      c.error(
        `${p}/audio_level`,
        `audio_level must be a number from 0 to 1, not ${JSON.stringify(level)?.slice(0, 30) ?? 'nothing'}`,
        typeof level === 'string' && Number.isFinite(Number(level))
          ? `write it as a number: ${Number(level)}`
          : '0 is silent, 1 is as recorded',
      );
      okLevel = false;
    } else if (level < 0 || level > 1) {
      c.error(
        `${p}/audio_level`,
        `audio_level ${level} is outside 0..1`,
        level > 1 && level <= 100 ? `for ${level}% write ${level / 100}` : '0 is silent, 1 is as recorded',
      );
      okLevel = false;
    }
    const s = time(item.start_time, `${p}/start_time`, 'start_time', c);
    const e = time(item.end_time, `${p}/end_time`, 'end_time', c);
    if (s === undefined || e === undefined || !okLevel) return;
    if (e <= s) {
      c.error(`${p}/end_time`, `the level window ends (${formatShort(e)}) before it starts (${formatShort(s)})`);
      return;
    }
    if (lo !== undefined && hi !== undefined && (s < lo || e > hi)) {
      c.error(
        p,
        `the level window ${formatShort(s)}-${formatShort(e)} is outside its segment (${formatShort(lo)}-${formatShort(hi)} on the ${clock} clock)`,
        `windows use the ${clock} clock; keep them within ${formatTimecode(lo)}-${formatTimecode(hi)}`,
      );
    }
    windows.push({ level: level as number, startMs: s, endMs: e });
    canonical.push({ audio_level: level as number, start_time: formatTimecode(s), end_time: formatTimecode(e) });
  });
  const sorted = windows.map((w, j) => ({ ...w, j })).sort((a, b) => a.startMs - b.startMs);
  for (let k = 1; k < sorted.length; k++) {
    const prev = sorted[k - 1]!;
    const cur = sorted[k]!;
    if (cur.startMs < prev.endMs) {
      c.error(
        `${base}/${cur.j}`,
        `level windows ${prev.j} and ${cur.j} overlap (${formatShort(cur.startMs)}-${formatShort(Math.min(prev.endMs, cur.endMs))})`,
        'make each window end where the next begins',
      );
    }
  }
  return { windows, canonical };
}

function crop(raw: unknown, path: string, c: Collector): Crop | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    c.error(path, 'crop must be an object {zoom, position_x, position_y}');
    return undefined;
  }
  const num = (k: string, lo: number, hi: number, dflt: number) => {
    const v = raw[k] ?? dflt;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi) {
      c.error(`${path}/${k}`, `${k} must be a number from ${lo} to ${hi}`);
      return undefined;
    }
    return v;
  };
  const zoom = num('zoom', 0.1, 10, 1);
  const x = num('position_x', -1, 1, 0);
  const y = num('position_y', -1, 1, 0);
  if (zoom === undefined || x === undefined || y === undefined) return undefined;
  return { zoom, position_x: x, position_y: y };
}

function focus(raw: unknown, path: string, hasCrop: boolean, c: Collector): Focus | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (hasCrop) {
    c.error(
      path,
      'a cut takes crop or focus, not both',
      'focus frames the picture by itself (a crop of zoom 1); leave crop out',
    );
    return undefined;
  }
  if (raw === 'auto') return 'auto';
  const ok = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
  if (!isObject(raw) || !ok(raw.x) || !ok(raw.y)) {
    c.error(
      path,
      `focus must be {x, y} (each 0 to 1 of the source picture, from its left and top) or "auto", not ${JSON.stringify(raw)?.slice(0, 40)}`,
      '{x: 0.5, y: 0.5} is the centre; "auto" follows the action',
    );
    return undefined;
  }
  return { x: Math.round(raw.x * 1e4) / 1e4, y: Math.round(raw.y * 1e4) / 1e4 };
}

/** A cut's sound handles: each side 0 to MAX_SOUND_HANDLE s (more is kept as the most); none when both are 0. */
function soundHandles(
  raw: unknown,
  path: string,
  c: Collector,
): { timeline?: { beforeMs: number; afterMs: number }; canonical?: SoundHandles } {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) {
    c.error(path, 'sound_handles must be an object {before, after} (seconds of pause beyond the in and out points)');
    return {};
  }
  const side = (k: 'before' | 'after'): number | undefined => {
    const v = raw[k] ?? 0;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      c.error(`${path}/${k}`, `${k} must be a number of seconds, 0 or more, not ${JSON.stringify(v)?.slice(0, 30)}`);
      return undefined;
    }
    return Math.min(MAX_SOUND_HANDLE * 1000, Math.floor(v * 1000 + 1e-6));
  };
  const beforeMs = side('before');
  const afterMs = side('after');
  if (beforeMs === undefined || afterMs === undefined || (!beforeMs && !afterMs)) return {};
  return {
    timeline: { beforeMs, afterMs },
    canonical: { ...(beforeMs ? { before: beforeMs / 1000 } : {}), ...(afterMs ? { after: afterMs / 1000 } : {}) },
  };
}

/**
 * gain_db, fade_in and fade_out of a cut or an overlay (lengthMs: its length, when known): checked, in the timeline's
 * milliseconds and the canonical edit's seconds. A gain of 0 and fades of 0 are left out (the same as none).
 */
function mix(
  seg: Record<string, unknown>,
  p: string,
  lengthMs: number | undefined,
  what: 'cut' | 'overlay',
  c: Collector,
): { timeline: Mix; canonical: { gain_db?: number; fade_in?: number; fade_out?: number } } {
  const timeline: Mix = {};
  const canonical: { gain_db?: number; fade_in?: number; fade_out?: number } = {};
  const g = seg.gain_db;
  if (g !== undefined) {
    if (typeof g !== 'number' || !Number.isFinite(g) || g < MIN_GAIN_DB || g > MAX_GAIN_DB) {
      c.error(
        `${p}/gain_db`,
        `gain_db must be a number of dB from ${MIN_GAIN_DB} to ${MAX_GAIN_DB}, not ${JSON.stringify(g)?.slice(0, 30)}`,
        '-6 halves the amplitude, -12 is a bed under speech, 0 leaves it as it is',
      );
    } else if (Math.round(g * 100) !== 0) {
      const db = Math.round(g * 100) / 100;
      timeline.gainDb = db;
      canonical.gain_db = db;
    }
  }
  const fades: number[] = [];
  for (const k of ['fade_in', 'fade_out'] as const) {
    const v = seg[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      c.error(
        `${p}/${k}`,
        `${k} must be a number of seconds, 0 or more, not ${JSON.stringify(v)?.slice(0, 30)}`,
        'e.g. 0.5 for half a second',
      );
      continue;
    }
    const ms = Math.round(v * 1000);
    if (ms === 0) continue;
    fades.push(ms);
    timeline[k === 'fade_in' ? 'fadeInMs' : 'fadeOutMs'] = ms;
    canonical[k] = ms / 1000;
  }
  const total = fades.reduce((a, b) => a + b, 0);
  if (lengthMs !== undefined && total > lengthMs) {
    const said = total > MAX_MS ? 'the fades' : `the fades (${formatShort(total)})`;
    // Said at fade_out, unless fade_in is the only fade.
    const field = fades.length <= 1 && timeline.fadeInMs ? 'fade_in' : 'fade_out';
    c.error(
      `${p}/${field}`,
      `${said} are longer than the ${what} (${formatShort(lengthMs)})`,
      `keep fade_in + fade_out within ${formatShort(lengthMs)}`,
    );
  }
  return { timeline, canonical };
}

/** An overlay's role and, for music, how far it ducks under speech (DEFAULT_DUCK_DB unless said; 0: not at all). */
function role(
  seg: Record<string, unknown>,
  p: string,
  c: Collector,
): {
  timeline: { role?: (typeof ROLES)[number]; duckDb?: number };
  canonical: { role?: (typeof ROLES)[number]; duck_db?: number };
} {
  const r = seg.role;
  const d = seg.duck_db;
  if (r !== undefined && !ROLES.includes(r as (typeof ROLES)[number])) {
    c.error(
      `${p}/role`,
      `role must be one of ${ROLES.join(', ')}, not ${JSON.stringify(r)?.slice(0, 30)}`,
      'music is lowered under speech (duck_db)',
    );
    return { timeline: {}, canonical: {} };
  }
  const known = r as (typeof ROLES)[number] | undefined;
  let duck: number | undefined;
  if (d !== undefined) {
    if (typeof d !== 'number' || !Number.isFinite(d) || d < 0 || d > MAX_DUCK_DB)
      c.error(
        `${p}/duck_db`,
        `duck_db must be a number of dB from 0 to ${MAX_DUCK_DB}, not ${JSON.stringify(d)?.slice(0, 30)}`,
        `${DEFAULT_DUCK_DB} is the default; 0 does not duck`,
      );
    else if (known !== 'music')
      c.warning(
        `${p}/duck_db`,
        'duck_db does nothing without role "music": only music is lowered under speech',
        'add role: "music", or leave duck_db out',
      );
    else duck = Math.round(d * 100) / 100 || 0;
  }
  const duckDb = known === 'music' ? (duck ?? DEFAULT_DUCK_DB) : undefined;
  return {
    timeline: { ...(known ? { role: known } : {}), ...(duckDb ? { duckDb } : {}) },
    canonical: { ...(known ? { role: known } : {}), ...(duck !== undefined ? { duck_db: duck } : {}) },
  };
}

/** The loudness asked: a preset's name or {target_lufs, true_peak_db} (a true peak left out is -1 dBTP). */
function loudnessOf(raw: unknown, c: Collector): Loudness | undefined {
  const p = '/loudness';
  if (raw === undefined || raw === null) return undefined;
  const names = Object.keys(LOUDNESS_PRESETS);
  if (typeof raw === 'string') {
    const preset = LOUDNESS_PRESETS[raw.trim().toLowerCase() as keyof typeof LOUDNESS_PRESETS];
    if (!preset)
      c.error(
        p,
        `loudness "${raw.slice(0, 30)}" is not a preset (${names.join(', ')})`,
        'or give {target_lufs, true_peak_db}, e.g. {target_lufs: -14, true_peak_db: -1}',
      );
    return preset ? { ...preset } : undefined;
  }
  if (!isObject(raw)) {
    c.error(p, `loudness must be a preset (${names.join(', ')}) or {target_lufs, true_peak_db}`);
    return undefined;
  }
  const t = raw.target_lufs;
  const tp = raw.true_peak_db ?? -1;
  let ok = true;
  if (typeof t !== 'number' || !Number.isFinite(t) || t < MIN_TARGET_LUFS || t > MAX_TARGET_LUFS) {
    c.error(
      `${p}/target_lufs`,
      `target_lufs must be a number of LUFS from ${MIN_TARGET_LUFS} to ${MAX_TARGET_LUFS}, not ${JSON.stringify(t)?.slice(0, 30) ?? 'nothing'}`,
      '-14 for the web, -16 for podcasts, -23 for broadcast (EBU R128)',
    );
    ok = false;
  }
  if (typeof tp !== 'number' || !Number.isFinite(tp) || tp < MIN_TRUE_PEAK_DB || tp > MAX_TRUE_PEAK_DB) {
    c.error(
      `${p}/true_peak_db`,
      `true_peak_db must be a number of dBTP from ${MIN_TRUE_PEAK_DB} to ${MAX_TRUE_PEAK_DB}, not ${JSON.stringify(tp)?.slice(0, 30)}`,
      '-1 is the usual ceiling',
    );
    ok = false;
  }
  return ok
    ? { target_lufs: Math.round((t as number) * 10) / 10, true_peak_db: Math.round((tp as number) * 10) / 10 }
    : undefined;
}

/** The edit's captions field: checked, in the timeline's terms and the canonical edit's (only what was given). */
function captions(
  raw: unknown,
  c: Collector,
): { timeline: NonNullable<Timeline['captions']>; canonical: Captions } | undefined {
  const p = '/captions';
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    c.error(p, 'captions must be an object {burn?, style?: {size?, color?, position?, margin?}}', 'e.g. {burn: true}');
    return undefined;
  }
  for (const k of Object.keys(raw))
    if (k !== 'burn' && k !== 'style')
      c.warning(
        `${p}/${k}`,
        `unknown field "${k}" of captions is left out`,
        'captions take burn and style {size, color, position, margin}',
      );
  let ok = true;
  const burn = raw.burn ?? true;
  if (typeof burn !== 'boolean') {
    c.error(`${p}/burn`, 'burn must be true or false');
    ok = false;
  }
  const style: CaptionStyle = { ...DEFAULT_CAPTION_STYLE };
  const canonicalStyle: NonNullable<Captions['style']> = {};
  const s = raw.style;
  if (s !== undefined && !isObject(s)) {
    c.error(`${p}/style`, 'style must be an object {size?, color?, position?, margin?}');
    ok = false;
  } else if (s) {
    for (const k of Object.keys(s))
      if (!['size', 'color', 'position', 'margin'].includes(k))
        c.warning(
          `${p}/style/${k}`,
          `unknown field "${k}" of the caption style is left out`,
          'the style takes size (% of the picture height), color (#RRGGBB), position (bottom, middle, top) and margin (% of the height)',
        );
    if (s.size !== undefined) {
      if (
        typeof s.size !== 'number' ||
        !Number.isFinite(s.size) ||
        s.size < MIN_CAPTION_SIZE ||
        s.size > MAX_CAPTION_SIZE
      ) {
        c.error(
          `${p}/style/size`,
          `size must be a number from ${MIN_CAPTION_SIZE} to ${MAX_CAPTION_SIZE} (% of the picture's height, or of its width when it is taller than wide), not ${JSON.stringify(s.size)?.slice(0, 30)}`,
          `${DEFAULT_CAPTION_STYLE.size} is the default`,
        );
        ok = false;
      } else style.size = canonicalStyle.size = Math.round(s.size * 10) / 10;
    }
    if (s.color !== undefined) {
      const m = typeof s.color === 'string' ? /^#?([0-9a-f]{6})$/i.exec(s.color.trim()) : null;
      if (!m) {
        c.error(
          `${p}/style/color`,
          `color must be #RRGGBB, not ${JSON.stringify(s.color)?.slice(0, 30)}`,
          'e.g. "#FFFF00" for yellow; white is the default',
        );
        ok = false;
      } else {
        style.color = m[1]!.toUpperCase();
        canonicalStyle.color = `#${style.color}`;
      }
    }
    if (s.position !== undefined) {
      const named = typeof s.position === 'string' ? s.position.trim().toLowerCase() : undefined;
      const position = CAPTION_POSITIONS.find((x) => x === named);
      if (!position) {
        c.error(
          `${p}/style/position`,
          `position must be ${CAPTION_POSITIONS.join(', ')}, not ${JSON.stringify(s.position)?.slice(0, 30)}`,
          'bottom is the default',
        );
        ok = false;
      } else style.position = canonicalStyle.position = position;
    }
    if (s.margin !== undefined) {
      if (typeof s.margin !== 'number' || !Number.isFinite(s.margin) || s.margin < 0 || s.margin > MAX_CAPTION_MARGIN) {
        c.error(
          `${p}/style/margin`,
          `margin must be a number from 0 to ${MAX_CAPTION_MARGIN} (% of the picture's height from the edge the captions sit at), not ${JSON.stringify(s.margin)?.slice(0, 30)}`,
          "leave it out for the default: 8, or 22 from the bottom of a vertical picture (clear of social apps' buttons)",
        );
        ok = false;
      } else {
        style.margin = canonicalStyle.margin = Math.round(s.margin * 10) / 10;
        if (style.position === 'middle')
          c.warning(
            `${p}/style/margin`,
            'margin does nothing for captions in the middle',
            'give position bottom or top with it',
          );
      }
    }
  }
  if (!ok) return undefined;
  return {
    timeline: { burn: burn as boolean, style },
    canonical: { burn: burn as boolean, ...(Object.keys(canonicalStyle).length ? { style: canonicalStyle } : {}) },
  };
}

export function normalizeEdit(raw: unknown): Normalized {
  const c = new Collector();
  if (!isObject(raw)) {
    c.error('', 'the edit must be an object with video_series_sequential, audio_overlay and the output settings');
    return { diagnostics: c.list };
  }
  for (const key of Object.keys(raw)) {
    if (!KNOWN_TOP.has(key))
      c.warning(`/${key}`, `unknown field "${key}" is not part of the edit format and is left out`);
  }

  const version = raw.video_edit_version ?? EDIT_VERSION;
  if (version !== EDIT_VERSION)
    c.warning(
      '/video_edit_version',
      `edit version ${JSON.stringify(version)} is not the one the service is known to take ("${EDIT_VERSION}")`,
    );
  const format = raw.video_output_format ?? OUTPUT_FORMAT;
  if (format !== OUTPUT_FORMAT)
    c.error('/video_output_format', `output format ${JSON.stringify(format)} is not supported; use "${OUTPUT_FORMAT}"`);

  let width = 0;
  let height = 0;
  const resolution = parseResolution(raw.video_output_resolution ?? '1920x1080');
  if ('reason' in resolution)
    c.error(
      '/video_output_resolution',
      `video_output_resolution ${resolution.reason}`,
      'e.g. "1920x1080", "1280x720" or "1080x1920" for vertical',
    );
  else ({ width, height } = resolution);

  const fpsRaw = raw.video_output_fps ?? DEFAULT_FPS;
  let fps: Fps | undefined;
  // Below 1 fps a frame outlasts a second: never a video, and tiny values would make nonsense frame counts.
  if (typeof fpsRaw !== 'number' || !Number.isFinite(fpsRaw) || fpsRaw < MIN_FPS || fpsRaw > MAX_FPS) {
    c.error(
      '/video_output_fps',
      `video_output_fps must be a number from ${MIN_FPS} to ${MAX_FPS}, not ${JSON.stringify(fpsRaw)?.slice(0, 30)}`,
      'e.g. 24, 25, 29.97, 30 or 60',
    );
  } else fps = fpsRational(fpsRaw);

  const filename = checkFilename(raw.video_output_filename, c);

  // Video cuts, played in sequence.
  const cuts: TimelineCut[] = [];
  const videoSegments: VideoSegment[] = [];
  const seq = raw.video_series_sequential;
  if (!Array.isArray(seq) || seq.length === 0) {
    c.error(
      '/video_series_sequential',
      Array.isArray(seq) || seq === undefined
        ? 'the timeline is empty: add at least one video cut'
        : 'video_series_sequential must be a list of video cuts',
      'each cut is {video_id, video_start_time, video_end_time}',
    );
  }
  let cursor = 0;
  (Array.isArray(seq) ? seq : []).forEach((seg, i) => {
    const p = `/video_series_sequential/${i}`;
    if (!isObject(seg)) {
      c.error(p, 'each cut must be an object {video_id, video_start_time, video_end_time, audio_levels?}');
      return;
    }
    if (seg.type !== undefined && seg.type !== 'videofile')
      c.error(
        `${p}/type`,
        `a video cut has type "videofile", not ${JSON.stringify(seg.type)}`,
        seg.type === 'audio' ? 'audio belongs in audio_overlay' : undefined,
      );
    const id = seg.video_id;
    if (typeof id !== 'string' || !id.trim())
      c.error(`${p}/video_id`, 'video_id is missing', 'use the id of a video asset from get_project');
    const inMs = time(seg.video_start_time, `${p}/video_start_time`, 'the in point (video_start_time)', c);
    const outMs = time(seg.video_end_time, `${p}/video_end_time`, 'the out point (video_end_time)', c);
    if (inMs !== undefined && outMs !== undefined && outMs <= inMs) {
      c.error(
        `${p}/video_end_time`,
        `the cut ends (${formatShort(outMs)}) ${outMs === inMs ? 'where' : 'before'} it starts (${formatShort(inMs)})`,
        'the out point must be after the in point, both in source time',
      );
    }
    const lv = levels(seg.audio_levels, `${p}/audio_levels`, inMs, outMs, 'source clip', c);
    const cr = crop(seg.crop, `${p}/crop`, c);
    const fo = focus(seg.focus, `${p}/focus`, seg.crop !== undefined && seg.crop !== null, c);
    const sh = soundHandles(seg.sound_handles, `${p}/sound_handles`, c);
    const mx = mix(
      seg,
      p,
      inMs !== undefined && outMs !== undefined && outMs > inMs ? outMs - inMs : undefined,
      'cut',
      c,
    );
    if (typeof id !== 'string' || inMs === undefined || outMs === undefined || outMs <= inMs) return;
    const duration = outMs - inMs;
    cuts.push({
      index: i,
      assetId: id.trim(),
      inMs,
      outMs,
      startMs: cursor,
      endMs: cursor + duration,
      levels: lv.windows,
      ...(cr ? { crop: cr } : {}),
      ...(fo ? { focus: fo } : {}),
      ...(sh.timeline ? { soundHandles: sh.timeline } : {}),
      ...mx.timeline,
    });
    videoSegments.push({
      video_id: id.trim(),
      type: 'videofile',
      video_start_time: formatTimecode(inMs),
      video_end_time: formatTimecode(outMs),
      audio_levels: lv.canonical,
      ...(cr ? { crop: cr } : {}),
      ...(fo ? { focus: fo } : {}),
      ...(sh.canonical ? { sound_handles: sh.canonical } : {}),
      ...mx.canonical,
    });
    cursor += duration;
  });
  const totalMs = cursor;
  // A cut shorter than one frame would show nothing: the frame rate cannot carry this timeline.
  const shortest = cuts.reduce<TimelineCut | undefined>(
    (m, cut) => (!m || cut.outMs - cut.inMs < m.outMs - m.inMs ? cut : m),
    undefined,
  );
  if (fps && shortest && (shortest.outMs - shortest.inMs) * fps.value < 1000) {
    const frameMs = 1000 / fps.value;
    c.error(
      '/video_output_fps',
      `at ${fps.value} fps a frame lasts ${formatShort(frameMs)}, longer than cut ${shortest.index} (/video_series_sequential/${shortest.index}, ${formatShort(shortest.outMs - shortest.inMs)}): it would show no frame`,
      `lengthen that cut to at least ${formatShort(Math.ceil(frameMs))}, or raise video_output_fps`,
    );
  }
  if (totalMs > LONG_EDIT_MS)
    c.warning(
      '/video_series_sequential',
      `the edit lasts ${formatShort(totalMs)}, over 10 minutes`,
      'long renders are slow and costly; check this is intended',
    );

  // Audio laid over the timeline.
  const overlays: TimelineOverlay[] = [];
  const audioSegments: AudioSegment[] = [];
  const ov = raw.audio_overlay ?? [];
  if (!Array.isArray(ov))
    c.error('/audio_overlay', 'audio_overlay must be a list of {audio_id, audio_start_time, audio_end_time}');
  (Array.isArray(ov) ? ov : []).forEach((seg, k) => {
    const p = `/audio_overlay/${k}`;
    if (!isObject(seg)) {
      c.error(p, 'each overlay must be an object {audio_id, audio_start_time, audio_end_time, audio_levels?}');
      return;
    }
    if (seg.type !== undefined && seg.type !== 'audio')
      c.error(`${p}/type`, `an overlay has type "audio", not ${JSON.stringify(seg.type)}`);
    const id = seg.audio_id;
    if (typeof id !== 'string' || !id.trim())
      c.error(`${p}/audio_id`, 'audio_id is missing', 'use the id of an audio asset from get_project');
    const s = time(seg.audio_start_time, `${p}/audio_start_time`, 'the overlay start (audio_start_time)', c);
    const e = time(seg.audio_end_time, `${p}/audio_end_time`, 'the overlay end (audio_end_time)', c);
    let placed = s !== undefined && e !== undefined;
    if (s !== undefined && e !== undefined && e <= s) {
      c.error(
        `${p}/audio_end_time`,
        `the overlay ends (${formatShort(e)}) ${e === s ? 'where' : 'before'} it starts (${formatShort(s)})`,
      );
      placed = false;
    }
    if (placed && totalMs > 0 && e! > totalMs) {
      const past = s! >= totalMs;
      c.error(
        `${p}/${past ? 'audio_start_time' : 'audio_end_time'}`,
        `the overlay ${past ? 'starts' : 'ends'} at ${formatShort(past ? s! : e!)}, past the end of the timeline (${formatShort(totalMs)})`,
        `overlays are placed on the output timeline; end it by ${formatTimecode(totalMs)}`,
      );
    }
    const lv = levels(seg.audio_levels, `${p}/audio_levels`, s, e, 'output timeline', c);
    const mx = mix(seg, p, placed ? e! - s! : undefined, 'overlay', c);
    const fromMs =
      seg.from === undefined
        ? undefined
        : time(seg.from, `${p}/from`, 'where the overlay starts in its audio (from)', c);
    const rl = role(seg, p, c);
    if (typeof id !== 'string' || !placed) return;
    const from = fromMs ? { fromMs } : {};
    overlays.push({
      index: k,
      assetId: id.trim(),
      startMs: s!,
      endMs: e!,
      levels: lv.windows,
      ...from,
      ...mx.timeline,
      ...rl.timeline,
    });
    audioSegments.push({
      audio_id: id.trim(),
      type: 'audio',
      audio_start_time: formatTimecode(s!),
      audio_end_time: formatTimecode(e!),
      audio_levels: lv.canonical,
      ...(fromMs ? { from: formatTimecode(fromMs) } : {}),
      ...mx.canonical,
      ...rl.canonical,
    });
  });

  const optional: Partial<Edit> = {};
  for (const k of ['name', 'description'] as const) {
    if (raw[k] === undefined) continue;
    if (typeof raw[k] === 'string') optional[k] = raw[k] as string;
    else c.error(`/${k}`, `${k} must be a string`);
  }
  const loud = loudnessOf(raw.loudness, c);
  if (loud) optional.loudness = loud;
  if (raw.level_dialogue !== undefined) {
    if (typeof raw.level_dialogue !== 'boolean')
      c.error(
        '/level_dialogue',
        'level_dialogue must be true or false',
        "true (the default) levels the cuts' speech to one loudness",
      );
    else if (!raw.level_dialogue) optional.level_dialogue = false;
  }
  for (const k of ['skip_rendering', 'subtitle_from_audio_overlay'] as const) {
    if (raw[k] === undefined) continue;
    if (typeof raw[k] === 'boolean') optional[k] = raw[k] as boolean;
    else c.error(`/${k}`, `${k} must be true or false`);
  }

  const cap = captions(raw.captions, c);
  if (cap) optional.captions = cap.canonical;

  const structural = c.errors === 0;
  const edit: Edit | undefined =
    structural && fps && filename
      ? {
          video_edit_version: EDIT_VERSION,
          video_output_format: OUTPUT_FORMAT,
          video_output_resolution: `${width}x${height}`,
          video_output_fps: fps.value,
          video_output_filename: filename,
          video_series_sequential: videoSegments,
          audio_overlay: audioSegments,
          ...optional,
        }
      : undefined;
  const timeline: Timeline | undefined =
    fps && width && cuts.length
      ? {
          width,
          height,
          fps,
          filename: filename ?? DEFAULT_FILENAME,
          cuts,
          overlays,
          totalMs,
          ...(loud ? { loudness: { targetLufs: loud.target_lufs, truePeakDb: loud.true_peak_db } } : {}),
          levelDialogue: optional.level_dialogue !== false,
          ...(cap ? { captions: cap.timeline } : {}),
        }
      : undefined;
  return { ...(edit ? { edit } : {}), ...(timeline ? { timeline } : {}), diagnostics: c.list };
}
