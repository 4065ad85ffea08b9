// CMX 3600 EDL: one event per cut (picture and first audio channel, "B"), overlays as events on the second audio
// channel (A2), non-drop-frame timecode at the edit's rate (29.97 counts 30 labels a second, as NDF does; 23.976
// counts 24), the record side starting at 01:00:00:00. Reels are 8 characters: the first 8 of the asset id, with
// `* FROM CLIP NAME:` and `* SOURCE FILE:` comments for relinking. An EDL carries no levels, no crop and only two
// audio channels: export_edit warns about each. Reading takes dissolves, wipes, speed lines, drop-frame timecode
// (an FCM line counts every timecode of the events after it) and comments, and notes what it cannot carry. Pure:
// text in, text out.
import {
  MAX_IMPORT_ITEMS,
  noteList,
  quoteOf,
  rational,
  seconds,
  type ExchangeMix,
  type ExportDocument,
  type ImportedCut,
  type ImportedOverlay,
  type ImportedTimeline,
  type MediaHints,
  timecodeSeconds,
} from './document.js';

/** The timecode base of a rate: integer rates as they are, NTSC rates (n*1000/1001) counted as n. */
export function timecodeBase(fps: { num: number; den: number }): number | undefined {
  if (fps.den === 1 && fps.num >= 1 && fps.num <= 60) return fps.num;
  if (fps.den === 1001 && fps.num % 1000 === 0 && fps.num / 1000 <= 60) return fps.num / 1000;
  const r = rational(fps.num, fps.den);
  if (r.d === 1 && r.n <= 60) return r.n;
  return undefined;
}

export function framesToTimecode(frames: number, base: number): string {
  const f = Math.max(0, Math.round(frames));
  const pad = (n: number) => String(n).padStart(2, '0');
  const ff = f % base;
  const totalSec = Math.floor(f / base);
  return `${pad(Math.floor(totalSec / 3600) % 100)}:${pad(Math.floor(totalSec / 60) % 60)}:${pad(totalSec % 60)}:${pad(ff)}`;
}

/**
 * A frame count as drop-frame timecode (HH:MM:SS;FF) at 29.97 or 59.94 (base 30 or 60): labels skip 2 (4 at 60)
 * frame numbers at the start of each minute but every tenth, so that the labels keep to the clock.
 */
export function framesToDropTimecode(frames: number, base: number): string {
  const drop = base / 15;
  const perTen = base * 600 - drop * 9;
  const perMinute = base * 60 - drop;
  let f = Math.max(0, Math.round(frames));
  const tens = Math.floor(f / perTen);
  const rest = f % perTen;
  f += drop * 9 * tens + (rest > drop ? drop * Math.floor((rest - drop) / perMinute) : 0);
  return framesToTimecode(f, base).replace(/:(\d{2})$/, ';$1');
}

/**
 * Whether drop-frame counting applies at this rate: 29.97 and 59.94 only (NTSC rates with a timecode base of 30 or 60).
 */
export const dropFrameRate = (rate: { num: number; den: number }) =>
  rate.den === 1001 && (rate.num === 30_000 || rate.num === 60_000);

/**
 * HH:MM:SS:FF (any of : ; . , before the frames) to a frame count, counted drop-frame or not as `dropFrame` says (the
 * separator does not decide it); or why the label names no frame: malformed, a field out of range, or a label that
 * drop-frame skips (frames 00 and 01, 00 to 03 at 59.94, of each minute but every tenth).
 */
