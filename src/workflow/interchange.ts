// export_edit and import_edit: a checked edit written as OTIO, FCPXML or EDL (or its captions as SRT or WebVTT) into
// cutroom's exports folder (with
// the media fetched beside it when asked), and a timeline file read back into an edit of the project.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DownloadError, downloadTo } from '../api/download.js';
import { isInside, openAllowed } from '../open-allowed.js';
import { TAG, keepLease, writerGone, writerTag } from '../owners.js';
import type { Diagnostic } from '../edit/model.js';
import type { KeptFiles } from '../kept.js';
import { UserFacingError } from '../errors.js';
import {
  MAX_IMPORT_ITEMS,
  droppedOf,
  exportDocument,
  mixOf,
  quoteOf,
  type ExchangeMedia,
  type ImportedTimeline,
  type ImportNote,
} from '../interchange/document.js';
import { edlStatedRate, readEdl, readTimecode, timecodeBase, writeEdl } from '../interchange/edl.js';
import type { MediaFacts } from '../edit/lint.js';
import { readFcpxml, writeFcpxml } from '../interchange/fcpxml.js';
import { readOtio, writeOtio } from '../interchange/otio.js';
import { plainLocation, toEditDraft, type AssetCandidate, type MediaMap } from '../interchange/to-edit.js';
import { fpsRational, type Timeline } from '../edit/normalize.js';
import { resolvePreset } from '../edit/compose.js';
import { sourceFromUrl } from '../media/input.js';
import { writeSrt, writeVtt } from '../interchange/subtitles.js';
import { captionsOf } from './captions.js';
import { checkAndKeep, checkEdit, keepChecked, type CheckDeps, type Listening } from './check-edit.js';
import type { CheckedEdit } from './checked-edit.js';
import type { EditRefInput } from './edit-input.js';
import type { EditStore } from './edit-store.js';
import { suggestAsset } from './suggest.js';
import type { Project } from '../api/models.js';

export type ExchangeFormat = 'otio' | 'fcpxml' | 'edl';
/** What export_edit writes: a timeline file, or the captions as a sidecar on the output's clock. */
export type ExportFormat = ExchangeFormat | 'srt' | 'vtt';
export const FORMAT_EXTENSION: Record<ExportFormat, string> = {
  otio: 'otio',
  fcpxml: 'fcpxml',
  edl: 'edl',
  srt: 'srt',
  vtt: 'vtt',
};
export const FORMAT_MIME: Record<ExportFormat, string> = {
  otio: 'application/json',
  fcpxml: 'application/xml',
  edl: 'text/plain',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
};

/** An export folder's id: its time and a random tail (like a preview's), safe as a path segment. */
const EXPORT_ID = /^\d{14}-[0-9a-f]{8}$/;
export const isExportId = (id: string) => EXPORT_ID.test(id);
/** The largest timeline file import_edit reads. */
// Above what export_edit writes for the most clips import_edit takes (5000 OTIO clips are about 20 MB).
export const MAX_IMPORT_BYTES = 32 * 1024 * 1024;
/** What import_edit could not take, listed one by one up to this many. */
const MAX_IMPORT_NOTES = 12;
/** The largest media file an export fetches. */
const MAX_MEDIA_BYTES = 8 * 1024 * 1024 * 1024;

export interface InterchangeDeps extends CheckDeps {
  /** Where checked edits are kept by edit_id. */
  edits?: EditStore;
  /** CUTROOM_CACHE_DIR/exports */
  exportsDir: string;
  /** A team's shared store (kept.ts): an export written on one replica is read on every other. */
  kept?: KeptFiles;
  /** Folders import_edit may read a path from (CUTROOM_ALLOWED_DIRS), besides the exports folder. */
  allowedDirs: string[];
  /**
   * Serving a caller of a hosted server (HTTP, remote backend): this machine's files are not theirs. import_edit
   * reads only their own exports, media is never fetched onto the server, and their newest exports alone are kept.
   */
  hosted?: boolean;
}

/** The exports a hosted caller keeps: the oldest beyond this go (their timeline files stay readable until then). */
export const HOSTED_EXPORTS_KEPT = 100;

export interface ExportOutcome {
  checked: CheckedEdit;
  exportId: string;
  path: string;
  file: string;
  format: ExportFormat;
  mediaDir?: string;
  /** What the format could not carry, and what was fetched. */
  warnings: string[];
  media: { asset_id: string; reference: string }[];
}

