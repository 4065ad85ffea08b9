// The preview view (an MCP App, io.modelcontextprotocol/ui): the person sees the cut the agent made. It plays the
// preview with its timeline under it (every cut with its timecodes, loudness and flags; the overlays), and a click
// on a cut seeks the video there and tells the model which cut was picked. It talks to its host only (postMessage):
// the video comes through resources/read as a data: URL (the default CSP allows media from data: and nothing else),
// one blob or, when large, the parts its manifest names (joined as base64 text, checked against its length and
// sha256), and a preview still rendering is followed with preview_edit {preview_id} through tools/call.
// Under the picture, a strip per cut (its frames from the contact sheet, its sound level) where the person cuts: trims
// a cut's in or out point, drops it or moves it. Each change goes to view_edit (an app-only tool), whose new preview
// replaces the old one once it plays, and the model is told the new edit_id and what changed; a change that fails says
// so in the status line and the old preview stays. Given preview_edit's arguments before its result (ontoolinput), it
// asks view_edit for the same preview and plays its cuts one by one as they are ready, then the whole. A file dropped
// under it is uploaded into the project (drop-zone.ts) and the model told the new asset. Browser code
// (DOM, no Node): bundled at build time by scripts/build-views.mjs into one self-contained HTML file.
import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps';
import { setUpDropZone } from './drop-zone.js';
import { forPerson } from './person-text.js';

interface Cut {
  index: number;
  asset_id: string;
  source_in: string;
  source_out: string;
  timeline_start: string;
  timeline_end: string;
  seconds: number;
  loudness?: { mean_db: number; peak_db: number };
  flags: string[];
}
interface Overlay {
  index: number;
  asset_id: string;
  timeline_start: string;
  timeline_end: string;
}
interface Preview {
  preview_id: string;
  edit_id?: string;
  /** The output's frame rate (when the result says it). */
  fps?: number;
  /** view_edit: what changed, the cuts ready to play while rendering, each cut's sound level over time. */
  changed?: string;
  ready?: { index: number; uri: string }[];
  levels?: { step: number; cuts: number[][] };
  status: 'done' | 'rendering';
  progress?: number;
  resolution?: string;
  planned_seconds?: number;
  measured_seconds?: number;
  cuts?: Cut[];
  overlays?: Overlay[];
  warnings?: string[];
  /** When the result lists only the first cuts (a long edit): how many there are; preview.json has them all. */
  cuts_total?: number;
  /** The same for the overlays. */
  overlays_total?: number;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const seconds = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);
const short = (tc: string) => tc.replace(/^00:/, '');

const app = new App({ name: 'cutroom preview', version: '1.0.0' }, {}, { autoResize: true });