export function readTimecode(tc: string, base: number, dropFrame: boolean): { frames: number } | { reason: string } {
  const m = /^(\d{2}):(\d{2}):(\d{2})[:;.,](\d{2})$/.exec(tc);
  if (!m) return { reason: `"${quoteOf(tc, 20)}" is not a timecode (HH:MM:SS:FF)` };
  const [h, mi, s, f] = m.slice(1).map(Number) as [number, number, number, number];
  if (mi > 59 || s > 59) return { reason: `"${tc}" has ${mi > 59 ? `${mi} minutes` : `${s} seconds`}; they run to 59` };
  if (f >= base) return { reason: `"${tc}" has frame ${f}; at ${base} frames a second they run to ${base - 1}` };
  let frames = ((h * 60 + mi) * 60 + s) * base + f;
  if (dropFrame && (base === 30 || base === 60)) {
    // Drop-frame labels skip 2 (4 at 60) frame numbers each minute, except every tenth minute.
    const drop = base / 15;
    const minutes = h * 60 + mi;
    if (s === 0 && f < drop && minutes % 10 !== 0)
      return {
        reason: `"${tc}" is no drop-frame label: drop-frame counting skips frames ${drop === 2 ? '00 and 01' : '00 to 03'} at the start of each minute but every tenth`,
      };
    frames -= drop * (minutes - Math.floor(minutes / 10));
  }
  return { frames };
}

/** HH:MM:SS:FF to a frame count (see readTimecode); undefined when the label names no frame. */
export function timecodeToFrames(tc: string, base: number, dropFrame: boolean): number | undefined {
  const r = readTimecode(tc, base, dropFrame);
  return 'frames' in r ? r.frames : undefined;
}

const RECORD_START_SEC = 3600;
const reelOf = (assetId: string) =>
  assetId
    .replace(/[^0-9a-z]/gi, '')
    .slice(0, 8)
    .toUpperCase() || 'AX';
/** Comment text: one line, no control characters. */
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();