const safeName = (s: string) =>
  s
    .replace(/[^\w.-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 60) || 'edit';

function mediaName(
  a: {
    keyname?: string | null;
    name?: unknown;
    original_name?: unknown;
    asset_path?: string | null;
    url?: string | null;
  },
  id: string,
): string {
  if (typeof a.name === 'string' && a.name) return a.name;
  if (typeof a.original_name === 'string' && a.original_name) return a.original_name;
  const name =
    a.keyname || (a.asset_path ? basename(a.asset_path) : '') || (a.url ? basename(plainLocation(a.url)) : '');
  return name || id;
}

/**
 * The mix fields a timeline file does not carry: said, never dropped silently. OTIO carries them all (cutroom's
 * metadata) and every format an overlay's `from` (its source in point); gain and fades stay in the edit for FCPXML
 * and EDL, and so does a music overlay's duck, but for FCPXML's role (audioRole), which carries the default one.
 */
function mixNotWritten(t: Timeline, format: string): string[] {
  // (OTIO carries the mix in its metadata; an EDL in cutroom's comments, which it reads back.)
  if (format === 'otio' || format === 'edl') return [];
  const fields = (m: Parameters<typeof mixOf>[0]) => {
    const mix = mixOf(m) ?? {};
    const duck = mix.role === 'music' && (format !== 'fcpxml' || mix.duck_db !== undefined);
    // (FCPXML carries gain and fades in its clips' volume.)
    const carried =
      format === 'fcpxml' ? [] : (['gain_db', 'fade_in', 'fade_out'] as const).filter((k) => mix[k] !== undefined);
    return [...carried, ...(duck ? ["the music's duck"] : [])];
  };
  const items = [
    ...t.cuts.map((c) => ({ what: `cut ${c.index + 1}`, f: fields(c) })),
    ...t.overlays.map((o) => ({ what: `overlay ${o.index + 1}`, f: fields(o) })),
  ].filter((x) => x.f.length);
  return items.map(
    (x) =>
      `${x.what}: ${x.f.join(', ')} not written to ${format.toUpperCase()} (the edit keeps them; previews and local renders play them)`,
  );
}

/**
 * What the edit asks of the whole mix or picture that no timeline format carries: an editor's application opening the
 * file does not level, bring to a loudness, caption or duck (OTIO's and the EDL's cutroom metadata keep the mix for
 * import_edit, but an NLE does not play it).
 */
function finishingNotWritten(t: Timeline, format: string): string[] {
  const out: string[] = [];
  const fmt = format.toUpperCase();
  if (t.levelDialogue && t.cuts.length > 1)
    out.push(
      `levelling (the cuts evened out to one loudness) is not done by an editor's application opening the ${fmt}`,
    );
  if (t.loudness)
    out.push(
      `the loudness target (${t.loudness.targetLufs} LUFS, true peak ${t.loudness.truePeakDb} dBTP) is not carried in ${fmt}: set it in the editor's application, or render here`,
    );
  if (t.captions) out.push('captions are not in the timeline file: export_edit {format: "srt" or "vtt"} writes them');
  // Joins of cuts by words, crossfaded over the pause beyond them where both cuts carry it (their sound_handles).
  const joins = t.cuts.flatMap((c, k) =>
    k > 0 && t.cuts[k - 1]!.soundHandles?.afterMs && c.soundHandles?.beforeMs ? [k] : [],
  );
  if (joins.length) {
    const which = `${joins.length === 1 ? 'the join' : 'the joins'} after cut${joins.length === 1 ? '' : 's'} ${joins.join(', ')}`;
    out.push(
      format === 'edl'
        ? `${which} ${joins.length === 1 ? 'is' : 'are'} crossfaded over the pause beyond the cuts (their sound_handles), which an EDL cannot carry: imported back, ${joins.length === 1 ? 'it fades' : 'they fade'} out and in (a dip of a few dB); the edit keeps them`
        : `${which} ${joins.length === 1 ? 'is' : 'are'} crossfaded (20 ms) over the pause beyond the cuts: their sound_handles are kept in cutroom's ${fmt} metadata (import_edit reads them back), but an editor's application cuts there; add a short audio crossfade at ${joins.length === 1 ? 'it' : 'each'}`,
    );
  }
  if (format !== 'fcpxml' && t.overlays.some((o) => mixOf(o)?.role === 'music'))
    out.push(
      `the music's duck under speech is kept in cutroom's ${fmt} metadata (import_edit reads it back), but an editor's application does not play it`,
    );
  return out;
}

/**
 * The path a local asset was imported from, when a file of the same size is still there (else the data dir's copy
 * is referenced: the original moved, or was changed since).
 */
async function importedFrom(asset: { original_path?: unknown }, copy: string): Promise<string | undefined> {
  if (typeof asset.original_path !== 'string' || !isAbsolute(asset.original_path)) return undefined;
  const [there, ours] = await Promise.all([
    stat(asset.original_path).catch(() => undefined),
    stat(copy).catch(() => undefined),
  ]);
  return there?.isFile() && ours && there.size === ours.size ? asset.original_path : undefined;
}

/** Removes all but the newest `keep` finished exports (their ids start with the time they were made). */
export async function trimExports(exportsDir: string, keep: number): Promise<number> {
  const old = (await exportIds(exportsDir)).slice(keep);
  for (const id of old) await rm(join(exportsDir, id), { recursive: true, force: true });
  return old.length;
}

/** Export folders still being built by a process that is gone (killed midway): they will never be finished. */
async function sweepAbandoned(exportsDir: string): Promise<void> {
  const names = await readdir(exportsDir).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (n) => {
      const m = new RegExp(`^\\.\\d{14}-[0-9a-f]{8}\\.${TAG}\\.building$`).exec(n);
      if (!m) return;
      const touched = await stat(join(exportsDir, n)).then(
        (s) => s.mtimeMs,
        () => Date.now(),
      );
      if (writerGone(m[1]!, touched, { leased: true })) await rm(join(exportsDir, n), { recursive: true, force: true });
    }),
  );
}

