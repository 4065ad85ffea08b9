// Timecodes: accept HH:MM:SS, HH:MM:SS.mmm (also MM:SS and a comma for the decimal point) and plain seconds;
// send HH:MM:SS.mmm. Everything is kept in whole milliseconds so that formatting and parsing round-trip exactly.
// Times reported on the output timeline are where an output frame starts, rounded up to the millisecond (onFrameMs).

export type TimecodeResult = { ok: true; ms: number } | { ok: false; reason: string };

const CLOCK = /^(?:(\d+):)?(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3})\d*)?$/;
const SECONDS = /^\d+(?:\.\d+)?$/;
/** The largest time accepted: 99:59:59.999, the most HH:MM:SS can say. */
export const MAX_MS = ((99 * 60 + 59) * 60 + 59) * 1000 + 999;

export function parseTimecode(value: unknown): TimecodeResult {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, reason: 'is not a finite number' };
    if (value < 0) return { ok: false, reason: 'is negative' };
    return inRange(Math.round(value * 1000));
  }
  if (typeof value !== 'string')
    return {
      ok: false,
      reason: `must be a time such as "00:01:05.250" or a number of seconds, not ${describe(value)}`,
    };
  const v = value.trim();
  if (v.startsWith('-')) return { ok: false, reason: 'is negative' };
  if (SECONDS.test(v)) return inRange(Math.round(Number(v) * 1000));
  const m = CLOCK.exec(v);
  if (!m) return { ok: false, reason: `"${clip(v)}" is not a time: use HH:MM:SS, HH:MM:SS.mmm or seconds` };
  const [, hh, mm, ss, frac] = m;
  const hours = hh === undefined ? 0 : Number(hh);
  const minutes = Number(mm);
  const seconds = Number(ss);
  if (minutes >= 60) return { ok: false, reason: `"${clip(v)}" has ${minutes} minutes; minutes must be under 60` };
  if (seconds >= 60) return { ok: false, reason: `"${clip(v)}" has ${seconds} seconds; seconds must be under 60` };
  const millis = frac === undefined ? 0 : Number(frac.padEnd(3, '0'));
  return inRange(((hours * 60 + minutes) * 60 + seconds) * 1000 + millis);
}

function inRange(ms: number): TimecodeResult {
  if (ms > MAX_MS) return { ok: false, reason: 'is beyond 99:59:59.999' };
  return { ok: true, ms };
}

/** Canonical form: HH:MM:SS.mmm. */
export function formatTimecode(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  const millis = total % 1000;
  const s = Math.floor(total / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}.${pad(millis, 3)}`;
}

/**
 * The output frame a timeline time (ms) falls on, as the render counts them: a cut's frames are the difference of its
 * ends'.
 */
export function outputFrameAt(ms: number, fps: { num: number; den: number }): number {
  return Math.round((ms / 1000) * (fps.num / fps.den));
}

/**
 * Where output frame n starts, in whole milliseconds rounded up (at 29.97 fps a frame lasts 1001/30000 s, not whole
 * ms): the time reported lies in [the frame's start, its start + 1 ms), so a player seeking to it, or to it plus half a
 * frame (safer against a container's and a player's rounding), shows frame n. Exact in integers.
 */
export function frameStartMs(n: number, fps: { num: number; den: number }): number {
  const a = n * fps.den * 1000;
  let q = Math.ceil(a / fps.num);
  if ((q - 1) * fps.num >= a) q--;
  if (q * fps.num < a) q++;
  return q;
}

/** A time on the output timeline (ms) as the output shows it: the start of the frame it falls on. */
export const onFrameMs = (ms: number, fps: { num: number; den: number }) => frameStartMs(outputFrameAt(ms, fps), fps);

/** Short human form for summaries: 1:05.250 or 12.5 s. */
export function formatShort(ms: number): string {
  if (ms < 60_000) return `${+(ms / 1000).toFixed(3)} s`;
  const t = formatTimecode(ms);
  return t.startsWith('00:') ? t.slice(3) : t;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}
