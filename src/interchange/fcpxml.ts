// FCPXML 1.10 (Final Cut Pro; DaVinci Resolve reads and writes it too). Writing: formats and assets under
// resources, then library > event > project > sequence > spine, the cuts as asset-clips back to back, each
// overlay a connected asset-clip on lane -1 of the cut it starts in, levels as adjust-volume (a constant amount,
// or keyframes with one-sample steps at window edges), a cut's sound handles under a metadata key of cutroom's.
// Every time is an exact rational ("1001/30000s"). Reading takes what Final Cut and Resolve write: asset-clips and
// clips (with their video), gaps, transitions, connected clips on any spine item, tcStart offsets; what it cannot
// carry becomes a note. Pure: text in, text out.
import {
  MAX_IMPORT_ITEMS,
  addR,
  heldExactly,
  framesToR,
  noteList,
  quoteOf,
  rateFromNumber,
  rational,
  soundHandlesFrom,
  type ExchangeMix,
  type ExportDocument,
  type ImportedCut,
  type ImportedOverlay,
  type ImportedTimeline,
  type ImportNote,
  type MediaHints,
  type Rational,
  type SpanLevel,
} from './document.js';
import { XmlError, escapeXml, parseXml, type XmlElement } from './xml.js';

/** A time as FCPXML writes it: seconds, a whole number or a fraction. */
function fcpTime(r: Rational): string {
  if (r.n === 0) return '0s';
  if (r.d === 1) return `${r.n}s`;
  return `${r.n}/${r.d}s`;
}

const msR = (ms: number) => rational(Math.round(ms), 1000);
/** One audio sample at 48 kHz: the width of a level step. */
const STEP = rational(1, 48_000);
const subR = (a: Rational, b: Rational) => addR(a, { n: -b.n, d: b.d });
/** The metadata key of a cut's sound handles (cutroom's own, as its asset id's). */
const HANDLES_KEY = 'com.cutroom.sound-handles';
/** FCP's floor for volume: silence. */
const SILENT_DB = -96;
const dbOf = (level: number) => (level <= 0 ? `${SILENT_DB}dB` : `${+(20 * Math.log10(level)).toFixed(6)}dB`);

/** The one level over the whole span (1 without windows), or none when it changes within it. */
function constantLevel(levels: SpanLevel[], spanFromMs: number, spanToMs: number): number | undefined {
  if (!levels.length) return 1;
  const only = levels[0]!;
  if (levels.length === 1 && only.fromMs <= spanFromMs && only.toMs >= spanToMs) return only.level;
  return undefined;
}

/**
 * A clip's volume: its level windows over a span as keyframes (times on the same clock as the windows), times its
 * gain (the edit's gain_db: every value, and the amount outside the windows), and its fades from and to silence
 * (fadeIn/fadeOut in the amount's param, as the DTD has them: adjust-volume > param > fadeIn?, fadeOut?,
 * keyframeAnimation?). The edit's fades are a half-sine; easeInOut is Final Cut's nearest curve.
 */