export async function exportEdit(
  deps: InterchangeDeps,
  input: EditRefInput,
  opts: { format: ExportFormat; media: 'links' | 'download'; signal?: AbortSignal; listening?: Listening },
): Promise<ExportOutcome | { refused: CheckedEdit }> {
  if (deps.hosted && opts.media === 'download') {
    throw new UserFacingError(
      'media: "download" fetches the media onto the machine cutroom runs on, and this cutroom is hosted: the files would not reach you. Export with media: "links" (the default) and fetch the media from the service yourself, or run cutroom on your own machine to have it fetched beside the file',
    );
  }
  const checked = await checkAndKeep(deps, input, opts.signal, opts.listening);
  if (!checked.ready || !checked.edit || !checked.timeline) return { refused: checked };
  if (opts.format === 'edl') {
    const fps = checked.timeline.fps;
    // Checked before anything is written: an EDL's timecode needs a whole or NTSC rate.
    if (!((fps.den === 1 && fps.num <= 60) || (fps.den === 1001 && fps.num % 1000 === 0 && fps.num <= 60_000))) {
      throw new UserFacingError(
        `an EDL counts timecode at a whole frame rate (or an NTSC rate such as 29.97) of at most 60 fps; this edit is at ${fps.value} fps: export it as otio or fcpxml, or change video_output_fps`,
      );
    }
  }
  const exportId = `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}-${randomBytes(4).toString('hex')}`;
  const dir = join(deps.exportsDir, exportId);
  const building = join(deps.exportsDir, `.${exportId}.${writerTag()}.building`);
  const warnings: string[] = [];
  const name = checked.edit.name ?? checked.timeline.filename.replace(/\.mp4$/i, '');
  const file = `${safeName(name)}.${FORMAT_EXTENSION[opts.format]}`;
  await sweepAbandoned(deps.exportsDir);
  await mkdir(building, { recursive: true });
  const stopLease = keepLease(building);
  try {
    if (opts.format === 'srt' || opts.format === 'vtt') {
      // The captions alone, from the transcripts (workflow/captions.ts): no media is referenced or fetched.
      const captions = await captionsOf(deps, checked, opts.signal, opts.listening ?? {});
      warnings.push(...captions.warnings);
      if (!captions.cues.length)
        warnings.push('captions: no words of the edit were found in its transcripts; the file holds no cues');
      if (opts.media === 'download')
        warnings.push(`media: "download" does nothing for ${opts.format}: the captions reference no media`);
      const text = opts.format === 'srt' ? writeSrt(captions.cues) : writeVtt(captions.cues);
      await writeFile(join(building, file), text);
      await rename(building, dir);
      await deps.kept?.wrote(join(dir, file), text);
      if (deps.hosted) await trimExports(deps.exportsDir, HOSTED_EXPORTS_KEPT).catch(() => {});
      return { checked, exportId, path: join(dir, file), file, format: opts.format, warnings, media: [] };
    }
    const used = [
      ...new Set([...checked.timeline.cuts.map((c) => c.assetId), ...checked.timeline.overlays.map((o) => o.assetId)]),
    ];
    const media = new Map<string, ExchangeMedia>();
    const references: ExportOutcome['media'] = [];
    let fetched = 0;
    for (const id of used) {
      const info = checked.assets.get(id)!;
      const facts = info.facts;
      const label = mediaName(info.asset as never, id);
      let url = info.asset.url ?? '';
      // Local media is already a file an editor can open: it is referenced where it is, whatever `media` says.
      if (info.source?.kind === 'file') {
        // The file the person imported, where it still is as it was: an editor's application finds it by its name.
        const original = await importedFrom(info.asset as { original_path?: unknown }, info.source.path);
        url = pathToFileURL(original ?? info.source.path).href;
        if (opts.media === 'download' && !warnings.some((w) => w.startsWith('media: "download"')))
          warnings.push(
            'media: "download" does nothing for media already on this machine: the file points at it where it is',
          );
      } else if (opts.media === 'download') {
        if (info.source?.kind !== 'url')
          throw new UserFacingError(`asset ${id} has no link to fetch (${info.probeError ?? 'no url'})`);
        const ext = (extname(plainLocation(info.source.url)).match(/^\.[a-z0-9]{1,5}$/i)?.[0] ?? '.bin').toLowerCase();
        // The asset id is the service's to choose: it goes into the name only when it is plainly an id (a hostile
        // one such as "../../x" must not lead the file out of the folder).
        const idPart = /^[A-Za-z0-9-]{1,64}$/.test(id)
          ? id
          : `id-${createHash('sha256').update(id).digest('hex').slice(0, 16)}`;
        const local = join(building, 'media', `${safeName(label.replace(/\.[^.]*$/, ''))}__${idPart}${ext}`);
        if (!isInside([join(building, 'media')], local))
          throw new UserFacingError(
            `asset ${JSON.stringify(id)} cannot be saved under a safe name; nothing was exported`,
          );
        await mkdir(join(building, 'media'), { recursive: true });
        try {
          await downloadTo(info.source.url, local, { maxBytes: MAX_MEDIA_BYTES, signal: opts.signal });
        } catch (err) {
          if (err instanceof DownloadError)
            throw new UserFacingError(
              err.noSpace
                ? `the disk holding ${deps.exportsDir} is full; nothing was exported`
                : `fetching asset ${id} failed: ${err.message}; nothing was exported`,
            );
          throw err;
        }
        url = pathToFileURL(join(dir, 'media', basename(local))).href;
        fetched++;
      } else if (!references.length) {
        warnings.push(
          'the media references are the service\'s signed links, which expire: export with media: "download" for files an editor can relink against',
        );
      }
      references.push({ asset_id: id, reference: url.startsWith('file:') ? fileURLToPath(url) : plainLocation(url) });
      const timecode = mediaTimecode(facts);
      media.set(id, {
        assetId: id,
        name: label,
        url,
        ...(facts?.frameRate ? { rate: facts.frameRate } : {}),
        ...(facts?.videoStartSec !== undefined ? { videoStartSec: facts.videoStartSec } : {}),
        ...(facts?.videoTimeBase ? { videoTimeBase: facts.videoTimeBase } : {}),
        ...(facts?.durationMs !== undefined ? { durationMs: facts.durationMs } : {}),
        hasVideo: facts?.hasVideo ?? info.kind === 'video',
        hasAudio: facts?.hasAudio ?? true,
        ...(facts?.width ? { width: facts.width, height: facts.height } : {}),
        ...(facts?.audioChannels ? { audioChannels: facts.audioChannels } : {}),
        ...(timecode && 'frame' in timecode
          ? { timecodeFrame: timecode.frame, ...(timecode.drop ? { timecodeDrop: true } : {}) }
          : {}),
      });
      if (timecode && 'problem' in timecode)
        warnings.push(`asset ${id}: ${timecode.problem}; its times are written from its start`);
      if (!facts?.frameRate && info.kind === 'video')
        warnings.push(
          `asset ${id}: its frame rate is not known (${facts ? 'it is not constant' : 'not measured'}), so its in points are written in milliseconds rather than on its frames`,
        );
    }
    const doc = exportDocument(name, checked.timeline, media);
    warnings.push(...doc.warnings, ...mixNotWritten(checked.timeline, opts.format));
    let text: string;
    if (opts.format === 'otio') text = writeOtio(doc);
    else if (opts.format === 'fcpxml') {
      text = writeFcpxml(doc);
      if (doc.clips.some((c) => c.crop)) warnings.push('crops are not carried in FCPXML (they stay in the edit)');
      if (doc.clips.some((c) => c.focus))
        warnings.push('focus (the framing of another shape) is not carried in FCPXML (it stays in the edit)');
    } else {
      const edl = writeEdl(doc);
      text = edl.text;
      warnings.push(...edl.warnings);
    }
    // What the whole edit asks that no format carries: after the cuts' own warnings.
    warnings.push(...finishingNotWritten(checked.timeline, opts.format));
    await writeFile(join(building, file), text);
    await rename(building, dir);
    // The timeline file, for every replica (media fetched beside it stays on this machine: never for a hosted caller).
    await deps.kept?.wrote(join(dir, file), text);
    if (deps.hosted) await trimExports(deps.exportsDir, HOSTED_EXPORTS_KEPT).catch(() => {});
    return {
      checked,
      exportId,
      path: join(dir, file),
      file,
      format: opts.format,
      ...(fetched ? { mediaDir: join(dir, 'media') } : {}),
      warnings,
      media: references,
    };
  } catch (err) {
    await rm(building, { recursive: true, force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC')
      throw new UserFacingError(`the disk holding ${deps.exportsDir} is full; nothing was exported`);
    throw err;
  } finally {
    stopLease();
  }
}

/** The file of an export, when the id and name are an export's own. */
export async function exportFile(
  exportsDir: string,
  exportId: string,
  file: string,
  kept?: KeptFiles,
): Promise<{ path: string; format: ExportFormat } | undefined> {
  if (!isExportId(exportId) || file !== basename(file) || file.startsWith('.')) return undefined;
  const format = (Object.keys(FORMAT_EXTENSION) as ExportFormat[]).find((f) =>
    file.endsWith(`.${FORMAT_EXTENSION[f]}`),
  );
  if (!format) return undefined;
  const path = join(exportsDir, exportId, file);
  const here = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  // Written on another replica: fetched from the team's store.
  return here || (await kept?.fetch(path)) ? { path, format } : undefined;
}

/** The newest export ids (for completion). */
export async function exportIds(exportsDir: string): Promise<string[]> {
  return (await readdir(exportsDir).catch(() => [] as string[])).filter(isExportId).sort().reverse();
}

/** The timeline files of an export (what `cutroom://exports/{id}/{file}` serves), or none for an unknown id. */
export async function exportFiles(exportsDir: string, exportId: string): Promise<string[]> {
  if (!isExportId(exportId)) return [];
  const names = await readdir(join(exportsDir, exportId)).catch(() => [] as string[]);
  const found = await Promise.all(
    names.map(async (n) => ((await exportFile(exportsDir, exportId, n)) ? n : undefined)),
  );
  return found.filter((n): n is string => !!n).sort();
}

// ---- Import ----

export interface ImportInput {
  project_id: string;
  path?: string;
  content?: string;
  format?: ExchangeFormat;
  fps?: number;
  resolution?: string;
  /** The file's media mapped by hand: a name or path as the file has it -> an asset id of the project. */
  media_map?: MediaMap;
}

/** Entries a media_map may hold. */
const MAX_MEDIA_MAP = 500;

export interface ImportOutcome {
  checked: CheckedEdit;
  format: ExchangeFormat;
  mapped: string[];
}

/** The format of a file: by its extension, else by a look at its first characters. */
export function sniffFormat(text: string, name?: string): ExchangeFormat | undefined {
  const ext = name ? extname(name).toLowerCase() : '';
  if (ext === '.otio') return 'otio';
  if (ext === '.fcpxml' || ext === '.xml') return 'fcpxml';
  if (ext === '.edl') return 'edl';
  const head = text
    .replace(/^\uFEFF/, '')
    .trimStart()
    .slice(0, 400);
  if (head.startsWith('{')) return 'otio';
  if (head.startsWith('<'))
    return /<fcpxml/i.test(text.slice(0, 4000)) || head.startsWith('<?xml') ? 'fcpxml' : undefined;
  if (/^TITLE:|^FCM:|^\d{3}\s/m.test(head)) return 'edl';
  return undefined;
}

async function readTimelineFile(deps: InterchangeDeps, named: string): Promise<string> {
  // An export named by its resource URI (what a hosted export_edit returns): the file it serves.
  let path = named;
  const uri = /^cutroom:\/\/exports\/([^/]+)\/([^/]+)$/.exec(named.trim());
  if (uri) {
    const found = await exportFile(deps.exportsDir, uri[1]!, decodeURIComponent(uri[2]!), deps.kept);
    if (!found)
      throw new UserFacingError(
        `${named.slice(0, 200)} is not an export of yours (exports are kept for a while; export_edit makes a new one)`,
      );
    path = found.path;
  }
  // A hosted caller names only files of their own exports; nothing else on this machine is looked at, not even
  // whether it exists.
  if (deps.hosted && !(isAbsolute(path) && isInside([deps.exportsDir], resolve(path)))) {
    throw new UserFacingError(
      "this cutroom is hosted: import_edit reads by path only the files export_edit wrote for you. Send the timeline's text as content instead",
    );
  }
  // (A hosted caller's allowedDirs are empty: the exports folder alone.)
  const { fh, size } = await openAllowed(path, [deps.exportsDir, ...deps.allowedDirs]);
  try {
    if (size > MAX_IMPORT_BYTES)
      throw new UserFacingError(
        `${path} is ${Math.round(size / 1e6)} MB; a timeline file import_edit reads is at most ${MAX_IMPORT_BYTES / 1024 / 1024} MB`,
      );
    return (await fh.readFile()).toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * An import note as a diagnostic: at the cut or overlay it is about, else at the edit's root; the place in the file in
 * the message.
 */
function noteToDiagnostic(n: ImportNote): Diagnostic {
  return { severity: n.severity, path: notePath(n), message: `${quoteOf(n.place, 160)}: ${quoteOf(n.message, 400)}` };
}

/** The path of the cut or overlay an import note is about, or the edit's root (''). */
function notePath(n: ImportNote): string {
  if (n.cut !== undefined) return `/video_series_sequential/${n.cut}`;
  if (n.overlay !== undefined) return `/audio_overlay/${n.overlay}`;
  return '';
}

/**
 * The first MAX_IMPORT_NOTES diagnostics, and one line that counts the rest (`more` of them not in the list at all).
 */
function capped(list: Diagnostic[], more = 0): Diagnostic[] {
  const rest = list.length - MAX_IMPORT_NOTES + more;
  if (rest <= 0) return list;
  const shown = list.slice(0, MAX_IMPORT_NOTES);
  const severity = list.slice(MAX_IMPORT_NOTES).some((d) => d.severity === 'error') ? 'error' : 'warning';
  return [
    ...shown,
    { severity, path: '', message: `and ${rest} more like these (the first ${MAX_IMPORT_NOTES} are listed)` },
  ];
}

/**
 * What the import needs to know of the video assets a file's cuts map to, measured (the prober caches): their rates
 * (an in point then lands on its source's frame), start timecodes (an EDL's source times count from them) and lengths
 * (a clip the file gives no range plays its whole asset). Notes say what could not be read.
 */
async function measureAssets(
  deps: InterchangeDeps,
  assets: AssetCandidate[],
  links: Map<string, string>,
  ids: Set<string>,
  signal?: AbortSignal,
): Promise<ImportNote[]> {
  const prober = deps.prober;
  const problems: ImportNote[] = [];
  if (!prober) return problems;
  await Promise.all(
    assets
      .filter((a) => ids.has(a.id) && links.has(a.id))
      .map(async (a) => {
        const src = sourceFromUrl(links.get(a.id), { allowFile: deps.backend.kind === 'local' });
        if ('error' in src) return;
        // A source that cannot be measured keeps millisecond in points; checkEdit reports why when it probes it.
        const facts = await prober.probe(a.id, src, signal).catch((err) => {
          if (signal?.aborted) throw err;
          return undefined;
        });
        if (facts?.frameRate) a.rate = facts.frameRate;
        if (facts?.durationMs !== undefined) a.durationSec = facts.durationMs / 1000;
        const tc = mediaTimecode(facts);
        if (tc && 'frame' in tc) a.timecodeSec = (tc.frame * facts!.frameRate!.den) / facts!.frameRate!.num;
        else if (tc)
          problems.push({
            severity: 'warning',
            place: `asset ${a.id}`,
            message: `${tc.problem}; an EDL's source times for it are counted from its start`,
          });
      }),
  );
  return problems;
}

/**
 * A media's start timecode as a frame count at its own rate (drop-frame where its label says so: a tag has no FCM
 * line), undefined without one (or at 00:00:00:00), or why its label names no frame there.
 */
function mediaTimecode(
  facts: MediaFacts | undefined,
): { frame: number; drop: boolean } | { problem: string } | undefined {
  const base = facts?.timecode && facts.frameRate ? timecodeBase(facts.frameRate) : undefined;
  if (!base) return undefined;
  const tc = facts!.timecode!.replace(/[.,]/, ':');
  const read = readTimecode(tc, base, tc.includes(';'));
  if ('reason' in read) return { problem: `its start timecode was not read (${read.reason})` };
  return read.frames ? { frame: read.frames, drop: tc.includes(';') } : undefined;
}

/**
 * An EDL that does not say its rate, read at 30 fps: read again at its sources' rate when the video sources it maps
 * to share one (an EDL counts in the frames of the edit its sources were cut in), and say which rate was assumed.
 */
function edlAtSourcesRate(
  text: string,
  at30: ImportedTimeline,
  assets: AssetCandidate[],
  mediaMap: MediaMap,
): ImportedTimeline {
  const used = new Set(toEditDraft(at30, assets, {}, mediaMap).draft.video_series_sequential.map((c) => c.video_id));
  const rates = [
    ...new Set(assets.filter((a) => used.has(a.id) && a.rate).map((a) => `${a.rate!.num}/${a.rate!.den}`)),
  ];
  const [num, den] = (rates.length === 1 ? rates[0]! : '30/1').split('/').map(Number) as [number, number];
  const again =
    rates.length === 1 && `${num}/${den}` !== '30/1' && timecodeBase({ num, den }) !== undefined
      ? readEdl(text, { num, den })
      : at30;
  const rate = +(again.fps!.num / again.fps!.den).toFixed(3);
  again.notes.push({
    severity: 'warning',
    place: 'the file',
    message:
      rates.length === 1
        ? `the EDL does not say its frame rate; it was read at ${rate} fps, its sources' rate: give fps if it was made at another`
        : `the EDL does not say its frame rate; it was read at 30 fps${rates.length > 1 ? ` (its sources are at ${rates.join(', ')} fps)` : ''}: give fps if it was made at another`,
  });
  return again;
}

/**
 * Overlays the file gave no role, over cuts with sound: they play as dialogue, so nothing ducks under the speech. A
 * music bed from an editor's file (which has no cutroom role) is the usual case: said with the way to set it.
 */
function unroled(checked: CheckedEdit): Diagnostic[] {
  const t = checked.timeline;
  if (!t || !t.cuts.some((c) => checked.assets.get(c.assetId)?.facts?.hasAudio)) return [];
  return t.overlays
    .filter((o) => o.role === undefined)
    .map((o) => ({
      severity: 'warning' as const,
      path: `/audio_overlay/${o.index}`,
      message: `overlay ${o.index + 1} has no role: it plays as dialogue and will not duck under the speech`,
      hint: `if it is music, give it role: "music" (compose_edit {edit} with audio_overlay[${o.index}].role set, or overlays[].role)`,
    }));
}

/**
 * A media_map whose every asset id is one of the project's (ids trimmed); a wrong one is refused, naming the id meant.
 */
function checkMediaMap(map: MediaMap | undefined, project: Project | undefined): MediaMap {
  const entries = Object.entries(map ?? {});
  if (entries.length > MAX_MEDIA_MAP)
    throw new UserFacingError(`media_map holds ${entries.length} entries; at most ${MAX_MEDIA_MAP}`);
  // Without the project (not found, unreachable) the check of the edit says why; the map is taken as given.
  if (!project) return Object.fromEntries(entries);
  const ids = new Set((project.assets ?? []).map((a) => a.id.toLowerCase()));
  for (const [key, id] of entries) {
    if (ids.has(id.trim().toLowerCase())) continue;
    const hint = suggestAsset(project, id.trim());
    throw new UserFacingError(
      `media_map maps "${quoteOf(key, 80)}" to ${quoteOf(id, 60)}, which is no asset of the project; ${hint ? `${hint} ` : ''}get_project lists its assets`,
    );
  }
  return Object.fromEntries(entries.map(([k, id]) => [k, id.trim()]));
}

/** The kind of media an asset_type names (by its words, in any case), or unknown. */
function candidateKind(assetType: string | null | undefined): AssetCandidate['kind'] {
  const type = assetType ?? '';
  if (/audio|voice|music/i.test(type)) return 'audio';
  if (/image|photo/i.test(type)) return 'image';
  if (/video/i.test(type)) return 'video';
  return 'unknown';
}

export async function importEdit(
  deps: InterchangeDeps,
  input: ImportInput,
  signal?: AbortSignal,
): Promise<ImportOutcome> {
  if ((input.path === undefined) === (input.content === undefined))
    throw new UserFacingError('give either path (a timeline file) or content (its text), not both and not neither');
  if (input.content !== undefined && Buffer.byteLength(input.content) > MAX_IMPORT_BYTES)
    throw new UserFacingError(`content is over ${MAX_IMPORT_BYTES / 1024 / 1024} MB`);
  const text = input.content ?? (await readTimelineFile(deps, input.path!));
  const format = input.format ?? sniffFormat(text, input.path);
  if (!format)
    throw new UserFacingError('the format could not be told from the file: give format ("otio", "fcpxml" or "edl")');
  if (input.fps !== undefined && (!Number.isFinite(input.fps) || input.fps < 1 || input.fps > 120))
    throw new UserFacingError('fps must be from 1 to 120');
  let imported: ImportedTimeline;
  // An EDL's rate: as given, else as the file says (cutroom's own say it), else its sources' (below), else 30.
  let edlRate: 'given' | 'stated' | 'assumed' = 'given';
  if (format === 'otio') imported = readOtio(text);
  else if (format === 'fcpxml') imported = readFcpxml(text);
  else {
    const stated = input.fps === undefined ? edlStatedRate(text) : undefined;
    if (input.fps === undefined) edlRate = stated ? 'stated' : 'assumed';
    const f = stated ?? fpsRational(input.fps ?? 30);
    imported = readEdl(text, { num: f.num, den: f.den });
  }
  const items = imported.cuts.length + imported.overlays.length;
  if (items > MAX_IMPORT_ITEMS)
    throw new UserFacingError(
      `the file holds ${items} clips; import_edit reads timelines of up to ${MAX_IMPORT_ITEMS} (split it in the editor)`,
    );
  // The project's assets, to map the file's media back to.
  const project = await deps.backend.getProject(input.project_id.trim(), { signal }).catch(() => undefined);
  const assets: AssetCandidate[] = (project?.assets ?? []).map((a) => ({
    id: a.id,
    kind: candidateKind(a.asset_type),
    names: [
      mediaName(a as never, a.id),
      a.keyname ?? '',
      a.asset_path ? basename(a.asset_path) : '',
      a.url ? basename(plainLocation(a.url)) : '',
    ].filter(Boolean),
    ...(a.url ? { url: a.url.startsWith('file:') ? fileURLToPath(a.url) : a.url } : {}),
    ...(typeof a.original_path === 'string' ? { importedFrom: a.original_path } : {}),
  }));
  // The presets compose_edit takes ("720p", "vertical") mean the same here.
  const defaults = {
    ...(input.fps !== undefined ? { fps: input.fps } : {}),
    ...(input.resolution ? { resolution: resolvePreset(input.resolution) } : {}),
  };
  // A cut's in point lands on its source's frame when that source's rate is known: measure the cut sources (only
  // those the file maps to, and assets played whole; the prober caches), then map again with what was measured.
  const mediaMap = checkMediaMap(input.media_map, project);
  const links = new Map((project?.assets ?? []).filter((a) => a.url).map((a) => [a.id, a.url!] as const));
  const first = toEditDraft(imported, assets, defaults, mediaMap);
  const measured = await measureAssets(
    deps,
    assets,
    links,
    new Set([...first.draft.video_series_sequential.map((c) => c.video_id), ...first.unsized]),
    signal,
  );
  if (edlRate === 'assumed') imported = edlAtSourcesRate(text, imported, assets, mediaMap);
  const { draft, notes, mapped } = toEditDraft(imported, assets, defaults, mediaMap);
  if (format === 'edl') notes.push(...measured);
  if (!draft.video_series_sequential.length) {
    // The errors first; when there are none, what was skipped says why nothing was read.
    const telling = [...notes.filter((n) => n.severity === 'error'), ...notes.filter((n) => n.severity !== 'error')];
    const why = telling
      .slice(0, 3)
      .map((n) => `${quoteOf(n.place, 160)}: ${quoteOf(n.message, 300)}`)
      .join('; ');
    throw new UserFacingError(
      `no clip of the file could be read as a cut${why ? ` (${why})` : ''}; nothing was imported`,
    );
  }
  const checked = await checkEdit(deps, { project_id: input.project_id, edit: draft as never }, signal);
  // What the file held that the edit cannot: first, so that the agent reads it before the checks' own findings.
  // Both lists are capped: a file of thousands of unmapped clips gets a hundred lines each, and a count.
  const extra = capped([...notes.map(noteToDiagnostic), ...unroled(checked)], droppedOf(imported.notes));
  checked.diagnostics = [...extra, ...capped(checked.diagnostics)];
  if (extra.some((d) => d.severity === 'error')) checked.ready = false;
  await keepChecked(deps.edits, checked, signal);
  return { checked, format, mapped };
}
