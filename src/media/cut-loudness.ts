// Levelling (level_dialogue): how loud each cut's own sound is, measured from its source (sound only, a batch of cuts
// to a process), and the gains that bring the cuts to one loudness (levelGains, decided in edit/plan.ts).
import { askedLevelDb, levelGains, type RenderPlan } from '../edit/plan.js';
import { MeasureParser, integratedLoudness } from './measure.js';
import { whyFailed, runProcess } from './process.js';
import { RenderError } from './render-error.js';
import { cutLoudnessArgs, type InputSpec } from './timeline-args.js';

export interface CutLoudnessRequest {
  ffmpeg: string;
  plan: RenderPlan;
  cutInputs: InputSpec[];
  /** What is already known (a segment's record), per cut; measured where undefined. null: measured, nothing heard. */
  known?: (number | null | undefined)[];
  maxInputs: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Runs a process in its turn (the ffmpeg limiter), when the caller does not hold one already. */
  turn?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** Each cut's integrated loudness (LUFS), null where nothing of it is heard over the gate. */
export async function cutLoudness(req: CutLoudnessRequest): Promise<(number | null)[]> {
  const out = req.plan.cuts.map((_, i) => req.known?.[i]);
  const missing = out.flatMap((v, i) => (v === undefined ? [i] : []));
  const turn = req.turn ?? ((work) => work());
  for (let first = 0; first < missing.length; first += req.maxInputs) {
    const batch = missing.slice(first, first + req.maxInputs);
    const args = cutLoudnessArgs(
      req.plan,
      batch,
      batch.map((i) => req.cutInputs[i]!),
    );
    const parser = new MeasureParser();
    if (args.length) {
      const r = await turn(() =>
        runProcess(req.ffmpeg, args, {
          timeoutMs: req.timeoutMs,
          signal: req.signal,
          onStderr: (c) => parser.push(c),
          maxStderr: 16 * 1024,
        }),
      );
      if (r.cancelled) throw new RenderError('cancelled', true);
      if (r.timedOut || r.code !== 0)
        throw new RenderError(`measuring the cuts' loudness failed (${r.timedOut ? 'timed out' : whyFailed(r)})`);
    }
    // Measured as it plays (its level windows applied), then the level they ask taken off: its own sound's loudness.
    for (const i of batch) {
      const loud = integratedLoudness(parser.result.blocks?.[`cut${i}`]);
      out[i] = loud === undefined ? null : Math.round((loud - askedLevelDb(req.plan.cuts[i]!)) * 100) / 100;
    }
  }
  return out as (number | null)[];
}

/** The plan with each cut's levelling gain (levelDb) from its loudness; a cut at 0 dB carries none. */
export function levelled(plan: RenderPlan, lufs: (number | null)[]): RenderPlan {
  const gains = levelGains(lufs.map((l) => l ?? undefined));
  return { ...plan, cuts: plan.cuts.map((c, i) => (gains[i] ? { ...c, levelDb: gains[i] } : c)) };
}
