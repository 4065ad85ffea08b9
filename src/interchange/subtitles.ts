// Captions as sidecar files on the output's clock (issue 33, item 5): SubRip (SRT) and WebVTT, from the cues
// edit/captions.ts makes. A transcript's text is shown, never read as markup: WebVTT's markup characters are escaped;
// SubRip has no escapes, and players read HTML-like tags (<b>, <font>) and ASS overrides ({\fs400}) in it, so those
// characters become look-alikes there (issue 47, item 2). Pure: no I/O.
import type { Cue } from '../edit/captions.js';

/** HH:MM:SS<sep>mmm. */
function clock(sec: number, sep: ',' | '.'): string {
  const ms = Math.max(0, Math.round(sec * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}${sep}${String(ms % 1000).padStart(3, '0')}`;
}

/** A cue's line as text: one line (no line breaks), and for WebVTT its markup characters escaped. */
const line = (s: string) => s.replace(/[\r\n]+/g, ' ').trim();
const vttText = (s: string) => line(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** SubRip's reading of tags and overrides defeated: < > as single angle quotes, { } as parentheses, \\ as a look-alike. */
const SRT_LOOK_ALIKES: Record<string, string> = { '<': '\u2039', '>': '\u203a', '{': '(', '}': ')', '\\': '\u29f5' };
const srtText = (s: string) => line(s).replace(/[<>{}\\]/g, (c) => SRT_LOOK_ALIKES[c]!);

/** SubRip: numbered cues, HH:MM:SS,mmm --> HH:MM:SS,mmm, a blank line after each (markup shown as look-alikes). */
export function writeSrt(cues: Cue[]): string {
  return cues
    .map((c, i) => `${i + 1}\n${clock(c.start, ',')} --> ${clock(c.end, ',')}\n${c.lines.map(srtText).join('\n')}\n`)
    .join('\n');
}

/** WebVTT: the header, then cues HH:MM:SS.mmm --> HH:MM:SS.mmm (text with &, <, > escaped). */
export function writeVtt(cues: Cue[]): string {
  return `WEBVTT\n\n${cues.map((c) => `${clock(c.start, '.')} --> ${clock(c.end, '.')}\n${c.lines.map(vttText).join('\n')}\n`).join('\n')}`;
}