function applyContext(ctx: McpUiHostContext | undefined): void {
  if (ctx?.theme) applyDocumentTheme(ctx.theme);
  if (ctx?.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
}

function status(text: string): void {
  $('status').textContent = text;
}

/** A short label for a flag, for the cut's badge; the whole text is its title. */
function badge(flag: string): string {
  if (flag.startsWith('black')) return 'black';
  if (flag.startsWith('frozen')) return 'frozen';
  if (flag.startsWith('silent')) return 'silent';
  if (flag.startsWith('audible')) return 'audible';
  if (flag.includes('full scale')) return 'clipping';
  if (flag.includes('flash frame')) return 'flash';
  return 'flag';
}

function drawTimeline(p: Preview): void {
  const total = p.measured_seconds || p.planned_seconds || 1;
  const track = $('cuts');
  track.replaceChildren();
  for (const c of p.cuts ?? []) {
    const el = document.createElement('button');
    el.className = `cut${c.flags.length ? ' flagged' : ''}`;
    el.dataset.cutIndex = String(c.index);
    el.style.flexGrow = String(Math.max(0.001, (seconds(c.timeline_end) - seconds(c.timeline_start)) / total));
    el.title = [
      `Cut ${c.index + 1}: ${c.asset_id}`,
      `source ${c.source_in}-${c.source_out}`,
      ...c.flags.map(forPerson),
    ].join('\n');
    const head = document.createElement('span');
    head.className = 'num';
    head.textContent = `#${c.index + 1}`;
    // Its start and end on the timeline, side by side where the card is wide enough, else one over the other.
    const time = document.createElement('span');
    time.className = 'time';
    const from = document.createElement('span');
    from.className = 'start';
    from.textContent = short(c.timeline_start);
    const to = document.createElement('span');
    to.className = 'end';
    to.textContent = `–${short(c.timeline_end)}`;
    time.append(from, to);
    const level = document.createElement('span');
    level.className = 'level';
    level.textContent = c.loudness ? `${c.loudness.mean_db.toFixed(0)} dB` : 'no sound';
    el.append(head, time, level);
    for (const f of c.flags) {
      const b = document.createElement('span');
      b.className = `flag flag-${badge(f)}`;
      b.textContent = badge(f);
      el.append(b);
    }
    el.addEventListener('click', () => void pick(c, p.fps));
    track.append(el);
  }
  const overlays = $('overlays');
  overlays.replaceChildren();
  for (const o of p.overlays ?? []) {
    const el = document.createElement('div');
    el.className = 'overlay';
    el.dataset.overlayIndex = String(o.index);
    const from = seconds(o.timeline_start) / total;
    const to = seconds(o.timeline_end) / total;
    el.style.marginLeft = `${(from * 100).toFixed(3)}%`;
    el.style.width = `${Math.max(0.5, (to - from) * 100).toFixed(3)}%`;
    el.textContent = `♪ ${short(o.timeline_start)}–${short(o.timeline_end)}`;
    el.title = `Overlay ${o.index + 1}: ${o.asset_id}`;
    overlays.append(el);
  }
  status(statusLine(p));
}

/** The preview in one line: cuts, length, size, what is flagged. */
function statusLine(p: Preview): string {
  const total = p.measured_seconds || p.planned_seconds || 1;
  const flagged = (p.cuts ?? []).filter((c) => c.flags.length).length;
  const warnings = (p.warnings ?? []).map(forPerson).filter(Boolean);
  return `${p.cuts?.length ?? 0} cuts, ${total.toFixed(2)} s, ${p.resolution ?? ''}${flagged ? ` — ${flagged} flagged` : ''}${warnings.length ? ` — ${warnings.join('; ')}` : ''}`;
}

/**
 * Where a cut starts on the preview's clock, and the seek there: the one place the rule lives. timeline_start is the
 * start of the cut's first output frame; the seek goes to the middle of that frame (half a frame at the preview's fps,
 * or at 120 fps when the result does not say it), so that the frame on screen is the cut's own.
 */
function cutTime(c: Cut, fps = shown?.fps): number {
  return seconds(c.timeline_start) + 0.5 / (fps || 120);
}
function seekTo(c: Cut, fps?: number): void {
  $<HTMLVideoElement>('video').currentTime = cutTime(c, fps);
}

/** Seeks to the cut (seekTo) and tells the model which cut the person picked. */
async function pick(c: Cut, fps?: number): Promise<void> {
  seekTo(c, fps);
  for (const el of document.querySelectorAll('.cut'))
    el.classList.toggle('picked', (el as HTMLElement).dataset.cutIndex === String(c.index));
  try {
    await app.updateModelContext({
      content: [
        {
          type: 'text',
          text: `In the preview, the person picked cut ${c.index + 1} (index ${c.index}): ${c.asset_id} ${c.source_in}-${c.source_out}, on the timeline ${c.timeline_start}-${c.timeline_end}${c.flags.length ? `; flagged: ${c.flags.join('; ')}` : ''}.`,
        },
      ],
      structuredContent: {
        picked_cut: c.index,
        asset_id: c.asset_id,
        timeline_start: c.timeline_start,
        timeline_end: c.timeline_end,
      },
    });
  } catch {
    // A host that keeps no model context: the seek still happened.
  }
}

interface Manifest {
  mimeType: string;
  size: number;
  sha256?: string;
  parts: { uri: string; offset: number; length: number }[];
}
type Content = { blob?: string; text?: string; mimeType?: string; _meta?: Record<string, unknown> } | undefined;

const read = async (uri: string) => (await app.readServerResource({ uri })).contents[0] as Content;
/** How many `=` pad the end of a base64 string. */
function paddingOf(b64: string): number {
  if (b64.endsWith('==')) return 2;
  if (b64.endsWith('=')) return 1;
  return 0;
}
/** How many bytes a base64 string holds. */
const bytesOf = (b64: string) => (b64.length / 4) * 3 - paddingOf(b64);

async function sha256Of(b64: string): Promise<string> {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}

/** The preview as base64: one blob, or every part its manifest names (each a multiple of 3 bytes but the last). */
async function readVideo(uri: string): Promise<{ mimeType: string; b64: string }> {
  const c = await read(uri);
  if (c?.blob) return { mimeType: c.mimeType ?? 'video/mp4', b64: c.blob };
  const m = c?._meta?.['cutroom/parts'] as Manifest | undefined;
  if (!m?.parts?.length) throw new Error('the preview video could not be read');
  const parts: string[] = [];
  for (const p of m.parts) {
    status(`loading the preview (${Math.floor((100 * p.offset) / m.size)}%)…`);
    const blob = (await read(p.uri))?.blob ?? '';
    if (bytesOf(blob) !== p.length)
      throw new Error(`part ${parts.length} of the preview is not the length its manifest says`);
    parts.push(blob);
  }
  const b64 = parts.join('');
  if (bytesOf(b64) !== m.size || (m.sha256 && crypto.subtle && (await sha256Of(b64)) !== m.sha256))
    throw new Error('the preview changed while it was read: open it again');
  return { mimeType: m.mimeType, b64 };
}

/** The preview shown now (its video playing or ready), and what it was made from. */
let shown: Preview | undefined;
/** The edit view_edit is asked to change: the shown preview's edit_id, or preview_edit's own arguments. */
let editRef: Record<string, unknown> | undefined;
/** The width preview_edit was asked for (view_edit makes its previews the same size). */
let askedWidth: number | undefined;
/** The shown preview's contact sheet (a data: URL), decoded once for the strips. */
let sheet: HTMLImageElement | undefined;
/** A change or a first preview being made: the strips' controls wait. */
let busy = false;
/** The project of the edit shown: from preview_edit's arguments or view_edit's results (the drop zone's target). */
let projectId: string | undefined;

const videoEl = () => $<HTMLVideoElement>('video');
const dataUrl = (v: { mimeType: string; b64: string }) => `data:${v.mimeType};base64,${v.b64}`;
type Result = {
  isError?: boolean;
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
};
const textOf = (r: Result) => r.content?.find((c) => c.type === 'text')?.text ?? '';

/** The contact sheet a result carries (preview_edit's and view_edit's: an image/jpeg item). */
function sheetOf(r: Result): string | undefined {
  const img = r.content?.find((c) => c.type === 'image' && c.data);
  return img ? `data:${img.mimeType ?? 'image/jpeg'};base64,${img.data}` : undefined;
}

async function loadVideo(p: Preview): Promise<void> {
  status('loading the preview…');
  videoEl().src = dataUrl(await readVideo(`cutroom://previews/${p.preview_id}/preview.mp4`));
}

/** The pause after a preview_edit {preview_id} that answered "rendering": from 250 ms, doubling, at most 2 s. */
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 2000;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A preview still rendering is followed with preview_edit {preview_id} until it is done. That call waits on the
 * server, but a server told not to wait (or a host that answers at once) would be asked again at once, hundreds of
 * times a second: each "rendering" answer is followed by a pause that grows.
 */
async function follow(p: Preview): Promise<Preview> {
  let current = p;
  let wait = FIRST_PAUSE_MS;
  while (current.status === 'rendering') {
    status(
      `rendering the preview${current.progress !== undefined ? ` (${Math.floor(current.progress * 100)}%)` : ''}…`,
    );
    const r = await app.callServerTool({ name: 'preview_edit', arguments: { preview_id: current.preview_id } });
    if (r.isError)
      throw new Error((r.content?.[0] as { text?: string } | undefined)?.text ?? 'preview_edit {preview_id} failed');
    current = r.structuredContent as unknown as Preview;
    lastSheet = sheetOf(r as Result) ?? lastSheet;
    if (current.status === 'rendering') {
      await pause(wait);
      wait = Math.min(LONGEST_PAUSE_MS, wait * 2);
    }
  }
  return current;
}

/**
 * A result that lists only the first cuts (or overlays) of a long edit is completed from the preview's whole result.
 */
async function allCuts(p: Preview): Promise<Preview> {
  const partial = (shown: unknown[] | undefined, total: number | undefined) => !!total && (shown?.length ?? 0) < total;
  if (!partial(p.cuts, p.cuts_total) && !partial(p.overlays, p.overlays_total)) return p;
  const c = await read(`cutroom://previews/${p.preview_id}/preview.json`);
  const text =
    c?.text ??
    (c?.blob ? new TextDecoder().decode(Uint8Array.from(atob(c.blob), (ch) => ch.charCodeAt(0))) : undefined);
  if (!text) return p;
  const whole = JSON.parse(text) as Preview;
  // The cuts the result lists are kept as it lists them (view_edit's say the source frame each starts on).
  const listed = new Map((p.cuts ?? []).map((c) => [c.index, c]));
  return {
    ...p,
    cuts: whole.cuts?.map((c) => listed.get(c.index) ?? c) ?? p.cuts,
    overlays: whole.overlays ?? p.overlays,
  };
}

/**
 * Where a sheet's frames are: the layout media/contact-sheet.ts draws (columns in threes, cells at most 320 px, 2000 px
 * a side, 4 px apart).
 */
function cellLayout(
  count: number,
  width: number,
  height: number,
): { columns: number; thumbWidth: number; thumbHeight: number } {
  const MAX_SIDE = 2000;
  const pad = 4;
  let best: { columns: number; thumbWidth: number; thumbHeight: number } | undefined;
  for (let columns = 3; columns <= Math.max(3, count); columns += 3) {
    const rows = Math.ceil(count / columns);
    const byWidth = Math.floor((MAX_SIDE - pad * (columns + 1)) / columns);
    const byHeight = Math.floor(((MAX_SIDE - pad * (rows + 1)) / rows) * (width / height));
    const tw = Math.min(320, byWidth, byHeight);
    const thumbWidth = Math.max(16, Math.floor(tw / 2) * 2);
    const thumbHeight = Math.max(2, Math.floor((thumbWidth * height) / width / 2) * 2);
    if (!best || thumbWidth > best.thumbWidth) best = { columns, thumbWidth, thumbHeight };
    if (columns >= count) break;
  }
  return best!;
}

/**
 * The sheet as media/contact-sheet.ts's sheetPlan draws it: each cell its picture (imageHeight high, the output's
 * shape) over a strip of two label lines, sized from the cell the picture would have alone.
 */
function sheetLayout(
  count: number,
  width: number,
  height: number,
): { columns: number; thumbWidth: number; thumbHeight: number; imageHeight: number } {
  const bare = cellLayout(count, width, height);
  const label = Math.max(10, Math.round(Math.min(bare.thumbHeight / 9, bare.thumbWidth / 12)));
  const strip = Math.ceil((2 * label + 10) / 2) * 2;
  const cell = cellLayout(count, width, (height * (bare.thumbHeight + strip)) / bare.thumbHeight);
  const imageHeight = Math.max(2, Math.floor((cell.thumbWidth * height) / width / 2) * 2);
  return { ...cell, imageHeight: Math.min(imageHeight, cell.thumbHeight) };
}

/** Frames of the sheet per cut: first, middle and last (fewer for a cut of one or two frames). */
function sheetCells(p: Preview): number[][] {
  const fps = p.fps ?? 30;
  let n = 0;
  return (p.cuts ?? []).map((c) => {
    const frames = Math.max(1, Math.round((seconds(c.timeline_end) - seconds(c.timeline_start)) * fps));
    const count = Math.min(3, frames);
    return Array.from({ length: count }, () => n++);
  });
}

const THUMB_W = 56;

/** A cut's sound under its frames: its level over time when known, else its mean (line) and peak (tick). */
function drawLevel(canvas: HTMLCanvasElement, c: Cut, levels: number[] | undefined): void {
  const g = canvas.getContext('2d');
  if (!g) return;
  const { width: w, height: h } = canvas;
  const y = (db: number) => h - Math.max(0, Math.min(1, (db + 60) / 60)) * h;
  g.clearRect(0, 0, w, h);
  g.strokeStyle = g.fillStyle =
    getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#2f6fde';
  g.lineWidth = 1.5;
  if (levels?.length) {
    g.beginPath();
    levels.forEach((db, i) => (i ? g.lineTo : g.moveTo).call(g, (i / Math.max(1, levels.length - 1)) * w, y(db)));
    g.stroke();
  } else if (c.loudness) {
    g.beginPath();
    g.moveTo(0, y(c.loudness.mean_db));
    g.lineTo(w, y(c.loudness.mean_db));
    g.stroke();
    g.fillRect(w - 3, y(c.loudness.peak_db), 3, h - y(c.loudness.peak_db));
  }
  canvas.title = c.loudness ? `mean ${c.loudness.mean_db} dB, peak ${c.loudness.peak_db} dB` : 'no sound';
}

const fmt = (s: number) => (Math.round(s * 1000) / 1000).toFixed(3);

/** The strips under the picture: per cut its frames, its sound, and the person's controls. */
function drawStrips(p: Preview): void {
  const strips = $('strips');
  strips.replaceChildren();
  const cuts = p.cuts ?? [];
  const [w, h] = (p.resolution ?? '16x9').split('x').map(Number) as [number, number];
  const cells = sheetCells(p);
  const layout = sheetLayout(cells.flat().length, w || 16, h || 9);
  const frame = 1 / (p.fps ?? 30);
  for (const c of cuts) {
    const el = document.createElement('div');
    el.className = 'strip';
    el.dataset.stripIndex = String(c.index);
    const head = document.createElement('div');
    head.className = 'strip-head';
    head.textContent = `#${c.index + 1} ${(seconds(c.timeline_end) - seconds(c.timeline_start)).toFixed(2)} s`;
    el.append(head);
    const frames = document.createElement('div');
    frames.className = 'frames';
    for (const n of cells[c.index] ?? []) {
      const cv = document.createElement('canvas');
      cv.width = THUMB_W;
      cv.height = Math.max(8, Math.round((THUMB_W * layout.imageHeight) / layout.thumbWidth));
      const col = n % layout.columns;
      const row = Math.floor(n / layout.columns);
      if (sheet)
        cv.getContext('2d')?.drawImage(
          sheet,
          4 + col * (layout.thumbWidth + 4),
          4 + row * (layout.thumbHeight + 4),
          layout.thumbWidth,
          layout.imageHeight,
          0,
          0,
          cv.width,
          cv.height,
        );
      frames.append(cv);
    }
    frames.addEventListener('click', () => void pick(c, p.fps));
    el.append(frames);
    const level = document.createElement('canvas');
    level.className = 'level-line';
    level.width = THUMB_W * 3;
    level.height = 18;
    drawLevel(level, c, p.levels?.cuts[c.index]);
    el.append(level);
    // Trim: the in and out points in the source, a frame at a time or typed; applied with Trim (or Enter).
    const trim = document.createElement('div');
    trim.className = 'trim';
    const field = (name: 'in' | 'out', value: number) => {
      const box = document.createElement('label');
      const label = document.createElement('span');
      label.textContent = name;
      box.append(label);
      const minus = button('‹', `${name} one frame earlier`, `${name}-minus`);
      const input = document.createElement('input');
      input.type = 'number';
      input.step = String(frame);
      input.min = '0';
      input.value = fmt(value);
      input.dataset.field = name;
      const plus = button('›', `${name} one frame later`, `${name}-plus`);
      minus.onclick = () => (input.value = fmt(Math.max(0, Number(input.value) - frame)));
      plus.onclick = () => (input.value = fmt(Number(input.value) + frame));
      input.addEventListener('keydown', (e) => e.key === 'Enter' && apply());
      box.append(minus, input, plus);
      return { box, input };
    };
    const inF = field('in', seconds(c.source_in));
    const outF = field('out', seconds(c.source_out));
    const apply = () => {
      const change: Record<string, unknown> = { cut: c.index };
      if (Number(inF.input.value) !== Number(fmt(seconds(c.source_in)))) change.in = Number(inF.input.value);
      if (Number(outF.input.value) !== Number(fmt(seconds(c.source_out)))) change.out = Number(outF.input.value);
      if (change.in === undefined && change.out === undefined)
        return status(`cut ${c.index + 1}: change its in or out point first`);
      void changeEdit([change]);
    };
    const go = button('Trim', `trim cut ${c.index + 1} to these points`, 'trim');
    go.onclick = apply;
    trim.append(inF.box, outF.box);
    el.append(trim);
    const moves = document.createElement('div');
    moves.className = 'moves';
    const left = button('←', 'move this cut one place earlier', 'left');
    left.disabled = c.index === 0;
    left.onclick = () => void changeEdit([{ cut: c.index, move_to: c.index - 1 }]);
    const right = button('→', 'move this cut one place later', 'right');
    right.disabled = c.index === cuts.length - 1;
    right.onclick = () => void changeEdit([{ cut: c.index, move_to: c.index + 1 }]);
    const drop = button('✕', 'drop this cut', 'drop');
    drop.disabled = cuts.length < 2;
    drop.onclick = () => void changeEdit([{ cut: c.index, drop: true }]);
    moves.append(left, right, drop, go);
    el.append(moves);
    // Or dragged onto another strip: it moves to that place.
    el.draggable = true;
    el.addEventListener('dragstart', (e) => {
      e.dataTransfer?.setData('text/plain', String(c.index));
      el.classList.add('dragging');
    });
    el.addEventListener('dragend', () => el.classList.remove('dragging'));
    el.addEventListener('dragover', (e) => e.preventDefault());
    el.addEventListener('drop', (e) => {
      e.preventDefault();
      const from = Number(e.dataTransfer?.getData('text/plain'));
      if (Number.isInteger(from) && from !== c.index && !busy) void changeEdit([{ cut: from, move_to: c.index }]);
    });
    strips.append(el);
  }
  setBusy(busy);
}

function button(text: string, title: string, action: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.title = title;
  b.dataset.action = action;
  return b;
}

function setBusy(on: boolean): void {
  busy = on;
  $('strips').classList.toggle('busy', on);
  for (const el of document.querySelectorAll<HTMLButtonElement | HTMLInputElement>('#strips button, #strips input')) {
    if (on) {
      el.dataset.wasDisabled = String(el.disabled);
      el.disabled = true;
    } else if (el.dataset.wasDisabled !== undefined) {
      el.disabled = el.dataset.wasDisabled === 'true';
      delete el.dataset.wasDisabled;
    }
  }
}

async function loadSheet(url: string | undefined): Promise<void> {
  if (!url) return;
  const img = new Image();
  img.src = url;
  await img.decode().then(
    () => (sheet = img),
    () => undefined,
  );
}

/** Shows a finished preview: its video (read whole before the old one is replaced), timeline, strips. */
async function present(p: Preview, sheetUrl: string | undefined, at?: number): Promise<void> {
  const done = await allCuts(p);
  const video = await readVideo(`cutroom://previews/${done.preview_id}/preview.mp4`);
  await loadSheet(sheetUrl);
  const v = videoEl();
  const playing = !v.paused && !v.ended;
  shown = done;
  if (done.edit_id) editRef = { edit_id: done.edit_id };
  v.src = dataUrl(video);
  if (at !== undefined) {
    v.addEventListener('loadedmetadata', () => (v.currentTime = Math.min(at, Math.max(0, v.duration - 0.01))), {
      once: true,
    });
    if (playing) void v.play().catch(() => {});
  }
  delete v.dataset.playing;
  drawTimeline(done);
  drawStrips(done);
}

async function show(p: Preview, sheetUrl?: string): Promise<void> {
  try {
    const done = await allCuts(await follow(p));
    shown = done;
    if (done.edit_id) editRef = { edit_id: done.edit_id };
    await loadSheet(sheetUrl ?? lastSheet);
    drawTimeline(done);
    drawStrips(done);
    await loadVideo(done);
    drawTimeline(done);
  } catch (err) {
    status(`The preview cannot be shown here: ${forPerson((err as Error).message)}`);
  }
}

/** The sheet of the last preview_edit result followed to its end (its result carries it). */
let lastSheet: string | undefined;

/** Calls view_edit; a failure is thrown as its one line. */
async function viewEdit(args: Record<string, unknown>): Promise<{ p: Preview; sheet?: string }> {
  const r = (await app.callServerTool({ name: 'view_edit', arguments: args })) as Result;
  if (r.isError || !r.structuredContent) throw new Error(textOf(r) || 'view_edit failed');
  if (typeof r.structuredContent.project_id === 'string') projectId = r.structuredContent.project_id;
  return { p: r.structuredContent as unknown as Preview, sheet: sheetOf(r) };
}

/**
 * Asks view_edit until the preview is done (it answers early when more cuts are ready than `seen`), handing each
 * newly ready cut to `onReady`, with the same growing pause as follow() between answers that bring nothing new.
 */
async function untilDone(
  first: { p: Preview; sheet?: string },
  args: Record<string, unknown>,
  onReady?: (ready: { index: number; uri: string }[]) => Promise<void>,
): Promise<{ p: Preview; sheet?: string }> {
  let r = first;
  let wait = FIRST_PAUSE_MS;
  let seen = 0;
  while (r.p.status === 'rendering') {
    status(`rendering…${r.p.progress !== undefined ? ` (${Math.floor(r.p.progress * 100)}%)` : ''}`);
    const ready = r.p.ready ?? [];
    if (ready.length > seen) {
      // (The clips are read before asking again: the server renders on meanwhile.)
      await onReady?.(ready);
      seen = ready.length;
      wait = FIRST_PAUSE_MS;
    } else {
      await pause(wait);
      wait = Math.min(LONGEST_PAUSE_MS, wait * 2);
    }
    // The same edit again (its edit_id once kept): view_edit joins the preview being made.
    r = await viewEdit({
      ...(r.p.edit_id ? { edit_id: r.p.edit_id } : args),
      ...(askedWidth ? { width: askedWidth } : {}),
      seen,
    });
  }
  return r;
}

/** The person's change: view_edit makes the changed edit's preview; it replaces the old one once it can play. */
async function changeEdit(changes: Record<string, unknown>[]): Promise<void> {
  if (busy) return;
  if (!editRef || !shown) return status('No edit to change here.');
  setBusy(true);
  status('rendering…');
  try {
    // The size of the preview shown (the width preview_edit was asked, or that it made).
    askedWidth ??= Number(shown.resolution?.split('x')[0]) || undefined;
    const args = { ...editRef, ...(askedWidth ? { width: askedWidth } : {}) };
    const first = await viewEdit({ ...args, changes });
    const changed = first.p.changed ?? 'the edit changed';
    const { p, sheet: sheetUrl } = await untilDone(first, args);
    try {
      await present({ ...p, changed }, sheetUrl);
    } catch (err) {
      // Made and kept, but not shown: the view stays on the edit it shows (the person can try again).
      status(
        `The change was made but its preview cannot be shown here: ${forPerson((err as Error).message)}; the previous preview stays.`,
      );
      return;
    }
    status(`${changed}. ${statusLine(shown!)}`);
    try {
      await app.updateModelContext({
        content: [
          {
            type: 'text',
            text: `In the preview, the person changed the edit: ${changed}. The new edit is edit_id ${p.edit_id} (preview ${p.preview_id}); use it from now on.`,
          },
        ],
        structuredContent: { edit_id: p.edit_id, preview_id: p.preview_id, changed },
      });
    } catch {
      // A host that keeps no model context: the change was still made.
    }
  } catch (err) {
    status(`The change was not made: ${forPerson((err as Error).message)}`);
  } finally {
    setBusy(false);
  }
}

/**
 * Progressive playback: preview_edit's arguments arrive before its result; view_edit makes (or joins) the same
 * preview and says which cuts are ready. They play in timeline order, each as it is ready (the next one on 'ended'),
 * and once the whole preview is done it takes over at the same place on the timeline.
 */
let progressive = false;
async function startFromInput(args: Record<string, unknown>): Promise<void> {
  const { width, preview_id, ...edit } = args;
  if (typeof edit.project_id === 'string' && edit.project_id.trim()) projectId = edit.project_id.trim();
  if (typeof preview_id === 'string' && preview_id.trim()) return;
  askedWidth = typeof width === 'number' ? width : undefined;
  editRef = edit;
  progressive = true;
  setBusy(true);
  const clips = new Map<number, string>();
  const played: number[] = [];
  let current = -1;
  let elapsed = 0;
  const v = videoEl();
  const playNext = () => {
    const next = current + 1;
    const url = clips.get(next);
    if (!url) return;
    if (current >= 0) elapsed += Number.isFinite(v.duration) ? v.duration : 0;
    current = next;
    played.push(next);
    v.src = url;
    v.dataset.playing = `cut:${next}`;
    v.dataset.playedCuts = played.join(',');
    void v.play().catch(() => {});
  };
  const onEnded = () => playNext();
  v.addEventListener('ended', onEnded);
  try {
    const first = await viewEdit({ ...edit, ...(askedWidth ? { width: askedWidth } : {}) });
    const done = await untilDone(first, edit, async (ready) => {
      for (const { index, uri } of ready) {
        if (clips.has(index)) continue;
        // A clip that cannot be read is skipped: the whole preview follows.
        const url = await readVideo(uri).then(dataUrl, () => undefined);
        if (!url) continue;
        clips.set(index, url);
        if (current + 1 === index && (current === -1 || v.ended)) playNext();
      }
    });
    v.removeEventListener('ended', onEnded);
    const at = current >= 0 ? elapsed + (v.currentTime || 0) : undefined;
    await present(done.p, done.sheet, at);
    status(statusLine(shown!));
  } catch (err) {
    v.removeEventListener('ended', onEnded);
    progressive = false;
    status(`The preview cannot be shown here yet: ${forPerson((err as Error).message)}`);
    if (pendingResult) void show(pendingResult.p, pendingResult.sheet);
  } finally {
    setBusy(false);
  }
}
/** preview_edit's result, when it arrives while progressive playback is under way (that shows the same preview). */
let pendingResult: { p: Preview; sheet?: string } | undefined;

app.ontoolinput = (params) => {
  if (params.arguments) void startFromInput(params.arguments as Record<string, unknown>);
};
app.ontoolresult = (result) => {
  const p = result.structuredContent as unknown as Preview | undefined;
  if (result.isError || !p?.preview_id) {
    // The result is the model's: the person reads what went wrong in a person's words.
    const text = forPerson((result.content?.[0] as { text?: string } | undefined)?.text ?? '');
    if (result.isError) status(`The preview could not be made${text ? `: ${text}` : '.'}`);
    else status(text || 'No preview in this result.');
    return;
  }
  const sheetUrl = sheetOf(result as Result);
  lastSheet = sheetUrl;
  if (progressive) {
    pendingResult = { p, sheet: sheetUrl };
    return;
  }
  void show(p, sheetUrl);
};
app.onhostcontextchanged = (ctx) => applyContext(ctx);

setUpDropZone($('drop'), {
  callTool: async (name, args) => (await app.callServerTool({ name, arguments: args })) as Result,
  // A preview shown from its result alone names no project: view_edit, asked for the same preview, says it.
  projectOf: async () => {
    if (!projectId && editRef && shown) {
      askedWidth ??= Number(shown.resolution?.split('x')[0]) || undefined;
      await viewEdit({ ...editRef, ...(askedWidth ? { width: askedWidth } : {}) }).catch(() => undefined);
    }
    return projectId;
  },
  tell: async (text, structuredContent) => {
    await app.updateModelContext({ content: [{ type: 'text', text }], structuredContent });
  },
});

void app.connect().then(() => applyContext(app.getHostContext()));
