// One picture of a rendered timeline: the first, middle and last frame of every cut, labelled under each frame (never
// over its picture) with the cut number and its timecode on the timeline, and the words the cut holds: its first
// words under its first frame, its middle ones under the middle, its last under the last (issue 47, item 5). At most
// 2000 px a side and 640 KiB: clients accept it as an image, and a result carrying it (in base64, with its text)
// stays under the 1 MiB one server-sent event may carry.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import type { RenderPlan } from '../edit/plan.js';
import { frameStartMs } from '../edit/timecode.js';
import { num } from './timeline-args.js';

export const MAX_SIDE = 2000;
export const MAX_BYTES = 640 * 1024;

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

/**
 * The frames to show: first, middle and last of each cut, by frame number in the rendered timeline; t where each
 * starts, as reported (ms up).
 */
export function sheetFrames(plan: RenderPlan): SheetFrame[] {
  const rate = { num: plan.fpsNum, den: plan.fpsDen };
  const out: SheetFrame[] = [];
  let start = 0;
  plan.cuts.forEach((c, i) => {
    const end = start + c.frames; // exclusive
    const picks = [...new Set([start, Math.floor((start + end - 1) / 2), end - 1])].filter(
      (f) => f >= start && f < end,
    );
    for (const f of picks) out.push({ cut: i + 1, frame: f, t: frameStartMs(f, rate) / 1000 });
    start = end;
  });
  return out;
}