function volume(
  levels: SpanLevel[],
  spanFromMs: number,
  spanToMs: number,
  indent: string,
  mix: ExchangeMix = {},
): string {
  const gain = 10 ** ((mix.gain_db ?? 0) / 20);
  const fades = [
    ...(mix.fade_in ? [`${indent}    <fadeIn type="easeInOut" duration="${fcpTime(msR(mix.fade_in * 1000))}"/>`] : []),
    ...(mix.fade_out
      ? [`${indent}    <fadeOut type="easeInOut" duration="${fcpTime(msR(mix.fade_out * 1000))}"/>`]
      : []),
  ];
  const constant = constantLevel(levels, spanFromMs, spanToMs);
  if (constant !== undefined) {
    if (constant * gain === 1 && !fades.length) return '';
    const amount = `amount="${dbOf(constant * gain)}"`;
    return fades.length
      ? `${indent}<adjust-volume ${amount}>\n${indent}  <param name="amount">\n${fades.join('\n')}\n${indent}  </param>\n${indent}</adjust-volume>\n`
      : `${indent}<adjust-volume ${amount}/>\n`;
  }
  const keys: { at: Rational; level: number }[] = [];
  levels.forEach((l, i) => {
    const prev = levels[i - 1];
    const next = levels[i + 1];
    if (l.fromMs > spanFromMs && prev?.toMs !== l.fromMs) keys.push({ at: subR(msR(l.fromMs), STEP), level: 1 });
    keys.push({ at: msR(l.fromMs), level: l.level });
    keys.push({ at: subR(msR(l.toMs), STEP), level: l.level });
    if (l.toMs < spanToMs && next?.fromMs !== l.toMs) keys.push({ at: msR(l.toMs), level: 1 });
  });
  // Before the first window the level is 1: FCP holds the first keyframe's value backwards.
  if (levels[0]!.fromMs > spanFromMs) keys.unshift({ at: msR(spanFromMs), level: 1 });
  const frames = keys
    .map((k) => `${indent}      <keyframe time="${fcpTime(k.at)}" value="${dbOf(k.level * gain)}"/>`)
    .join('\n');
  // (The gain is in every keyframe's value; the amount outside them is not read where there are keyframes.)
  return `${indent}<adjust-volume>\n${indent}  <param name="amount">\n${fades.map((f) => `${f}\n`).join('')}${indent}    <keyframeAnimation>\n${frames}\n${indent}    </keyframeAnimation>\n${indent}  </param>\n${indent}</adjust-volume>\n`;
}

