// One picture of a rendered timeline: the first, middle and last frame of every cut, labelled with the cut
// number and its timecode on the timeline. At most 2000 px a side and 1 MB, which clients accept as an image.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import type { RenderPlan } from '../edit/plan.js';
import { num } from './timeline-args.js';

export const MAX_SIDE = 2000;
export const MAX_BYTES = 1024 * 1024;

const FONT_CANDIDATES = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/TTF/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf',
  '/System/Library/Fonts/Supplemental/Arial Bold.ttf',
  '/Library/Fonts/Arial.ttf',
];

/** A font for the labels, from a fixed list (the path goes into a filter graph, so never from a request). */
export async function findLabelFont(): Promise<string | undefined> {
  for (const f of FONT_CANDIDATES) {
    try {
      await access(f, constants.R_OK);
      if (!/[':\\]/.test(f)) return f;
    } catch {
      // next
    }
  }
  return undefined;
}

export interface SheetFrame {
  cut: number;
  frame: number;
  /** Timeline time of the frame, seconds. */
  t: number;
}

/** The frames to show: first, middle and last of each cut, by frame number in the rendered timeline. */
export function sheetFrames(plan: RenderPlan): SheetFrame[] {
  const fps = plan.fpsNum / plan.fpsDen;
  const out: SheetFrame[] = [];
  let start = 0;
  plan.cuts.forEach((c, i) => {
    const end = start + c.frames; // exclusive
    const picks = [...new Set([start, Math.floor((start + end - 1) / 2), end - 1])].filter((f) => f >= start && f < end);
    for (const f of picks) out.push({ cut: i + 1, frame: f, t: f / fps });
    start = end;
  });
  return out;
}

export interface SheetLayout {
  columns: number;
  rows: number;
  thumbWidth: number;
  thumbHeight: number;
}

/** Columns in multiples of 3 (one cut per row of three, or more), thumbnails as large as fit 2000 px. */
export function sheetLayout(count: number, width: number, height: number, pad = 4): SheetLayout {
  let best: SheetLayout | undefined;
  for (let columns = 3; columns <= Math.max(3, count); columns += 3) {
    const rows = Math.ceil(count / columns);
    const byWidth = Math.floor((MAX_SIDE - pad * (columns + 1)) / columns);
    const byHeight = Math.floor(((MAX_SIDE - pad * (rows + 1)) / rows) * (width / height));
    const tw = Math.min(320, byWidth, byHeight);
    const thumbWidth = Math.max(16, Math.floor(tw / 2) * 2);
    const thumbHeight = Math.max(2, Math.floor((thumbWidth * height) / width / 2) * 2);
    if (!best || thumbWidth > best.thumbWidth) best = { columns, rows, thumbWidth, thumbHeight };
    if (columns >= count) break;
  }
  return best!;
}

/**
 * The filter chain that turns the timeline's video (frames numbered from 0, timestamps on the timeline) into the
 * sheet: select the frames, scale, label each with its cut number and timecode, tile.
 */
export function sheetFilter(plan: RenderPlan, font: string | undefined): { filter: string; frames: SheetFrame[]; layout: SheetLayout } {
  const frames = sheetFrames(plan);
  const layout = sheetLayout(frames.length, plan.width, plan.height);
  const fps = plan.fpsNum / plan.fpsDen;
  const select = `select='${frames.map((f) => `eq(n\\,${f.frame})`).join('+')}'`;
  // The cut number from the frame's time: 1 + the count of cut starts at or before it (half a frame early).
  const cutStarts: number[] = [];
  let acc = 0;
  plan.cuts.forEach((c, i) => {
    if (i > 0) cutStarts.push((acc - 0.5) / fps);
    acc += c.frames;
  });
  const cutExpr = `1${cutStarts.map((s) => `+gte(t\\,${num(s)})`).join('')}`;
  const label = font
    ? `,drawtext=fontfile=${font}:text='#%{eif\\:${cutExpr}\\:d}  %{pts\\:hms}':x=4:y=4:fontsize=${Math.max(10, Math.round(layout.thumbHeight / 9))}:fontcolor=white:box=1:boxcolor=black@0.6:boxborderw=3`
    : '';
  const filter = `${select},scale=${layout.thumbWidth}:${layout.thumbHeight}${label},tile=${layout.columns}x${layout.rows}:padding=4:margin=4:color=0x303030`;
  return { filter, frames, layout };
}

/** Output options for the sheet: one JPEG frame at the given quality (2 best .. 31 worst). */
export const sheetOutputArgs = (output: string, quality: number) => ['-frames:v', '1', '-q:v', String(quality), '-f', 'image2', '-c:v', 'mjpeg', output];

/** A separate pass over a rendered preview (chunked renders, or a smaller retry when the sheet is too large). */
export function contactSheetArgs(preview: string, plan: RenderPlan, output: string, font: string | undefined, quality: number): { args: string[]; frames: SheetFrame[]; layout: SheetLayout } {
  const { filter, frames, layout } = sheetFilter(plan, font);
  const args = [
    '-hide_banner', '-nostdin', '-nostats', '-v', 'error', '-y',
    '-protocol_whitelist', 'file', '-format_whitelist', 'mov,mp4,m4a', '-i', `file:${preview}`,
    '-filter_complex', `[0:v]${filter}[sheet]`, '-map', '[sheet]', ...sheetOutputArgs(output, quality),
  ];
  return { args, frames, layout };
}

export async function sizeOf(path: string): Promise<number> {
  return (await stat(path)).size;
}