export function writeEdl(doc: ExportDocument): { text: string; warnings: string[] } {
  const base = timecodeBase(doc.fps);
  if (base === undefined)
    throw new Error(
      `an EDL counts timecode at a whole frame rate (or an NTSC rate such as 29.97) of at most 60 fps; this edit is at ${+(doc.fps.num / doc.fps.den).toFixed(3)} fps`,
    );
  const warnings: string[] = [];
  const fpsR = doc.fps;
  // Drop-frame counting where the edit is at 29.97 or 59.94 and a source's own timecode is drop-frame (its labels
  // are what its editor sees); else non-drop-frame.
  const drop = dropFrameRate(fpsR) && doc.clips.some((c) => doc.media.get(c.assetId)?.timecodeDrop);
  const recordStart = drop
    ? timecodeToFrames(`${String(RECORD_START_SEC / 3600).padStart(2, '0')}:00:00;00`, base, true)!
    : RECORD_START_SEC * base;
  const tc = (frames: number) => (drop ? framesToDropTimecode(frames, base) : framesToTimecode(frames, base));
  const events: { recIn: number; lines: string[] }[] = [];
  // A source at another rate is labelled in its own frames, counted as the list's FCM line says (which a reader
  // applies to every timecode of an event): drop-frame where that rate has it.
  const labelAt = (rate: { num: number; den: number }): ((frames: number) => string) => {
    if (rate === fpsR) return tc;
    if (drop && dropFrameRate(rate)) return (f) => framesToDropTimecode(f, timecodeBase(rate)!);
    return (f) => framesToTimecode(f, timecodeBase(rate)!);
  };
  const line = (
    reel: string,
    track: string,
    srcIn: number,
    srcOut: number,
    recIn: number,
    recOut: number,
    srcTc = tc,
  ) => `${reel.padEnd(8)} ${track.padEnd(5)} C        ${srcTc(srcIn)} ${srcTc(srcOut)} ${tc(recIn)} ${tc(recOut)}`;
  const comments = (assetId: string, mix?: ExchangeMix) => {
    const m = doc.media.get(assetId);
    // A local file as its path (as Avid and Resolve write it); a link as it is.
    const source = m?.url?.startsWith('file:') ? decodeURIComponent(new URL(m.url).pathname) : m?.url;
    // The edit's mix has no field in an EDL: a comment cutroom reads back (other tools skip it).
    const said = mix
      ? Object.entries(mix)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')
      : '';
    return [
      `* FROM CLIP NAME: ${oneLine(m?.name ?? assetId)}`,
      ...(source ? [`* SOURCE FILE: ${oneLine(source)}`] : []),
      `* CUTROOM ASSET: ${assetId}`,
      ...(said ? [`* CUTROOM MIX: ${said}`] : []),
    ];
  };
  doc.clips.forEach((c, i) => {
    // The source's time counted in the edit's frames (an EDL has one rate): the frame at or before the cut's first
    // source frame, which is the one cutroom starts the cut on when the source's rate is at most the edit's.
    // Counted from the source's own timecode (camera and NLE media), in the source's own frames where its rate is
    // another than the edit's: conform tools read a source timecode at its source's rate.
    const m = doc.media.get(c.assetId);
    const at = seconds(c.sourceIn) + timecodeSeconds(m);
    const srcRate =
      m?.rate && timecodeBase(m.rate) !== undefined && m.rate.num * fpsR.den !== fpsR.num * m.rate.den ? m.rate : fpsR;
    const srcIn = Math.floor((at * srcRate.num) / srcRate.den + 1e-6);
    const srcFrames =
      srcRate === fpsR
        ? c.frames
        : Math.max(1, Math.round((c.frames * fpsR.den * srcRate.num) / (fpsR.num * srcRate.den)));
    const rec = recordStart + c.recordFrame;
    events.push({
      recIn: rec,
      lines: [
        line(reelOf(c.assetId), 'B', srcIn, srcIn + srcFrames, rec, rec + c.frames, labelAt(srcRate)),
        ...comments(c.assetId, c.mix),
      ],
    });
    if (c.levels.length) warnings.push(`cut ${i + 1}: its audio levels are not carried (an EDL has no volume)`);
    if (c.crop) warnings.push(`cut ${i + 1}: its crop is not carried (an EDL has no framing)`);
    if (c.focus) warnings.push(`cut ${i + 1}: its focus is not carried (an EDL has no framing)`);
  });
  // Overlays on A2, one at a time: an EDL has two audio channels, and the first carries the cuts' sound.
  let busyUntil = -1;
  doc.overlays
    .map((o, k) => ({ o, k }))
    .sort((a, b) => a.o.startMs - b.o.startMs)
    .forEach(({ o, k }) => {
      const start = Math.round(((o.startMs / 1000) * fpsR.num) / fpsR.den);
      const end = Math.round(((o.endMs / 1000) * fpsR.num) / fpsR.den);
      if (start < busyUntil) {
        warnings.push(
          `overlay ${k + 1}: left out, it overlaps an earlier overlay and an EDL has only one more audio channel (A2)`,
        );
        return;
      }
      busyUntil = end;
      // Its source timecodes start where it plays from in its audio (`from`), on the edit's frames.
      // Down to a frame: up would start it past the audio's end when from is in its last frame.
      const from = Math.floor((((o.fromMs ?? 0) / 1000) * fpsR.num) / fpsR.den + 1e-9);
      events.push({
        recIn: recordStart + start,
        lines: [
          line(reelOf(o.assetId), 'A2', from, from + end - start, recordStart + start, recordStart + end),
          ...comments(o.assetId, o.mix),
        ],
      });
      if (o.levels.length) warnings.push(`overlay ${k + 1}: its audio levels are not carried (an EDL has no volume)`);
    });
  events.sort((a, b) => a.recIn - b.recIn);
  const title = oneLine(doc.name).slice(0, 70) || 'cutroom edit';
  // An EDL has no field for its rate: cutroom says it in a comment (its reader takes it; others skip comments).
  const out = [
    `TITLE: ${title}`,
    `FCM: ${drop ? 'DROP FRAME' : 'NON-DROP FRAME'}`,
    `* CUTROOM FPS: ${doc.fps.num}/${doc.fps.den}`,
    '',
  ];
  events.forEach((e, i) => {
    const n = String(i + 1).padStart(3, '0');
    out.push(`${n}  ${e.lines[0]}`, ...e.lines.slice(1), '');
  });
  return { text: out.join('\n'), warnings };
}

