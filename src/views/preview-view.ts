// The preview view (an MCP App, io.modelcontextprotocol/ui): the person sees the cut the agent made. It plays the
// preview with its timeline under it (every cut with its timecodes, loudness and flags; the overlays), and a click
// on a cut seeks the video there and tells the model which cut was picked. It talks to its host only (postMessage):
// the video comes through resources/read as a data: URL (the default CSP allows media from data: and nothing else),
// one blob or, when large, the parts its manifest names (joined as base64 text, checked against its length and
// sha256), and a preview still rendering is followed with preview_edit {preview_id} through tools/call. Browser code:
// bundled at build time.
import { App, applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';

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
  status: 'done' | 'rendering';
  progress?: number;
  resolution?: string;
  fps?: number;
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
    el.title = [`Cut ${c.index + 1}: ${c.asset_id}`, `source ${c.source_in}-${c.source_out}`, ...c.flags].join('\n');
    const head = document.createElement('span');
    head.className = 'num';
    head.textContent = `#${c.index + 1}`;
    const time = document.createElement('span');
    time.className = 'time';
    time.textContent = `${short(c.timeline_start)}–${short(c.timeline_end)}`;
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
  const flagged = (p.cuts ?? []).filter((c) => c.flags.length).length;
  status(`${p.cuts?.length ?? 0} cuts, ${total.toFixed(2)} s, ${p.resolution ?? ''}${flagged ? ` — ${flagged} flagged` : ''}${p.warnings?.length ? ` — ${p.warnings.join('; ')}` : ''}`);
}

/** Seeks to the middle of the cut's first frame (timeline_start is that frame's start) and tells the model which cut the person picked. */
async function pick(c: Cut, fps?: number): Promise<void> {
  const video = $<HTMLVideoElement>('video');
  video.currentTime = seconds(c.timeline_start) + 0.5 / (fps || 120);
  for (const el of document.querySelectorAll('.cut')) el.classList.toggle('picked', (el as HTMLElement).dataset.cutIndex === String(c.index));
  try {
    await app.updateModelContext({
      content: [{ type: 'text', text: `In the preview, the person picked cut ${c.index + 1} (index ${c.index}): ${c.asset_id} ${c.source_in}-${c.source_out}, on the timeline ${c.timeline_start}-${c.timeline_end}${c.flags.length ? `; flagged: ${c.flags.join('; ')}` : ''}.` }],
      structuredContent: { picked_cut: c.index, asset_id: c.asset_id, timeline_start: c.timeline_start, timeline_end: c.timeline_end },
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
/** How many bytes a base64 string holds. */
const bytesOf = (b64: string) => (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);

async function sha256Of(b64: string): Promise<string> {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
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
    if (bytesOf(blob) !== p.length) throw new Error(`part ${parts.length} of the preview is not the length its manifest says`);
    parts.push(blob);
  }
  const b64 = parts.join('');
  if (bytesOf(b64) !== m.size || (m.sha256 && crypto.subtle && (await sha256Of(b64)) !== m.sha256)) throw new Error('the preview changed while it was read: open it again');
  return { mimeType: m.mimeType, b64 };
}

async function loadVideo(p: Preview): Promise<void> {
  status('loading the preview…');
  const { mimeType, b64 } = await readVideo(`cutroom://previews/${p.preview_id}/preview.mp4`);
  $<HTMLVideoElement>('video').src = `data:${mimeType};base64,${b64}`;
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
    status(`rendering the preview${current.progress !== undefined ? ` (${Math.floor(current.progress * 100)}%)` : ''}…`);
    const r = await app.callServerTool({ name: 'preview_edit', arguments: { preview_id: current.preview_id } });
    if (r.isError) throw new Error((r.content?.[0] as { text?: string } | undefined)?.text ?? 'preview_edit {preview_id} failed');
    current = r.structuredContent as unknown as Preview;
    if (current.status === 'rendering') {
      await pause(wait);
      wait = Math.min(LONGEST_PAUSE_MS, wait * 2);
    }
  }
  return current;
}

/** A result that lists only the first cuts (or overlays) of a long edit is completed from the preview's whole result. */
async function allCuts(p: Preview): Promise<Preview> {
  const partial = (shown: unknown[] | undefined, total: number | undefined) => !!total && (shown?.length ?? 0) < total;
  if (!partial(p.cuts, p.cuts_total) && !partial(p.overlays, p.overlays_total)) return p;
  const c = await read(`cutroom://previews/${p.preview_id}/preview.json`);
  const text = c?.text ?? (c?.blob ? new TextDecoder().decode(Uint8Array.from(atob(c.blob), (ch) => ch.charCodeAt(0))) : undefined);
  if (!text) return p;
  const whole = JSON.parse(text) as Preview;
  return { ...p, cuts: whole.cuts ?? p.cuts, overlays: whole.overlays ?? p.overlays };
}

async function show(p: Preview): Promise<void> {
  try {
    const done = await allCuts(await follow(p));
    drawTimeline(done);
    await loadVideo(done);
    drawTimeline(done);
  } catch (err) {
    status(`The preview cannot be shown here: ${(err as Error).message}`);
  }
}

app.ontoolresult = (result) => {
  const p = result.structuredContent as unknown as Preview | undefined;
  if (result.isError || !p?.preview_id) {
    status((result.content?.[0] as { text?: string } | undefined)?.text ?? 'No preview in this result.');
    return;
  }
  void show(p);
};
app.onhostcontextchanged = (ctx) => applyContext(ctx);

void app.connect().then(() => applyContext(app.getHostContext()));
