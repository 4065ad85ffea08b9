// The sheet of inspect_asset: chosen frames of a source, each seeked to (a keyframe is one decoded frame), labelled
// underneath, tiled into one JPEG within the contact sheet's limits (2000 px a side, 640 KiB).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_BYTES, sheetLayout, type SheetLayout } from './contact-sheet.js';
import { inputArgs, type MediaSource } from './input.js';
import type { Limiter } from './probe.js';
import { MediaJobError, whyFailed, runProcess } from './process.js';

export interface SheetPick {
  /** Relative time (seconds from the format's start) to show. */
  t: number;
  /** The frame at t starts a GOP: seek straight to it without decoding anything before. */
  keyframe: boolean;
  /** A thumbnail of this very frame kept by the scan: picture `index` of the MJPEG stream `file` (not seeked to). */
  thumb?: { file: string; index: number };
  /** The label under the frame, from the time of the frame actually shown. */
  label: (shownSeconds: number) => string;
}

export interface SheetRequest {
  ffmpeg: string;
  src: MediaSource;
  limiter: Limiter;
  startTime: number;
  /** Display size of the source. */
  width: number;
  height: number;
  picks: SheetPick[];
  font?: string;
  /** A folder of cutroom's own for temporary files. */
  workDir: string;
  signal?: AbortSignal;
  timeoutMs: number;
  /** Inputs per ffmpeg process. */
  maxInputs: number;
}

export interface Sheet {
  jpeg: Buffer;
  /** The relative time of each frame shown, in order (read back from the decoded frames). */
  shown: number[];
  layout: SheetLayout;
}

const QUALITY = [3, 6, 10, 16, 24, 31];
const PAD = 4;