export function writeFcpxml(doc: ExportDocument): string {
  const fps = doc.fps;
  const lines: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE fcpxml>',
    '<fcpxml version="1.10">',
    '  <resources>',
  ];
  lines.push(
    `    <format id="r0" frameDuration="${fcpTime(rational(fps.den, fps.num))}" width="${doc.width}" height="${doc.height}"/>`,
  );
  // One format per distinct source picture, one asset per asset used.
  const formats = new Map<string, string>();
  const assetRef = new Map<string, string>();
  const used = [...new Set([...doc.clips.map((c) => c.assetId), ...doc.overlays.map((o) => o.assetId)])];
  // Where each asset's own clock starts: its timecode (as Final Cut writes an asset's start), else 0.
  const tcOf = (id: string): Rational => {
    const m = doc.media.get(id);
    return m?.rate && m.timecodeFrame ? rational(m.timecodeFrame * m.rate.den, m.rate.num) : rational(0, 1);
  };
  used.forEach((id, i) => {
    const m = doc.media.get(id);
    let format = '';
    if (m?.hasVideo && m.rate && m.width && m.height) {
      const key = `${m.rate.num}/${m.rate.den} ${m.width}x${m.height}`;
      if (!formats.has(key)) {
        formats.set(key, `r${formats.size + 1}`);
        lines.push(
          `    <format id="${formats.get(key)}" frameDuration="${fcpTime(rational(m.rate.den, m.rate.num))}" width="${m.width}" height="${m.height}"/>`,
        );
      }
      format = ` format="${formats.get(key)}"`;
    }
    const ref = `a${i + 1}`;
    assetRef.set(id, ref);
    const duration = m?.durationMs !== undefined ? ` duration="${fcpTime(msR(m.durationMs))}"` : '';
    const video = m?.hasVideo ? ' hasVideo="1" videoSources="1"' : ' hasVideo="0"';
    const audio = m?.hasAudio
      ? ` hasAudio="1" audioSources="1" audioChannels="${Math.min(2, m.audioChannels ?? 2)}" audioRate="48000"`
      : ' hasAudio="0"';
    lines.push(
      `    <asset id="${ref}" name="${escapeXml(m?.name ?? id)}" uid="${escapeXml(id)}" start="${fcpTime(tcOf(id))}"${duration}${video}${audio}${format}>`,
    );
    lines.push(`      <media-rep kind="original-media" src="${escapeXml(m?.url ?? '')}"/>`);
    lines.push(`      <metadata><md key="com.cutroom.asset-id" value="${escapeXml(id)}"/></metadata>`);
    lines.push('    </asset>');
  });
  lines.push(
    '  </resources>',
    '  <library>',
    '    <event name="cutroom">',
    `      <project name="${escapeXml(doc.name)}">`,
  );
  lines.push(
    `        <sequence format="r0" duration="${fcpTime(framesToR(doc.totalFrames, fps))}" tcStart="0s" tcFormat="NDF" audioLayout="stereo" audioRate="48k">`,
    '          <spine>',
  );
  // With overlays, the timeline is a gap as long as the edit: the cuts are a storyline on it (lane 1) and each
  // overlay is connected to it at its frame on the timeline, so that an editor deleting or moving a cut leaves the
  // voiceover where it is (connected to a cut, it would go with it). Without overlays, the cuts are the spine.
  const anchored = doc.overlays.length > 0;
  const pad = anchored ? '    ' : '';
  if (anchored) {
    lines.push(
      `            <gap name="cutroom timeline" offset="0s" start="0s" duration="${fcpTime(framesToR(doc.totalFrames, fps))}">`,
      '              <spine lane="1" offset="0s" name="cuts">',
    );
  }
  doc.clips.forEach((c) => {
    const m = doc.media.get(c.assetId);
    const attrs = `ref="${assetRef.get(c.assetId)}" offset="${fcpTime(framesToR(c.recordFrame, fps))}" name="${escapeXml(m?.name ?? c.assetId)}" start="${fcpTime(addR(c.sourceIn, tcOf(c.assetId)))}" duration="${fcpTime(framesToR(c.frames, fps))}" tcFormat="NDF"`;
    const inner = [
      volume(c.levels, c.inMs, c.outMs, `${pad}              `, c.mix).replace(/\n$/, ''),
      // Its sound handles, with the in and out points they were measured from, for import_edit (the DTD puts a
      // clip's metadata last). Final Cut and Resolve keep or ignore a key of their own; they do not crossfade.
      c.soundHandles
        ? `${pad}              <metadata><md key="${HANDLES_KEY}" value="${escapeXml(JSON.stringify({ ...c.soundHandles, in_ms: c.inMs, out_ms: c.outMs }))}"/></metadata>`
        : '',
    ].filter(Boolean);
    if (!inner.length) lines.push(`${pad}            <asset-clip ${attrs}/>`);
    else lines.push(`${pad}            <asset-clip ${attrs}>`, ...inner, `${pad}            </asset-clip>`);
  });
  if (anchored) {
    lines.push('              </spine>');
    for (const o of doc.overlays) {
      const startFrame = Math.round(((o.startMs / 1000) * fps.num) / fps.den);
      const endFrame = Math.round(((o.endMs / 1000) * fps.num) / fps.den);
      const m = doc.media.get(o.assetId);
      // The overlay's levels are on the timeline clock; inside the connected clip its local time starts at 0.
      const local = o.levels.map((l) => ({ level: l.level, fromMs: l.fromMs - o.startMs, toMs: l.toMs - o.startMs }));
      const vol = volume(local, 0, o.endMs - o.startMs, '                ', o.mix);
      const attrs = `ref="${assetRef.get(o.assetId)}" lane="-1" offset="${fcpTime(framesToR(startFrame, fps))}" name="${escapeXml(m?.name ?? o.assetId)}" start="${fcpTime(o.fromMs ? addR(tcOf(o.assetId), rational(o.fromMs, 1000)) : tcOf(o.assetId))}" duration="${fcpTime(framesToR(Math.max(1, endFrame - startFrame), fps))}" audioRole="${o.mix?.role ?? 'dialogue'}"`;
      lines.push(
        ...(vol
          ? [`              <asset-clip ${attrs}>`, vol.replace(/\n$/, ''), '              </asset-clip>']
          : [`              <asset-clip ${attrs}/>`]),
      );
    }
    lines.push('            </gap>');
  }
  lines.push(
    '          </spine>',
    '        </sequence>',
    '      </project>',
    '    </event>',
    '  </library>',
    '</fcpxml>',
    '',
  );
  return lines.join('\n');
}

// ---- Reading ----

