// Captions burned in (issue 33, item 5): a cut's cues and layout (decided in edit/captions.ts) as an ASS script that
// libass draws (ffmpeg's `ass` filter), one per cut, written by cutroom beside the process that reads it. The text of
// the words goes into the script, never into the filter string; the filter names the script by a name cutroom made.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CaptionLayout, Cue } from '../edit/captions.js';
import type { PlanCut } from '../edit/plan.js';

/** ASS time: H:MM:SS.cc (libass counts in centiseconds). */
function assTime(sec: number): string {
  const cs = Math.max(0, Math.round(sec * 100));
  const h = Math.floor(cs / 360000);
  const m = Math.floor(cs / 6000) % 60;
  const s = Math.floor(cs / 100) % 60;
  return `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}.${String(cs % 100).padStart(2, '0')}`;
}

/** A word as ASS text: its override braces and backslashes shown as look-alikes, never read as tags. */
const assText = (s: string) =>
  s
    .replace(/\\/g, '\u29f5')
    .replace(/\{/g, '(')
    .replace(/\}/g, ')')
    .replace(/[\r\n]+/g, ' ');

/** ASS colours are &HAABBGGRR (alpha 00 opaque). */
const assColour = (rrggbb: string, alpha = '00') =>
  `&H${alpha}${rrggbb.slice(4, 6)}${rrggbb.slice(2, 4)}${rrggbb.slice(0, 2)}`;
const n1 = (x: number) => String(Math.round(x * 10) / 10);

/** The ASS script of cues on a picture laid out as `layout` (its pixels are the script's), where it places them. */
export function assScript(layout: CaptionLayout, cues: Cue[]): string {
  const style = [
    'Default',
    layout.font,
    layout.fontSize,
    assColour(layout.color),
    assColour(layout.color),
    assColour('000000'),
    assColour('000000', '80'),
    0,
    0,
    0,
    0,
    100,
    100,
    0,
    0,
    1,
    n1(layout.outline),
    n1(layout.shadow),
    layout.alignment,
    layout.marginL,
    layout.marginR,
    layout.marginV,
    1,
  ].join(',');
  return [
    '[Script Info]',
    'ScriptType: v4.00+',
    `PlayResX: ${layout.width}`,
    `PlayResY: ${layout.height}`,
    // Lines are broken by cutroom where they fit (edit/captions.ts); libass wraps only what would not fit at all.
    'WrapStyle: 1',
    'ScaledBorderAndShadow: yes',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
    `Style: ${style}`,
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...cues.map(
      (c) => `Dialogue: 0,${assTime(c.start)},${assTime(c.end)},Default,,0,0,0,,${c.lines.map(assText).join('\\N')}`,
    ),
    '',
  ].join('\n');
}

/** A name the filter graph may carry as it is: no quoting, no escaping (cutroom makes it, from hex and its tag). */
const SAFE_NAME = /^[\w.@-]+$/;

/** The filter that draws a cut's captions from its script (a name in the process's working directory). */
export function captionFilter(file: string): string {
  if (!SAFE_NAME.test(file)) throw new Error(`not a plain file name for the caption filter: ${file}`);
  return `ass=filename=${file}`;
}

/**
 * Writes the scripts of the cuts that show captions into `dir` (the working directory of the process that reads them),
 * as `<prefix>.c<index>.ass`. Returns each cut's script name by its index, and the paths written (to remove after).
 */
export async function writeCaptionScripts(
  dir: string,
  cuts: PlanCut[],
  prefix: string,
): Promise<{ files: Map<number, string>; paths: string[] }> {
  const files = new Map<number, string>();
  const paths: string[] = [];
  for (const cut of cuts) {
    if (!cut.captions) continue;
    const name = `${prefix}.c${cut.index}.ass`;
    if (!SAFE_NAME.test(name)) throw new Error(`not a plain file name for captions: ${name}`);
    await writeFile(join(dir, name), assScript(cut.captions.layout, cut.captions.cues));
    files.set(cut.index, name);
    paths.push(join(dir, name));
  }
  return { files, paths };
}