/** Text for drawtext inside single quotes in a filter graph: our own characters only (digits, #, :, ., -, space). */
const escapeText = (s: string) => s.replace(/[^#0-9A-Za-z .\-:()/]/g, '').replace(/:/g, '\\:');

export class SheetError extends MediaJobError {
  override name = 'SheetError';
}

export async function drawSheet(req: SheetRequest): Promise<Sheet> {
  const count = req.picks.length;
  // Cells a little taller than the frames when there is a font: the label goes underneath.
  const layout = sheetLayout(count, req.width, req.font ? (req.height * 8) / 7 : req.height);
  const cellW = layout.thumbWidth;
  const cellH = layout.thumbHeight;
  const labelH = req.font ? Math.max(12, Math.round(cellH / 8 / 2) * 2) : 0;
  const imageH = cellH - labelH;
  const frameBytes = cellW * cellH * 3;
  const shown: number[] = new Array(count).fill(NaN);
  const frames: (Buffer | undefined)[] = new Array(count).fill(undefined);
  // Every frame is scaled into its cell above an empty strip; labels are drawn in the tile pass, once times are known.
  const fit = `scale=${cellW}:${imageH}:force_original_aspect_ratio=decrease,pad=${cellW}:${imageH}:-1:-1:color=black,setsar=1${labelH ? `,pad=${cellW}:${cellH}:0:0:color=0x202020` : ''}`;
  const ffmpeg = async (args: string[], expected: number, onStderr?: (chunk: string) => void) => {
    const r = await req.limiter.run(() =>
      runProcess(req.ffmpeg, args, {
        timeoutMs: req.timeoutMs,
        signal: req.signal,
        maxStdout: frameBytes * expected + 1,
        onStderr,
      }),
    );
    if (r.cancelled) throw new SheetError('cancelled', true);
    if (r.timedOut) throw new SheetError('drawing the sheet took too long');
    if (r.code !== 0) throw new SheetError(`drawing the sheet failed (${whyFailed(r)})`);
    if (r.stdout.length !== frameBytes * expected)
      throw new SheetError(
        `drawing the sheet failed: ${Math.floor(r.stdout.length / frameBytes)} of ${expected} frames came out (a pick past the end?)`,
      );
    return r.stdout;
  };
  const split = (buf: Buffer, k: number) => buf.subarray(k * frameBytes, (k + 1) * frameBytes);

  // Frames the scan kept as thumbnails: one process per stream reads the small JPEGs it needs, in order.
  const jobs: Promise<void>[] = [];
  const byFile = new Map<string, { p: SheetPick; i: number }[]>();
  req.picks.forEach((p, i) => p.thumb && byFile.set(p.thumb.file, [...(byFile.get(p.thumb.file) ?? []), { p, i }]));
  for (const [file, list] of byFile) {
    list.sort((x, y) => x.p.thumb!.index - y.p.thumb!.index);
    const select = `select='${list.map(({ p }) => `eq(n\\,${p.thumb!.index})`).join('+')}'`;
    jobs.push(
      ffmpeg(
        [
          '-hide_banner',
          '-nostdin',
          '-nostats',
          '-v',
          'error',
          '-protocol_whitelist',
          'file',
          '-f',
          'mjpeg',
          '-i',
          `file:${file}`,
          '-vf',
          `${select},${fit},format=rgb24`,
          '-fps_mode',
          'passthrough',
          '-f',
          'rawvideo',
          'pipe:1',
        ],
        list.length,
      ).then((buf) => {
        list.forEach(({ p, i }, k) => {
          frames[i] = split(buf, k);
          shown[i] = p.t;
        });
      }),
    );
  }
  // The rest: one seek per frame, several inputs per process, processes side by side within the ffmpeg limit.
  const seeks = req.picks.map((p, i) => ({ p, i })).filter(({ p }) => !p.thumb);
  for (let first = 0; first < seeks.length; first += req.maxInputs) {
    const batch = seeks.slice(first, first + req.maxInputs);
    const args = ['-hide_banner', '-nostdin', '-nostats', '-v', 'info', '-copyts'];
    const chains: string[] = [];
    batch.forEach(({ p }, k) => {
      const abs = p.t + req.startTime;
      const a = inputArgs(req.src);
      // A keyframe: seek onto it and keep everything (nothing before it is decoded). Otherwise decode from the
      // keyframe before and drop frames before t (accurate seek), a hair early so the frame at t itself is kept.
      const seek = p.keyframe
        ? ['-noaccurate_seek', '-ss', (abs + 0.0005).toFixed(6)]
        : ['-ss', Math.max(0, abs - 0.0005).toFixed(6)];
      // One decoder thread: a frame or a part of a GOP is too short for frame threading to pay off.
      args.push(...a.slice(0, -2), '-threads', '1', ...seek, ...a.slice(-2));
      chains.push(`[${k}:v:0]trim=end_frame=1,showinfo@f${k},${fit}[v${k}]`);
    });
    const graph = `${chains.join(';')};${batch.map((_, k) => `[v${k}]`).join('')}concat=n=${batch.length}:v=1:a=0,format=rgb24[o]`;
    args.push('-filter_complex', graph, '-map', '[o]', '-fps_mode', 'passthrough', '-f', 'rawvideo', 'pipe:1');
    let buf = '';
    jobs.push(
      ffmpeg(args, batch.length, (chunk) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const m = /^\[showinfo@f(\d+) @ [^\]]+\] n:\s*0 pts:\s*\S+\s+pts_time:(\S+)/.exec(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (m) shown[batch[Number(m[1])]!.i] = Number(m[2]) - req.startTime;
        }
      }).then((out) => batch.forEach(({ i }, k) => (frames[i] = split(out, k)))),
    );
  }
  await Promise.all(jobs);

  // Labels: one drawtext per cell, each enabled on its own frame only.
  const labels = req.font
    ? req.picks
        .map((p, i) => {
          const text = p.label(shown[i]!);
          const fontsize = Math.max(
            8,
            Math.min(Math.round(labelH * 0.7), Math.floor((cellW - 8) / (0.62 * text.length))),
          );
          return `drawtext=enable='eq(n\\,${i})':fontfile=${req.font}:text='${escapeText(text)}':x=4:y=${imageH + Math.round((labelH - fontsize) / 2)}:fontsize=${fontsize}:fontcolor=white,`;
        })
        .join('')
    : '';
  await mkdir(req.workDir, { recursive: true });
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const rawPath = join(req.workDir, `.frames-${tag}.rgb`);
  const jpegPath = join(req.workDir, `.sheet-${tag}.jpg`);
  try {
    await writeFile(rawPath, Buffer.concat(frames as Buffer[]));
    for (const q of QUALITY) {
      const args = [
        '-hide_banner',
        '-nostdin',
        '-nostats',
        '-v',
        'error',
        '-y',
        '-protocol_whitelist',
        'file',
        '-f',
        'rawvideo',
        '-pix_fmt',
        'rgb24',
        '-video_size',
        `${cellW}x${cellH}`,
        '-framerate',
        '1',
        '-i',
        `file:${rawPath}`,
        '-vf',
        `${labels}tile=${layout.columns}x${layout.rows}:padding=${PAD}:margin=${PAD}:color=0x303030`,
        '-frames:v',
        '1',
        '-q:v',
        String(q),
        '-f',
        'image2',
        '-c:v',
        'mjpeg',
        `file:${jpegPath}`,
      ];
      const r = await req.limiter.run(() => runProcess(req.ffmpeg, args, { timeoutMs: 60_000, signal: req.signal }));
      if (r.cancelled) throw new SheetError('cancelled', true);
      if (r.code !== 0) throw new SheetError(`drawing the sheet failed (${whyFailed(r)})`);
      const jpeg = await readFile(jpegPath);
      if (jpeg.length <= MAX_BYTES || q === QUALITY.at(-1)) return { jpeg, shown, layout };
    }
    throw new SheetError('the sheet does not fit 640 KiB');
  } finally {
    await rm(rawPath, { force: true });
    await rm(jpegPath, { force: true });
  }
}