/** A clip's sound handles from cutroom's metadata key, where it has one that reads. */
function handlesOf(clip: XmlElement): ImportedCut['soundHandles'] {
  const md = find(clip, 'metadata');
  const value = md ? kids(md, 'md').find((m) => m.attrs.key === HANDLES_KEY)?.attrs.value : undefined;
  if (value === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  const o = typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  return soundHandlesFrom(o, o.in_ms, o.out_ms);
}

/** "1001/30000s", "5s", "0s" -> seconds; undefined when absent or malformed. */
export function parseFcpTime(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(-?\d+)(?:\/(\d+))?s\s*$/.exec(v);
  if (!m) return undefined;
  const d = m[2] ? Number(m[2]) : 1;
  return d > 0 ? Number(m[1]) / d : undefined;
}

/** Whether a time attribute is held exactly as a number (heldExactly); a malformed one is another matter (true). */
function fcpTimeExact(v: string | undefined): boolean {
  const m = v === undefined ? null : /^\s*(-?\d+)(?:\/(\d+))?s\s*$/.exec(v);
  if (!m) return true;
  const n = Number(m[1]);
  const d = m[2] ? Number(m[2]) : 1;
  return d === 0 || (Number.isSafeInteger(d) && heldExactly(n, n / d));
}
/** The time attributes that place an item or say where its media starts. */
const TIME_ATTRS = ['start', 'offset', 'duration', 'tcStart'] as const;

const dbValue = (v: string | undefined): number | undefined => {
  const m = v === undefined ? null : /^\s*(-?[\d.]+)\s*dB\s*$/i.exec(v);
  if (!m) return undefined;
  const db = Number(m[1]);
  return Number.isFinite(db) ? db : undefined;
};
const levelOfDb = (v: string | undefined): number | undefined => {
  const db = dbValue(v);
  if (db === undefined) return undefined;
  return db <= SILENT_DB ? 0 : Math.min(1, 10 ** (db / 20));
};

/**
 * The edit's mix a clip's volume carries beyond level windows: fades from and to silence (fadeIn/fadeOut of its
 * amount, seconds), and a constant amount over 0 dB (a gain: levels go up to 1).
 */
function mixOfVolume(clip: XmlElement): ExchangeMix | undefined {
  const adj = kids(clip, 'adjust-volume')[0];
  if (!adj) return undefined;
  const param = kids(adj, 'param').find((p) => p.attrs.name === 'amount');
  const fade = (name: string) => {
    const sec = param ? parseFcpTime(kids(param, name)[0]?.attrs.duration) : undefined;
    return sec && sec > 0 ? Math.round(sec * 1000) / 1000 : undefined;
  };
  const keyed = param && kids(param, 'keyframeAnimation').length > 0;
  const db = keyed ? undefined : dbValue(adj.attrs.amount);
  const mix: ExchangeMix = {
    ...(db !== undefined && db > 0 ? { gain_db: Math.round(db * 100) / 100 } : {}),
    ...(fade('fadeIn') ? { fade_in: fade('fadeIn') } : {}),
    ...(fade('fadeOut') ? { fade_out: fade('fadeOut') } : {}),
  };
  return Object.keys(mix).length ? mix : undefined;
}

interface AssetInfo {
  hints: MediaHints;
  startSec: number;
  /** A time of it is too large to hold exactly: its clips are not read. */
  unexact: boolean;
  hasVideo: boolean;
  hasAudio: boolean;
}

const kids = (e: XmlElement, name?: string) => e.children.filter((c) => !name || c.name === name);
const find = (e: XmlElement, name: string): XmlElement | undefined => {
  for (const c of e.children) {
    if (c.name === name) return c;
    const deep = find(c, name);
    if (deep) return deep;
  }
  return undefined;
};

/** Level windows (seconds, on the clip's local clock) from an adjust-volume, within [from, to). */
function levelsOf(
  clip: XmlElement,
  fromSec: number,
  toSec: number,
  place: string,
  notes: ImportNote[],
): { level: number; fromSec: number; toSec: number }[] {
  const adj = kids(clip, 'adjust-volume')[0];
  if (!adj) return [];
  const keyframes = kids(adj, 'param')
    .filter((p) => p.attrs.name === 'amount')
    .flatMap((p) => kids(p, 'keyframeAnimation').flatMap((a) => kids(a, 'keyframe')))
    .map((k) => ({ at: parseFcpTime(k.attrs.time), level: levelOfDb(k.attrs.value) }))
    .filter((k): k is { at: number; level: number } => k.at !== undefined && k.level !== undefined)
    .sort((a, b) => a.at - b.at);
  if (!keyframes.length) {
    const level = levelOfDb(adj.attrs.amount);
    if (level === undefined) {
      if (adj.attrs.amount !== undefined)
        notes.push({
          severity: 'warning',
          place,
          message: `a volume of "${adj.attrs.amount}" was not understood; the clip plays at its own level`,
        });
      return [];
    }
    return level === 1 ? [] : [{ level, fromSec, toSec }];
  }
  // Steps of up to two samples are edges; a longer ramp between different values is held at its mean.
  const spans: { level: number; fromSec: number; toSec: number }[] = [];
  const step = 2 / 48_000 + 1e-9;
  let ramped = false;
  spans.push({ level: keyframes[0]!.level, fromSec, toSec: keyframes[0]!.at });
  for (let i = 0; i + 1 < keyframes.length; i++) {
    const a = keyframes[i]!;
    const b = keyframes[i + 1]!;
    if (b.at - a.at <= step) continue;
    if (Math.abs(a.level - b.level) > 1e-6) ramped = true;
    spans.push({ level: a.level === b.level ? a.level : (a.level + b.level) / 2, fromSec: a.at, toSec: b.at });
  }
  const last = keyframes.at(-1)!;
  spans.push({ level: last.level, fromSec: last.at, toSec });
  // A plateau ends where the next begins (the step between them is inside a sample or two).
  for (let i = 0; i + 1 < spans.length; i++) spans[i]!.toSec = spans[i + 1]!.fromSec;
  if (ramped)
    notes.push({
      severity: 'warning',
      place,
      message: 'a volume ramp became a step at its mean level: cutroom levels change on a sample, not gradually',
    });
  return spans
    .map((s) => ({ ...s, fromSec: Math.max(fromSec, s.fromSec), toSec: Math.min(toSec, s.toSec) }))
    .filter((s) => s.toSec > s.fromSec && Math.abs(s.level - 1) > 1e-6);
}

/** What a time too large to hold exactly costs the import, by the element it is written on. */
function unexactConsequence(element: string): string {
  if (element === 'asset') return 'its clips were left out';
  if (element === 'sequence') return 'the timeline cannot be placed';
  return 'it was left out';
}

export function readFcpxml(text: string): ImportedTimeline {
  const notes = noteList();
  const out: ImportedTimeline = { format: 'fcpxml', cuts: [], overlays: [], notes };
  let root: XmlElement;
  try {
    root = parseXml(text);
  } catch (err) {
    notes.push({
      severity: 'error',
      place: 'the file',
      message: `it is not well-formed XML: ${err instanceof XmlError ? err.message : String(err)}`,
    });
    return out;
  }
  if (root.name !== 'fcpxml') {
    notes.push({
      severity: 'error',
      place: 'the file',
      message: `its root element is <${quoteOf(root.name)}>, not <fcpxml>`,
    });
    return out;
  }
  // "1.10" is newer than "1.5": the parts are compared as numbers, not the whole as a decimal.
  const [major = 0, minor = 0] = (root.attrs.version ?? '').split('.').map((p) => Number(p) || 0);
  if (major && (major < 1 || (major === 1 && minor < 5)))
    notes.push({
      severity: 'warning',
      place: 'the file',
      message: `FCPXML ${root.attrs.version} is older than what was tested (1.8 to 1.11); read as far as it goes`,
    });

  const resources = kids(root, 'resources')[0];
  const formats = new Map<string, XmlElement>();
  const assets = new Map<string, AssetInfo>();
  // Generators and titles make their own picture from an <effect>: not media that is missing.
  const effects = new Set(
    (resources?.children ?? []).filter((r) => r.name === 'effect' && r.attrs.id).map((r) => r.attrs.id!),
  );
  const isGenerator = (el: XmlElement) =>
    el.name === 'title' ||
    (!!el.attrs.ref && effects.has(el.attrs.ref)) ||
    el.children.some((c) => c.name === 'video' && !!c.attrs.ref && effects.has(c.attrs.ref));
  for (const r of resources?.children ?? []) {
    if (r.name === 'format' && r.attrs.id) formats.set(r.attrs.id, r);
    if (r.name === 'asset' && r.attrs.id) {
      const src = r.attrs.src ?? kids(r, 'media-rep').find((m) => m.attrs.kind !== 'proxy-media')?.attrs.src;
      const md = find(r, 'metadata');
      const cutroomId = md
        ? kids(md, 'md').find((m) => m.attrs.key === 'com.cutroom.asset-id')?.attrs.value
        : undefined;
      assets.set(r.attrs.id, {
        hints: {
          ...(cutroomId ? { assetId: cutroomId } : {}),
          ...(src ? { url: src } : {}),
          names: [r.attrs.name, r.attrs.uid].filter((n): n is string => !!n),
        },
        startSec: parseFcpTime(r.attrs.start) ?? 0,
        unexact: !TIME_ATTRS.every((a) => fcpTimeExact(r.attrs[a])),
        hasVideo: r.attrs.hasVideo === '1',
        hasAudio: r.attrs.hasAudio === '1',
      });
    }
  }
  const sequence = find(root, 'sequence');
  if (!sequence) {
    notes.push({ severity: 'error', place: 'the file', message: 'it has no <sequence> (a project timeline) to read' });
    return out;
  }
  const project = find(root, 'project');
  if (project?.attrs.name) out.name = project.attrs.name;
  const format = sequence.attrs.format ? formats.get(sequence.attrs.format) : undefined;
  const frame = parseFcpTime(format?.attrs.frameDuration);
  if (frame) {
    const m = /^(\d+)(?:\/(\d+))?s$/.exec(format!.attrs.frameDuration!.trim());
    out.fps = m ? rationalRate(Number(m[2] ?? 1), Number(m[1])) : rateFromNumber(1 / frame);
  }
  if (format?.attrs.width && format.attrs.height) {
    out.width = Number(format.attrs.width);
    out.height = Number(format.attrs.height);
  }
  const tcStart = parseFcpTime(sequence.attrs.tcStart) ?? 0;
  const spine = kids(sequence, 'spine')[0];
  if (!spine) {
    notes.push({ severity: 'error', place: 'the sequence', message: 'it has no <spine>' });
    return out;
  }

  const describe = (el: XmlElement) =>
    `<${quoteOf(el.name)}${el.attrs.name ? ` name="${quoteOf(el.attrs.name)}"` : ''}> (line ${el.line})`;
  // A time too large to hold exactly (an in point of 1e300 s less an asset start of 1e300 s comes out 0) is said
  // once, where it is written; what it places or starts is not read.
  const unexact = new Set<XmlElement>();
  const findUnexact = (el: XmlElement) => {
    const attr = TIME_ATTRS.find((a) => !fcpTimeExact(el.attrs[a]));
    if (attr) {
      unexact.add(el);
      const what = unexactConsequence(el.name);
      notes.push({
        severity: 'error',
        place: describe(el),
        message: `its ${attr} ("${quoteOf(el.attrs[attr]!, 40)}") is too large to hold exactly; ${what}`,
      });
    }
    el.children.forEach(findUnexact);
  };
  findUnexact(root);
  const mediaOf = (el: XmlElement): { asset?: AssetInfo; mediaStart: number; unexact: boolean } => {
    // An asset-clip names its asset; a clip holds a video (or audio) element that does, on the clip's own clock.
    if (el.attrs.ref && assets.has(el.attrs.ref))
      return { asset: assets.get(el.attrs.ref), mediaStart: 0, unexact: assets.get(el.attrs.ref)!.unexact };
    const inner = el.children.find(
      (c) =>
        (c.name === 'video' || c.name === 'audio' || c.name === 'asset-clip') && c.attrs.ref && assets.has(c.attrs.ref),
    );
    if (!inner) return { mediaStart: 0, unexact: false };
    // media time = inner.start + (local time - inner.offset)
    const asset = assets.get(inner.attrs.ref!)!;
    return {
      asset,
      mediaStart: (parseFcpTime(inner.attrs.start) ?? 0) - (parseFcpTime(inner.attrs.offset) ?? 0),
      unexact: asset.unexact || unexact.has(inner),
    };
  };
  const dropped = (el: XmlElement, place: string) => {
    for (const c of el.children) {
      if (c.name === 'timeMap' || c.name === 'conform-rate')
        notes.push({
          severity: 'warning',
          place,
          message: 'a speed change (retiming) was dropped: cutroom plays clips at their own speed',
        });
      if (c.name === 'filter-video' || c.name === 'filter-audio')
        notes.push({
          severity: 'warning',
          place,
          message: `an effect (${quoteOf(c.attrs.name ?? c.name)}) was dropped`,
        });
    }
  };

  let position = 0; // seconds on the timeline, gaps closed up
  let spineIndex = 0;
  const queue = [...spine.children];
  for (let qi = 0; qi < queue.length; qi++) {
    const el = queue[qi]!;
    // One more clip than import_edit takes is enough for it to refuse the file: the rest is not read.
    if (out.cuts.length + out.overlays.length > MAX_IMPORT_ITEMS) break;
    spineIndex++;
    if (unexact.has(el)) continue;
    const place = `spine item ${spineIndex}, ${describe(el)}`;
    const offset = parseFcpTime(el.attrs.offset);
    const start = parseFcpTime(el.attrs.start) ?? 0;
    const duration = parseFcpTime(el.attrs.duration);
    // Where this item's local clock (start..start+duration) sits on the timeline, as the file placed it.
    const timelineAt = offset !== undefined ? offset - tcStart : position;
    if (el.name === 'transition') {
      notes.push({
        severity: 'warning',
        place,
        message: `a transition${el.attrs.name ? ` (${quoteOf(el.attrs.name)})` : ''} became a straight cut: cutroom has no transitions`,
      });
      continue;
    }
    // A gap carrying the cuts as a storyline (lane 1, as cutroom writes a timeline with overlays): its items are the
    // cuts, in the spine's place; what else is connected to it hangs on the timeline.
    const story =
      el.name === 'gap'
        ? el.children.find(
            (c) =>
              c.name === 'spine' &&
              Number(c.attrs.lane) > 0 &&
              c.children.some((x) => x.name !== 'gap' && x.name !== 'transition'),
          )
        : undefined;
    const connected = el.children.filter((c) => c.attrs.lane !== undefined && c.attrs.lane !== '0' && c !== story);
    for (const c of connected) connectedItem(c, start, timelineAt, place);
    if (story) {
      queue.splice(qi + 1, 0, ...story.children);
      continue;
    }
    if (el.name === 'gap') {
      if (duration)
        notes.push({
          severity: 'warning',
          place,
          message: `a gap of ${duration.toFixed(3)} s was closed up: cutroom plays its cuts back to back`,
        });
      continue;
    }
    if (isGenerator(el)) {
      notes.push({
        severity: 'warning',
        place,
        message:
          'a generator or title (it makes its own picture, from no media) is not something cutroom can play; it was left out and the timeline closed up',
      });
      continue;
    }
    if (el.name === 'asset-clip' || el.name === 'clip' || el.name === 'audition' || el.name === 'video') {
      const target =
        el.name === 'audition' ? el.children.find((c) => c.name === 'asset-clip' || c.name === 'clip') : el;
      if (!target || duration === undefined) {
        notes.push({ severity: 'warning', place, message: 'an item without media or duration was left out' });
        continue;
      }
      const { asset, mediaStart, unexact: tooLarge } = mediaOf(target);
      if (tooLarge || unexact.has(target)) continue;
      if (!asset) {
        notes.push({
          severity: 'error',
          place,
          message: `its media is not among the file's assets (ref "${target.attrs.ref ?? ''}")`,
        });
        continue;
      }
      if (!asset.hasVideo) {
        notes.push({
          severity: 'warning',
          place,
          message:
            'an audio-only clip in the spine was left out: cutroom plays pictures in sequence (put sound on a connected lane)',
        });
        position += duration;
        continue;
      }
      if (target.attrs.enabled === '0') {
        notes.push({ severity: 'warning', place, message: 'the clip is disabled in the file; it was left out' });
        continue;
      }
      dropped(target, place);
      const sourceIn = mediaStart + start - asset.startSec;
      const localToSource = (s: number) => mediaStart + s - asset.startSec;
      const cut: ImportedCut = {
        media: asset.hints,
        sourceInSec: sourceIn,
        durationSec: duration,
        levels: levelsOf(target, start, start + duration, place, notes).map((l) => ({
          level: l.level,
          fromSec: localToSource(l.fromSec),
          toSec: localToSource(l.toSec),
        })),
        place,
      };
      const mix = mixOfVolume(target);
      if (mix) cut.mix = mix;
      const handles = handlesOf(target);
      if (handles) cut.soundHandles = handles;
      out.cuts.push(cut);
      position += duration;
      continue;
    }
    notes.push({
      severity: 'warning',
      place,
      message: `<${quoteOf(el.name)}> items (compound, multicam, sync clips, titles, generators) are not something cutroom can play; it was left out`,
    });
  }
  return out;

  function connectedItem(c: XmlElement, parentStart: number, parentAt: number, parentPlace: string) {
    if (c.name === 'transition' || unexact.has(c)) return;
    const lane = Number(c.attrs.lane);
    const at = parentAt + ((parseFcpTime(c.attrs.offset) ?? parentStart) - parentStart);
    if (c.name === 'spine') {
      // A secondary storyline: its items one after another from where it is connected.
      let run = 0;
      for (const x of c.children) {
        if (x.name === 'transition') continue;
        if (x.name !== 'gap')
          connectedAt(x, at + run, `${describe(x)} in the storyline ${describe(c)} connected to ${parentPlace}`, lane);
        run += parseFcpTime(x.attrs.duration) ?? 0;
      }
      return;
    }
    connectedAt(c, at, `${describe(c)} connected to ${parentPlace}`, lane);
  }

  /** One connected item (or an item of a connected storyline) that plays from `at` on the timeline. */
  function connectedAt(item: XmlElement, at: number, place: string, lane: number) {
    // An audition plays its pick: the first clip in it.
    const c =
      item.name === 'audition'
        ? (item.children.find((x) => x.name === 'asset-clip' || x.name === 'clip') ?? item)
        : item;
    if (unexact.has(item) || unexact.has(c)) return;
    if (isGenerator(c)) {
      notes.push({
        severity: 'warning',
        place,
        message:
          'a generator or title (it makes its own picture, from no media) is not something cutroom can play; it was left out',
      });
      return;
    }
    const { asset, mediaStart, unexact: tooLarge } = mediaOf(c);
    if (tooLarge) return;
    const duration = parseFcpTime(c.attrs.duration) ?? parseFcpTime(item.attrs.duration);
    if (!asset || duration === undefined) {
      notes.push({ severity: 'warning', place, message: 'a connected item without media or duration was left out' });
      return;
    }
    if (asset.hasVideo && lane > 0) {
      notes.push({
        severity: 'warning',
        place,
        message: 'a connected video clip (a layer above the spine) was left out: cutroom plays one picture at a time',
      });
      return;
    }
    if (!asset.hasAudio) {
      notes.push({ severity: 'warning', place, message: 'a connected item without sound was left out' });
      return;
    }
    dropped(c, place);
    const start = parseFcpTime(c.attrs.start) ?? asset.startSec;
    const levels = levelsOf(c, start, start + duration, place, notes).map((l) => ({
      level: l.level,
      fromSec: at + (l.fromSec - start),
      toSec: at + (l.toSec - start),
    }));
    // Its role as Final Cut names it ("music", or a subrole "music.Score"): music and effects are cutroom's roles.
    const role = (c.attrs.audioRole ?? '').split('.')[0]!.toLowerCase();
    const volumeMix = mixOfVolume(c);
    const mix =
      role === 'music' || role === 'effects' || volumeMix
        ? {
            mix: {
              ...(role === 'music' || role === 'effects' ? { role: role as 'music' | 'effects' } : {}),
              ...volumeMix,
            },
          }
        : {};
    const overlay: ImportedOverlay = {
      media: asset.hints,
      startSec: at,
      durationSec: duration,
      sourceInSec: mediaStart + start - asset.startSec,
      levels,
      place,
      ...mix,
    };
    out.overlays.push(overlay);
  }
}

const rationalRate = (num: number, den: number) => {
  const r = rational(num, den);
  return { num: r.n, den: r.d };
};