export interface SheetLayout {
  columns: number;
  rows: number;
  thumbWidth: number;
  /** A cell's height: the picture's, and the strip under it where its labels are (labelHeight, 0: none). */
  thumbHeight: number;
  labelHeight?: number;
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

/** select's test for a sorted list of frame numbers, as a binary search: its depth and cost per frame grow with
 * log n. (A flat sum of eq() terms fails past ~100 frames: ffmpeg's expression parser says "Cannot allocate
 * memory".) */
export function selectExpr(frames: number[]): string {
  const tree = (lo: number, hi: number): string => {
    if (hi - lo === 1) return `eq(n\\,${frames[lo]})`;
    const mid = (lo + hi) >> 1;
    return `if(lt(n\\,${frames[mid]})\\,${tree(lo, mid)}\\,${tree(mid, hi)})`;
  };
  return frames.length ? tree(0, frames.length) : '0';
}

/** Where a part of the timeline starts: its first cut's index and its time on the whole timeline. */
export interface SheetPart {
  firstCut: number;
  offsetSec: number;
}

/**
 * The filter chain that turns a timeline's video (frames numbered from 0, timestamps from 0) into the sheet's
 * thumbnails, one image each, as the frames pass: select, scale, label under the picture with the cut number and timeline timecode,
 * then number them consecutively. `layout` is that of the whole sheet; `part` places a chunk on the timeline.
 * Emitting thumbnails as they come (instead of tiling in the same process) keeps ffmpeg's -progress flowing: an
 * output that produces its one frame only at the end holds back every progress report until then.
 */
export function thumbnailFilter(
  plan: RenderPlan,
  font: string | undefined,
  layout: SheetLayout,
  part: SheetPart = { firstCut: 0, offsetSec: 0 },
): { filter: string; frames: SheetFrame[] } {
  const frames = sheetFrames(plan);
  const fps = plan.fpsNum / plan.fpsDen;
  // The cut number from the frame's time: the first cut's + the count of cut starts at or before it (half a frame
  // early).
  const cutStarts: number[] = [];
  let acc = 0;
  plan.cuts.forEach((c, i) => {
    if (i > 0) cutStarts.push((acc - 0.5) / fps);
    acc += c.frames;
  });
  const cutExpr = `${part.firstCut + 1}${cutStarts.map((s) => `+gte(t\\,${num(s)})`).join('')}`;
  const offset = part.offsetSec ? `\\:${num(part.offsetSec)}` : '';
  const strip = layout.labelHeight ?? 0;
  const imageH = layout.thumbHeight - strip;
  const label = font
    ? `,drawtext=fontfile=${font}:text='#%{eif\\:${cutExpr}\\:d}  %{pts\\:hms${offset}}':x=4:y=${imageH + 3}:fontsize=${labelFont(layout)}:fontcolor=white`
    : '';
  const fit = strip
    ? `scale=${layout.thumbWidth}:${imageH},pad=${layout.thumbWidth}:${layout.thumbHeight}:0:0:color=0x202020`
    : `scale=${layout.thumbWidth}:${layout.thumbHeight}`;
  const filter = `select='${selectExpr(frames.map((f) => f.frame))}',${fit}${label},setpts=N/FRAME_RATE/TB`;
  return { filter, frames };
}

/** The thumbnails' file names, relative to the folder ffmpeg runs in (so no path of ours is read as a pattern). */
export const THUMBS_DIR = 'thumbs';
const THUMB_PATTERN = `${THUMBS_DIR}/t%05d.png`;

/** Output options for thumbnails, numbered from `startNumber` (a chunk continues the previous one's numbers). */
export const thumbnailOutputArgs = (startNumber: number) => [
  '-f',
  'image2',
  '-start_number',
  String(startNumber),
  '-c:v',
  'png',
  THUMB_PATTERN,
];

/**
 * The sheet of the whole timeline: its thumbnails and their layout, each cell its picture and a strip under it for two
 * lines of labels (the cut and time, the words), sized from the picture the cell would have without it.
 */
export function sheetPlan(plan: RenderPlan): { frames: SheetFrame[]; layout: SheetLayout } {
  const frames = sheetFrames(plan);
  const bare = sheetLayout(frames.length, plan.width, plan.height);
  const strip = stripHeight(bare);
  const layout = sheetLayout(frames.length, plan.width, (plan.height * (bare.thumbHeight + strip)) / bare.thumbHeight);
  // The picture keeps its shape: the strip is what the cell holds under it.
  const imageH = Math.max(2, Math.floor((layout.thumbWidth * plan.height) / plan.width / 2) * 2);
  return { frames, layout: { ...layout, labelHeight: Math.max(0, layout.thumbHeight - imageH) } };
}

/** The strip under a cell's picture: two lines of labels and a little room around them (an even number of px). */
const stripHeight = (layout: { thumbWidth: number; thumbHeight: number }) =>
  Math.ceil((2 * labelSize(layout) + 10) / 2) * 2;

/**
 * A cut's words as its three cells say them, in about `chars` characters each: its first words, those around its
 * middle and its last, with an ellipsis where words are left out; a short cut's words whole under its first cell.
 */
export function cutWordLabels(words: string[], chars: number): [string, string, string] {
  const text = words.join(' ');
  if (!words.length) return ['', '', ''];
  if (text.length <= chars) return [text, '', ''];
  const take = (from: number, step: 1 | -1): string[] => {
    const out: string[] = [];
    let used = 0;
    for (let i = from; i >= 0 && i < words.length; i += step) {
      if (used + words[i]!.length + 1 > chars - 1 && out.length) break;
      out.push(words[i]!);
      used += words[i]!.length + 1;
    }
    return step === 1 ? out : out.reverse();
  };
  const first = take(0, 1);
  const last = take(words.length - 1, -1);
  const mid = take(Math.max(first.length, Math.floor(words.length / 2) - 1), 1);
  const middle = words.length > first.length + last.length ? `\u2026${mid.join(' ')}\u2026` : '';
  return [`${first.join(' ')}\u2026`, middle, `\u2026${last.join(' ')}`];
}

/** The small second step: tile the thumbnails into one JPEG at the given quality (2 best .. 31 worst). Run in the
 * folder that holds THUMBS_DIR. */
export function tileArgs(layout: SheetLayout, output: string, quality: number): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-nostats',
    '-v',
    'error',
    '-y',
    '-protocol_whitelist',
    'file',
    '-f',
    'image2',
    '-start_number',
    '0',
    '-framerate',
    '25',
    '-i',
    THUMB_PATTERN,
    '-vf',
    `tile=${layout.columns}x${layout.rows}:padding=4:margin=4:color=0x303030`,
    // -update: the name is one file, never a pattern.
    '-frames:v',
    '1',
    '-update',
    '1',
    '-q:v',
    String(quality),
    '-f',
    'image2',
    '-c:v',
    'mjpeg',
    `file:${output}`,
  ];
}

/**
 * A filter longer than this goes to ffmpeg in a file (-filter_script): Linux takes no single argument over 128 KiB, and
 * one drawtext per label made a 400-cut sheet's filter 138 KB ("spawn E2BIG").
 */
export const INLINE_FILTER_CHARS = 64 * 1024;

/**
 * The labels' font size: a ninth of a cell's height, and no more than a twelfth of its width, so that a label (`#12
 * 00:01:02.345`) fits a tall cell (a vertical output's) as it fits a wide one.
 */
const labelSize = (layout: { thumbWidth: number; thumbHeight: number }) =>
  Math.max(10, Math.round(Math.min(layout.thumbHeight / 9, layout.thumbWidth / 12)));
/** The labels' size in a layout: sized to the picture, and two lines fit its strip when it has one. */
const labelFont = (layout: SheetLayout) => {
  const strip = layout.labelHeight ?? 0;
  if (!strip) return labelSize(layout);
  const picture = labelSize({ thumbWidth: layout.thumbWidth, thumbHeight: layout.thumbHeight - strip });
  return Math.max(6, Math.min(picture, Math.floor((strip - 9) / 2)));
};

