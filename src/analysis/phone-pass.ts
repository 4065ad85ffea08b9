// Where a query may be said, from an asset's phone pass, pure: the phones a phone recogniser heard over the whole
// asset once (media/phone-pass.ts, stored beside the transcript) are searched by each query for stretches that sound
// like its pronunciations (a weighted edit distance, the query's phones against any stretch of the heard ones), and
// the places found become the short spans the keyword spotter verifies (workflow/search.ts). So a query listens to
// seconds of sound, not the whole asset. Lenient by design: the spotter, not this, decides what is a hit.
import { PHONES } from './dictionary.js';
import { gapCost, phoneCost } from './sound-search.js';

/** A phone heard: its id (dictionary.ts PHONES) and its time on the asset's clock, seconds. */
export interface HeardPhone {
  phone: number;
  start: number;
  end: number;
}

/** A stretch of the asset to listen to for the query, seconds. */
export interface Span {
  from: number;
  to: number;
}

/**
 * The phone recogniser's output (0.8's `-time yes` lines: `PHONE start end score`) as heard phones on the asset's
 * clock: silence and noise fillers (SIL, +NSN+ ...) dropped.
 */
export function parsePhonePass(stdout: string, offsetSec: number): HeardPhone[] {
  const out: HeardPhone[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^([A-Z]+)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+\S+$/.exec(line.trim());
    const phone = m ? PHONES.indexOf(m[1] as (typeof PHONES)[number]) : -1;
    if (m && phone >= 0) out.push({ phone, start: Number(m[2]) + offsetSec, end: Number(m[3]) + offsetSec });
  }
  return out;
}

/**
 * How far a stretch may be from the query, per query phone, and still be listened to. Measured on bench/search.mjs's
 * recordings (bench/README.md, search): every detection the spotter made over the whole asset lies within a stretch
 * at this distance, for a few seconds of sound per query.
 */
export const CANDIDATE_DISTANCE = 0.5;
/**
 * Sound kept either side of a stretch, seconds: the spotter needs the word whole and speech before it to settle (its
 * features are normalised by a running mean that starts afresh in each span). At 0.5 s spans lost 1 of 72 planted
 * occurrences clean and 3 under a music bed 10 dB down, and at 1 s one clean; at 2 s the bench finds what listening
 * to the whole asset found, every hit and every false one (bench/README.md, search).
 */
export const CANDIDATE_PAD = 2;

/**
 * The stretches of `heard` within `perPhone` x (query phones) of any of the query's pronunciations (weighted edit
 * distance, analysis/sound-search.ts's costs), each padded and the overlapping joined, in time order.
 */
export function candidateSpans(
  heard: HeardPhone[],
  pronunciations: Uint8Array[],
  perPhone = CANDIDATE_DISTANCE,
  pad = CANDIDATE_PAD,
): Span[] {
  // The best end for each stretch's first phone: an alignment may run on past the query's end, under the budget,
  // into the next word; its cheapest end is where the query ends.
  const best = new Map<number, { end: number; cost: number }>();
  for (const q of pronunciations) {
    if (!q.length) continue;
    const m = q.length;
    const budget = perPhone * m + 1e-9;
    // One column per heard phone: cost[j] aligns the query's first j phones ending here; from[j] is where it began.
    let cost = new Float64Array(m + 1);
    let from = new Int32Array(m + 1);
    for (let j = 1; j <= m; j++) cost[j] = cost[j - 1]! + gapCost(q[j - 1]!);
    for (let i = 0; i < heard.length; i++) {
      const p = heard[i]!.phone;
      const next = new Float64Array(m + 1);
      const nextFrom = new Int32Array(m + 1);
      next[0] = 0; // the stretch may begin at any heard phone
      nextFrom[0] = i;
      for (let j = 1; j <= m; j++) {
        const qp = q[j - 1]!;
        let value = cost[j - 1]! + phoneCost(qp, p);
        let start = j === 1 ? i : from[j - 1]!;
        if (cost[j]! + gapCost(p) < value) {
          value = cost[j]! + gapCost(p);
          start = from[j]!;
        }
        if (next[j - 1]! + gapCost(qp) < value) {
          value = next[j - 1]! + gapCost(qp);
          start = nextFrom[j - 1]!;
        }
        next[j] = value;
        nextFrom[j] = start;
      }
      cost = next;
      from = nextFrom;
      const start = Math.min(from[m]!, i);
      if (cost[m]! <= budget && cost[m]! < (best.get(start)?.cost ?? Infinity))
        best.set(start, { end: i, cost: cost[m]! });
    }
  }
  const spans = [...best].map(([start, { end }]) => ({
    from: Math.max(0, heard[start]!.start - pad),
    to: heard[end]!.end + pad,
  }));
  return joinSpans(spans);
}

/**
 * The spotter's feature mean where a run of PocketSphinx 0.8 ended, from its log (`cmn_live.c(..): Update to < c0 c1
 * ... >`, the last one): the asset's own cepstral mean, once a pass has heard it whole. Undefined where none is logged.
 */
export function parseFeatureMean(log: string): number[] | undefined {
  let last: number[] | undefined;
  for (const m of log.matchAll(/cmn_live\.c\(\d+\): Update to\s*<([^>]*)>/g)) {
    const values = m[1]!.trim().split(/\s+/).map(Number);
    if (values.length && values.every(Number.isFinite)) last = values;
  }
  return last;
}

/** The mean of pieces' feature means, each weighted by its length (samples). */
export function weightedMean(parts: { mean: number[] | undefined; weight: number }[]): number[] | undefined {
  const known = parts.filter((p): p is { mean: number[]; weight: number } => p.mean !== undefined && p.weight > 0);
  const width = known[0]?.mean.length;
  if (!width || known.some((p) => p.mean.length !== width)) return undefined;
  const total = known.reduce((n, p) => n + p.weight, 0);
  return Array.from({ length: width }, (_, i) => known.reduce((n, p) => n + p.mean[i]! * p.weight, 0) / total);
}

/**
 * The model's feature parameters (its feat.params) with the spotter's starting mean set to `mean`: 0.8 reads the
 * model's file after its command line, so `-cmninit` there is ignored and a changed copy is passed as `-featparams`.
 */
export function featParamsWithMean(params: string, mean: number[]): string {
  const line = `-cmninit ${mean.map((v) => v.toFixed(2)).join(',')}`;
  const kept = params.split('\n').filter((l) => l.trim() && !/^-cmninit\s/.test(l.trim()));
  return `${[...kept, line].join('\n')}\n`;
}

/** Spans that overlap or touch, joined; in time order. */
export function joinSpans(spans: Span[]): Span[] {
  const out: Span[] = [];
  for (const s of [...spans].sort((a, b) => a.from - b.from)) {
    const last = out.at(-1);
    if (last && s.from <= last.to) last.to = Math.max(last.to, s.to);
    else out.push({ ...s });
  }
  return out;
}