// ---- Reading ----

const EVENT =
  /^(\d{1,6})\s+(\S+)\s+(\S+)\s+(C|D|W\d{3}|KB?|KO|K)\s+(?:(\d{1,3})\s+)?(\d{2}:\d{2}:\d{2}[:;.,]\d{2})\s+(\d{2}:\d{2}:\d{2}[:;.,]\d{2})\s+(\d{2}:\d{2}:\d{2}[:;.,]\d{2})\s+(\d{2}:\d{2}:\d{2}[:;.,]\d{2})\s*$/i;

/**
 * "gain_db=-3 fade_in=1 role=music": the fields cutroom knows, as numbers or roles; the rest ignored (the linter checks
 * ranges).
 */
function mixComment(value: string): ExchangeMix | undefined {
  const mix: ExchangeMix = {};
  for (const pair of value.split(/\s+/).slice(0, 10)) {
    const [k, v] = pair.split('=');
    if (k === 'role' && (v === 'dialogue' || v === 'music' || v === 'effects')) mix.role = v;
    else if (
      (k === 'gain_db' || k === 'fade_in' || k === 'fade_out' || k === 'duck_db') &&
      v !== undefined &&
      Number.isFinite(Number(v))
    )
      mix[k] = Number(v);
  }
  return Object.keys(mix).length ? mix : undefined;
}

interface Event {
  number: string;
  reel: string;
  track: string;
  transition: string;
  srcIn: number;
  srcOut: number;
  /** The source timecodes as written, for reading at the source's own rate once it is known (to-edit.ts). */
  srcTc: [string, string];
  /** Counted drop-frame (the FCM line in force). */
  drop: boolean;
  recIn: number;
  recOut: number;
  line: number;
  hints: MediaHints;
  /** cutroom's mix, from its comment. */
  mix?: ExchangeMix;
}

/** The frame rate an EDL says it counts at (cutroom's `* CUTROOM FPS: n/d` comment), when it says one. */
export function edlStatedRate(text: string): { num: number; den: number } | undefined {
  const m = /^\* CUTROOM FPS: (\d{1,6})\/(\d{1,4})\s*$/m.exec(text.slice(0, 4096));
  if (!m) return undefined;
  const rate = { num: Number(m[1]), den: Number(m[2]) };
  return rate.den > 0 && timecodeBase(rate) !== undefined ? rate : undefined;
}

