// Speech whose true word times are known: flite says a text and prints its segments (phones) with their end times
// (-psdur); each word's phones are flite's own for that word said alone (-ps), so the segments map back onto the
// words in order, pauses between them. A word starts where its first phone starts and ends where its last phone ends.
import { spawnSync } from 'node:child_process';

export interface TrueWord {
  word: string;
  start: number;
  end: number;
}

function run(args: string[]): string {
  const r = spawnSync('flite', args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`flite failed: ${r.stderr || r.error}`);
  return r.stdout;
}

/** The words of a text as flite says them: letters and apostrophes, in order. */
export const spokenWords = (text: string) => text.split(/[^A-Za-z']+/).filter(Boolean);

/** flite's phones for one word said alone, without the pauses around it. */
function phonesOf(word: string, voice: string): string[] {
  return run(['-voice', voice, '-t', word, 'none', '-ps'])
    .trim()
    .split(/\s+/)
    .filter((p) => p && p !== 'pau');
}

/**
 * Says `text` in `voice` into `wav` (16 kHz mono as flite writes it) and returns every word with its true start and
 * end in seconds. Throws when the segments do not map onto the words (flite said a word otherwise in context).
 */
export function sayWithWordTimes(text: string, wav: string, voice = 'slt'): TrueWord[] {
  const segments = run(['-voice', voice, '-t', text, '-o', wav, '-psdur'])
    .trim()
    .split(/\s+/)
    .map((s) => {
      const i = s.lastIndexOf(':');
      return { phone: s.slice(0, i), end: Number(s.slice(i + 1)) };
    });
  const words = spokenWords(text);
  const out: TrueWord[] = [];
  let k = 0;
  let prevEnd = 0;
  for (const word of words) {
    const want = phonesOf(word, voice).length;
    while (k < segments.length && segments[k]!.phone === 'pau') prevEnd = segments[k++]!.end;
    if (k + want > segments.length) throw new Error(`flite's segments ran out at "${word}"`);
    const start = prevEnd;
    const last = segments[k + want - 1]!;
    if (segments.slice(k, k + want).some((s) => s.phone === 'pau'))
      throw new Error(`"${word}" was said otherwise in context`);
    out.push({ word, start, end: last.end });
    prevEnd = last.end;
    k += want;
  }
  if (segments.slice(k).some((s) => s.phone !== 'pau')) throw new Error('flite said more phones than the words hold');
  return out;
}