/** A text of the sheet's own characters only (digits, #, :, ., space), for drawtext inside single quotes. */
const labelText = (t: string) => t.replace(/[^#0-9 .:]/g, '').replace(/:/g, '\\:');
/** Words as a label file holds them: one line, no control characters (drawtext reads it with no expansion). */
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const wordsText = (t: string) => t.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();

/**
 * Tiles unlabelled thumbnails (THUMBS_DIR, any size of the output's shape) into the sheet, scaling each to the
 * layout's picture and labelling it in the strip under it: its own text (cut number and timeline time: known only once
 * the cuts are joined) and, on a second line, `words` (by cell: what the cut says there). Run in the folder that holds
 * THUMBS_DIR. The words never enter the filter graph: they come back as `texts`, files for the caller to write (names
 * of cutroom's own, in that folder), which drawtext reads as they are. A long filter comes back as `script`, likewise.
 */
export function labelledTileArgs(
  layout: SheetLayout,
  labels: string[],
  font: string | undefined,
  output: string,
  quality: number,
  scriptFile = 'sheet.filter',
  words: string[] = [],
): { args: string[]; script?: { file: string; text: string }; texts: { file: string; text: string }[] } {
  const fontsize = labelFont(layout);
  const strip = layout.labelHeight ?? 0;
  const imageH = layout.thumbHeight - strip;
  const texts: { file: string; text: string }[] = [];
  const lineY = (k: number) => imageH + 3 + k * (fontsize + 3);
  const draw = font
    ? labels
        .map((l, i) => {
          const on = `enable='eq(n\\,${i})':fontfile=${font}`;
          const label = `,drawtext=${on}:text='${labelText(l)}':x=4:y=${lineY(0)}:fontsize=${fontsize}:fontcolor=white`;
          const said = wordsText(words[i] ?? '');
          if (!said) return label;
          const file = `words${i}.txt`;
          texts.push({ file, text: said });
          return `${label},drawtext=${on}:textfile=${file}:expansion=none:x=4:y=${lineY(1)}:fontsize=${fontsize}:fontcolor=0xFFE080`;
        })
        .join('')
    : '';
  const fit = strip
    ? `scale=${layout.thumbWidth}:${imageH},pad=${layout.thumbWidth}:${layout.thumbHeight}:0:0:color=0x202020`
    : `scale=${layout.thumbWidth}:${layout.thumbHeight}`;
  const filter = `${fit}${draw},tile=${layout.columns}x${layout.rows}:padding=4:margin=4:color=0x303030`;
  const long = filter.length > INLINE_FILTER_CHARS;
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
    'image2',
    '-start_number',
    '0',
    '-framerate',
    '25',
    '-i',
    THUMB_PATTERN,
    ...(long ? ['-filter_script:v', scriptFile] : ['-vf', filter]),
    '-frames:v',
    '1',
    '-update',
    '1',
    '-q:v',
    String(quality),
    '-f',
    'image2',
    '-c:v',
    'mjpeg',
    `file:${output}`,
  ];
  return long ? { args, script: { file: scriptFile, text: filter }, texts } : { args, texts };
}

/** Characters a line of a cell's strip holds, about (DejaVu Sans Bold at the labels' size). */
export const stripChars = (layout: SheetLayout) =>
  Math.max(8, Math.floor((layout.thumbWidth - 8) / (labelFont(layout) * 0.62)));

/** A sheet label: `#cut  HH:MM:SS.mmm` (the cut's number and the frame's time on the timeline). */
export function sheetLabel(cut: number, seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `#${cut}  ${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)}.${p(ms % 1000, 3)}`;
}

/** The sheet drawn in a pass of its own over a finished preview (for comparison in the benchmark). */
export function contactSheetArgs(
  preview: string,
  plan: RenderPlan,
  output: string,
  font: string | undefined,
  quality: number,
): { args: string[]; frames: SheetFrame[]; layout: SheetLayout } {
  const { frames, layout } = sheetPlan(plan);
  const { filter } = thumbnailFilter(plan, font, layout);
  const args = [
    '-hide_banner',
    '-nostdin',
    '-nostats',
    '-v',
    'error',
    '-y',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    'mov,mp4,m4a',
    '-i',
    `file:${preview}`,
    '-filter_complex',
    `[0:v]${filter},tile=${layout.columns}x${layout.rows}:padding=4:margin=4:color=0x303030[sheet]`,
    '-map',
    '[sheet]',
    '-frames:v',
    '1',
    '-update',
    '1',
    '-q:v',
    String(quality),
    '-f',
    'image2',
    '-c:v',
    'mjpeg',
    `file:${output}`,
  ];
  return { args, frames, layout };
}

export async function sizeOf(path: string): Promise<number> {
  return (await stat(path)).size;
}