export function readEdl(text: string, fps: { num: number; den: number }): ImportedTimeline {
  const notes = noteList();
  const out: ImportedTimeline = { format: 'edl', fps, cuts: [], overlays: [], notes };
  // The frame code mode in force: set by an FCM line for the events after it (CMX 3600), else by the first event's
  // record in point (";" or "," is drop-frame). It counts every timecode of an event; a label's separator does not.
  let dropFrame: boolean | undefined;
  let modeSaid = false;
  let separatorsDisagree = false;
  const base = timecodeBase(fps);
  if (base === undefined) {
    notes.push({
      severity: 'error',
      place: 'the file',
      message: `an EDL counts timecode at a whole or NTSC frame rate of at most 60 fps, not ${+(fps.num / fps.den).toFixed(3)}; give fps`,
    });
    return out;
  }
  const events: Event[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  let last: Event | undefined;
  for (let i = 0; i < lines.length; i++) {
    // One more event than import_edit takes is enough for it to refuse the file: the rest is not read.
    if (events.length > MAX_IMPORT_ITEMS) break;
    readLine(lines[i]!, i + 1);
  }
  function readLine(raw: string, lineNo: number): void {
    const l = raw.trim();
    if (!l) return;
    if (l.length > 2000) {
      notes.push({
        severity: 'warning',
        place: `line ${lineNo}`,
        message: `a line of ${l.length} characters was skipped: no EDL line is that long`,
      });
      return;
    }
    const title = /^TITLE:\s*(.*)$/i.exec(l);
    if (title) {
      out.name = title[1]!.trim();
      return;
    }
    const fcm = /^FCM:\s*(.*)$/i.exec(l);
    if (fcm) {
      const mode = fcm[1]!.trim();
      if (/^DROP/i.test(mode) || /^NON[- ]?DROP/i.test(mode)) {
        dropFrame = /^DROP/i.test(mode);
        modeSaid = true;
      } else
        notes.push({
          severity: 'warning',
          place: `line ${lineNo}`,
          message: `"${quoteOf(l)}" is neither FCM: DROP FRAME nor FCM: NON-DROP FRAME; the frame code mode was left as it was`,
        });
      return;
    }
    if (l.startsWith('*')) {
      // "* KEY: value", split by hand (a pattern for it backtracked for seconds on a long line of spaces).
      const colon = l.indexOf(':');
      const key = colon > 0 ? l.slice(1, colon).trim().toUpperCase() : '';
      if (last && key && key.length <= 40 && /^[A-Z][A-Z ]*$/.test(key)) {
        const value = l.slice(colon + 1).trim();
        // After a dissolve or wipe pair, FROM names the outgoing clip (the pair's first line), TO the incoming.
        const pairFirst = last.transition !== 'C' ? events.at(-2) : undefined;
        // A clip name goes before the reel among the names tried (one each: a file of name comments stays linear).
        if (key === 'FROM CLIP NAME' && pairFirst && pairFirst.number === last.number)
          pairFirst.hints.names = [value, pairFirst.reel];
        else if (key === 'FROM CLIP NAME' || key === 'TO CLIP NAME' || key === 'CLIP NAME')
          last.hints.names = [value, last.reel];
        else if (key === 'SOURCE FILE' || key === 'FROM FILE') last.hints.url = value;
        else if (key === 'CUTROOM ASSET') last.hints.assetId = value;
        else if (key === 'CUTROOM MIX') last.mix = mixComment(value);
      }
      return;
    }
    if (/^M2\s/i.test(l)) {
      notes.push({
        severity: 'warning',
        place: `line ${lineNo}`,
        message: `a speed change (M2) was dropped: cutroom plays clips at their own speed`,
      });
      return;
    }
    const m = EVENT.exec(l);
    if (!m) {
      if (/^\d{1,6}\s/.test(l)) {
        // Comments after an event left out are its own: they must not rename the event before it.
        last = undefined;
        notes.push({
          severity: 'warning',
          place: `line ${lineNo}`,
          message: `an event line that was not understood was left out: "${quoteOf(l)}"`,
        });
      } else if (!/^(SPLIT|AUD|SWM|EFFECTS NAME|>>>)/i.test(l))
        notes.push({
          severity: 'warning',
          place: `line ${lineNo}`,
          message: `a line that was not understood was skipped: "${quoteOf(l)}"`,
        });
      return;
    }
    const labels = m.slice(6, 10);
    dropFrame ??= /[;,]\d{2}$/.test(labels[2]!);
    if (!dropFrame && labels.some((tc) => /[;,]\d{2}$/.test(tc)) && !separatorsDisagree) {
      separatorsDisagree = true;
      notes.push({
        severity: 'warning',
        place: `line ${lineNo}`,
        message: `timecodes written drop-frame style (";" or ",") in a non-drop-frame list were counted non-drop-frame, as ${modeSaid ? 'its FCM line says' : "the first event's record in point says (the list has no FCM line)"}, here and in any later event`,
      });
    }
    const read = labels.map((tc) => readTimecode(tc, base!, dropFrame!));
    const bad = read.find((r) => 'reason' in r);
    if (bad && 'reason' in bad) {
      last = undefined;
      notes.push({
        severity: 'error',
        place: `line ${lineNo}`,
        message: `a timecode that is not valid at ${base} frames a second${dropFrame && (base === 30 || base === 60) ? ', counted drop-frame' : ''} (${bad.reason}); the event was left out`,
      });
      return;
    }
    const [srcIn, srcOut, recIn, recOut] = read.map((r) => ('frames' in r ? r.frames : 0));
    last = {
      number: m[1]!,
      reel: m[2]!,
      track: m[3]!.toUpperCase(),
      transition: m[4]!.toUpperCase(),
      srcIn: srcIn!,
      srcOut: srcOut!,
      srcTc: [m[6]!, m[7]!],
      drop: dropFrame,
      recIn: recIn!,
      recOut: recOut!,
      line: lineNo,
      hints: { names: [m[2]!] },
    };
    events.push(last);
  }
  if (!events.length) {
    notes.push({
      severity: 'error',
      place: 'the file',
      message: `it has no event lines that could be read (NNN REEL TRACK C SRC-IN SRC-OUT REC-IN REC-OUT)${notes.length ? '; see the other notes' : ''}`,
    });
    return out;
  }
  const sec = (frames: number) => (frames * fps.den) / fps.num;
  const origin = events.reduce((min, e) => Math.min(min, e.recIn), Infinity);
  const hasPicture = (track: string) => track === 'V' || track === 'B' || track.endsWith('/V');
  const pictures = events.filter((e) => hasPicture(e.track)).sort((a, b) => a.recIn - b.recIn);
  let recordAt: number | undefined;
  for (const e of pictures) {
    const place = `event ${e.number} (line ${e.line})`;
    if (e.recOut <= e.recIn) continue; // the outgoing side of a dissolve or wipe: no length of its own
    if (/^(BL|BLK|BLACK)$/i.test(e.reel)) {
      notes.push({
        severity: 'warning',
        place,
        message: 'black (reel BL) was left out: cutroom plays its cuts back to back',
      });
      continue;
    }
    if (e.transition === 'D')
      notes.push({
        severity: 'warning',
        place,
        message: 'a dissolve became a straight cut: cutroom has no transitions',
      });
    else if (e.transition.startsWith('W') || e.transition.startsWith('K'))
      notes.push({
        severity: 'warning',
        place,
        message: `a ${e.transition.startsWith('W') ? 'wipe' : 'key'} became a straight cut: cutroom has no transitions or keys`,
      });
    if (recordAt !== undefined && e.recIn > recordAt)
      notes.push({
        severity: 'warning',
        place,
        message: `a gap of ${sec(e.recIn - recordAt).toFixed(3)} s before it was closed up: cutroom plays its cuts back to back`,
      });
    if (recordAt !== undefined && e.recIn < recordAt)
      notes.push({
        severity: 'warning',
        place,
        message: 'it overlaps the event before it on the record side; it follows that event instead',
      });
    recordAt = Math.max(recordAt ?? 0, e.recOut);
    // Whether its source and record lengths differ (a speed change) is judged once the source's rate is known.
    const cut: ImportedCut = {
      media: e.hints,
      sourceInSec: sec(e.srcIn),
      durationSec: sec(e.recOut - e.recIn),
      levels: [],
      place,
      edlSource: { tc: e.srcTc, drop: e.drop, recordFrames: e.recOut - e.recIn },
      ...(e.mix ? { mix: e.mix } : {}),
    };
    out.cuts.push(cut);
  }
  // Sound-only events: the cuts' own sound when they mirror a picture event, else overlays.
  const pictureKeys = new Set(pictures.map((p) => `${p.reel}\0${p.recIn}\0${p.srcIn}`));
  for (const e of events) {
    if (hasPicture(e.track) || e.track === 'NONE' || e.recOut <= e.recIn) continue;
    const mirror = pictureKeys.has(`${e.reel}\0${e.recIn}\0${e.srcIn}`);
    if (mirror) continue;
    const place = `event ${e.number} (line ${e.line})`;
    const overlay: ImportedOverlay = {
      media: e.hints,
      startSec: sec(e.recIn - origin),
      durationSec: sec(e.recOut - e.recIn),
      sourceInSec: sec(e.srcIn),
      levels: [],
      place,
      ...(e.mix ? { mix: e.mix } : {}),
    };
    out.overlays.push(overlay);
  }
  return out;
}
