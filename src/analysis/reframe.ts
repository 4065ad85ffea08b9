// The vertical cut (issue 33, item 6): where a frame of another shape than its source sits in the source picture
// over a cut's time. From measurements of the picture's interest (motion and detail, per column and row, sampled a
// few times a second; media/reframe-scan.ts) to a camera operator's path: per shot, held still when the interest
// barely moves, following it with a dead zone, smoothed and at a limited speed, never leaving the picture; then as
// few piecewise-linear keys as keep it within a few pixels. Subjects (issue 47, item 3): what moves is split into
// subjects across the picture; all of them are framed when they fit together (those seen within a few seconds, else
// those in the picture: a crowd), else the one that moves most in the shot is followed (the one whose motion follows
// the cut's sound: the one speaking, where one does); a subject that stops stays framed (detail is followed only in
// shots where nothing moves). Where the camera is still, what differs from the shot's background is a subject too
// (analysis/still-background.ts): someone standing, or too far off to move much, is framed with the rest.
// Pure: no I/O.
import { clampCentre, type FocusKey, type FrameWindow } from '../edit/framing.js';
import type { Presence } from './still-background.js';

/** Motion and detail of one sampled picture, per column (left to right) and row (top to bottom), mean levels 0-255. */
export interface EnergyProfile {
  motionCols: number[];
  motionRows: number[];
  detailCols: number[];
  detailRows: number[];
}

/**
 * The picture's interest at `t`: its centre (0-1) and how strong it is (0: nothing to follow); a shot change starts a
 * new shot.
 */
export interface Interest {
  t: number;
  x: number;
  y: number;
  weight: number;
  shotChange?: boolean;
  /** What moves, split into subjects across the picture: [left, right, strength] (0-1 of the width; mean excess). */
  subjects?: [number, number, number][];
  /** The cut's sound around `t` (RMS, 0-1 of full scale), where it has sound. */
  sound?: number;
}

/** Motion below this (mean excess of the busiest columns over the typical one, 0-255) is noise, not action. */
const MIN_MOTION = 0.4;
/** Detail is followed where nothing moves, with this much less say than motion. */
const DETAIL_WEIGHT = 0.05;
const MIN_DETAIL = 1;

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The centre of what stands out of a profile (each value's excess over the median, squared: the peak counts, a busy
 * background does not) and the mean excess; undefined when nothing stands out.
 */
function standsOut(v: number[]): { at: number; excess: number } | undefined {
  if (!v.length) return undefined;
  const floor = median(v);
  let sum = 0;
  let moment = 0;
  let excess = 0;
  v.forEach((x, i) => {
    const e = Math.max(0, x - floor);
    excess += e;
    sum += e * e;
    moment += e * e * ((i + 0.5) / v.length);
  });
  return sum > 0 ? { at: moment / sum, excess: excess / v.length } : undefined;
}

/**
 * Where a sampled picture's interest is: what moves, else (much weaker) what is detailed; weight 0 when neither stands
 * out.
 */
export function interestOf(p: EnergyProfile): { x: number; y: number; weight: number; moving?: true } {
  const mx = standsOut(p.motionCols);
  const my = standsOut(p.motionRows);
  if (mx && my && mx.excess >= MIN_MOTION) return { x: mx.at, y: my.at, weight: mx.excess, moving: true };
  const dx = standsOut(p.detailCols);
  const dy = standsOut(p.detailRows);
  if (dx && dy && dx.excess >= MIN_DETAIL) return { x: dx.at, y: dy.at, weight: dx.excess * DETAIL_WEIGHT };
  return { x: 0.5, y: 0.5, weight: 0 };
}

/** Columns of motion closer than this (a fraction of the width) are one subject (a walker's leading and trailing
 * edges, a swaying body's two sides). */
const SUBJECT_GAP = 0.08;
/** A column moves with a subject when its excess is at least this share of the picture's strongest. */
const SUBJECT_LEVEL = 0.2;
/** A subject weaker than this share of the strongest in its picture is not one (noise beside it). */
const SUBJECT_SHARE = 0.15;
/** Subjects seen this long before or after a picture (s) are framed with it when all fit. */
const SUBJECT_MEMORY_SEC = 3;
/**
 * Subjects fit together when they span at most this share of the window: all of it, since a span measured by motion
 * is wider than the people in it (a walker's trail); GROUP_ROOM adds room where there is some. At 0.9, groups that
 * fit were split (vtest.avi: all kept in 70 of 142 frames whose people fit, 108 at 1; bench/README.md).
 */
const FIT = 1;
/**
 * And a span up to this much over the window (0-1 of the picture) fits, framed by its middle: subjects are measured to
 * a scan column (1/128 of the width: media/reframe.ts), each edge a column out either way (a walker's trail, a far
 * edge too faint to count), and rounded to 4 places, so a group exactly the window's width was measured 0.0001 over
 * and one within a pixel or two of it a column over. Groups measured a column over were split (vtest.avi: all kept in
 * 127 of 149 frames whose people fit, 135 with a column's slack; two columns cut people at both edges: bench/README.md).
 */
const FIT_SLACK = 0.01;
/** Where none fit with it, the one followed gives way to one in the picture moving this many times more (and at
 * least MIN_MOTION): the one moving most is kept, reached by the path's limited speed (a smooth move). */
const OUTMOVES = 4;
/** The subject followed is first found among those moving at least this much (mean excess, 0-255). */
const FOLLOWED_MOTION = 0.01;
/** A group framed together keeps at least this share of the window free at either edge where it can. */
const GROUP_ROOM = 0.02;

/**
 * What moves in a picture, split into subjects across it: runs of columns whose motion stands out, joined across small
 * gaps, each as [left, right, strength] (0-1 of the width; its mean excess over the picture's typical column).
 */
export function subjectsOf(motionCols: number[]): [number, number, number][] {
  const n = motionCols.length;
  if (!n) return [];
  const floor = median(motionCols);
  const excess = motionCols.map((v) => Math.max(0, v - floor));
  const peak = Math.max(...excess);
  if (peak <= 0) return [];
  const gap = Math.max(1, Math.round(SUBJECT_GAP * n));
  const runs: { lo: number; hi: number; sum: number }[] = [];
  excess.forEach((e, i) => {
    if (e < SUBJECT_LEVEL * peak) return;
    const last = runs.at(-1);
    if (last && i - last.hi <= gap) {
      last.hi = i;
      last.sum += e;
    } else runs.push({ lo: i, hi: i, sum: e });
  });
  const strongest = Math.max(...runs.map((r) => r.sum));
  return runs
    .filter((r) => r.sum >= SUBJECT_SHARE * strongest)
    .map((r) => [round4(r.lo / n), round4((r.hi + 1) / n), round4(r.sum / n)]);
}

/**
 * The x each sample of a shot frames, from its subjects: all of them where they fit in the window together (their
 * span's middle), else the one followed, which is the subject that moves most over the shot, tracked from sample to
 * sample as the nearest to where it was. Samples without subjects keep their own x (the caller holds them).
 */
function subjectsX(shot: Interest[], size: number): { xs: number[]; zones: (number | undefined)[] } {
  const mid = (s: [number, number, number]) => (s[0] + s[1]) / 2;
  // Where the most motion is over the shot, in bins of half the window: the subject followed starts there.
  const bins = new Map<number, number>();
  for (const s of shot)
    for (const sub of s.subjects ?? []) {
      const b = Math.floor(mid(sub) / (size / 2));
      bins.set(b, (bins.get(b) ?? 0) + sub[2]);
    }
  let best = -1;
  let most = -1;
  for (const [b, w] of bins)
    if (w > most) {
      most = w;
      best = b;
    }
  const speaker = speakerBin(shot, size, [...bins.keys()]);
  if (speaker !== undefined) best = speaker;
  let tracked = (best + 0.5) * (size / 2);
  // Subjects seen within a few seconds either way count where they were: one that pauses, or sways slowly at a turn,
  // is still there.
  // (Samples are in time order: the window's first sample only moves forward.)
  let from = 0;
  let last = tracked;
  let found = false;
  const zones: (number | undefined)[] = [];
  // A group is framed by its middle, and the frame moves only as far as it must to keep them all (with a little room):
  // its dead zone is no larger than the room the group leaves.
  const frame = (span: { lo: number; hi: number }, i: number) => {
    zones[i] = Math.max(0, (size * (1 - 2 * GROUP_ROOM) - (span.hi - span.lo)) / 2);
    return (last = (span.lo + span.hi) / 2);
  };
  const xs = shot.map((s, i) => {
    const subs = s.subjects ?? [];
    if (!subs.length) return s.x;
    while (shot[from]!.t < s.t - SUBJECT_MEMORY_SEC) from++;
    const together = spanOf(shot, from, s.t + SUBJECT_MEMORY_SEC);
    if (together.hi - together.lo <= size * FIT + FIT_SLACK) return frame(together, i);
    // In a crowd someone comes or goes every few seconds, so those seen over the memory rarely fit: two or more in
    // this picture are framed together where they fit (the path's smoothing keeps the frame from hunting), with the
    // one speaking among them where one is.
    // The one followed is first found moving: what is only present (someone standing, or where someone will stand:
    // the background shows through where the shot's median has them) is not taken for it while anything moves.
    const moving = found ? [] : subs.filter((u) => u[2] >= FOLLOWED_MOTION);
    found = true;
    const nearest = (moving.length ? moving : subs).reduce((a, b) =>
      Math.abs(mid(b) - tracked) < Math.abs(mid(a) - tracked) ? b : a,
    );
    // The one speaking is followed where it moves (within half a window of where it was): between its phrases,
    // another one moving elsewhere does not take the frame.
    if (speaker === undefined || Math.abs(mid(nearest) - tracked) <= size / 2) tracked = mid(nearest);
    // One moving far more than the one followed takes over (someone who stood at the fence and swayed does not keep the
    // frame from a group walking past).
    const strongest = subs.reduce((a, b) => (b[2] > a[2] ? b : a));
    const takesOver = speaker === undefined && strongest[2] >= Math.max(MIN_MOTION, OUTMOVES * nearest[2]);
    if (takesOver) tracked = mid(strongest);
    // Where they do not all fit, the most of them that do, with the one followed or moving more than it (of groups as
    // large, the one nearest where the frame was): a few still fragments elsewhere (a blurred foreground) never take
    // the frame from it, nor does anyone take it from the one speaking.
    let outweigh = takesOver ? strongest[2] : nearest[2];
    if (speaker !== undefined) outweigh = Infinity;
    const group = largestGroup(subs, size * FIT + FIT_SLACK, tracked, outweigh, last);
    if (group) return frame(group, i);
    return (last = tracked);
  });
  return { xs, zones };
}

/**
 * The largest group of two or more subjects of one picture that fits in `width` (0-1 of the picture), as its span:
 * one holding the point `followed` (where the one followed is), or moving more than it (`outweigh`: the sum of the
 * group's strengths); of groups as large, the one whose middle is nearest `near`. Undefined where none does.
 */
function largestGroup(
  subs: [number, number, number][],
  width: number,
  followed: number,
  outweigh: number,
  near: number,
): { lo: number; hi: number } | undefined {
  let best: { lo: number; hi: number; n: number } | undefined;
  for (const first of subs) {
    const inside = subs.filter((u) => u[0] >= first[0] && u[1] <= first[0] + width);
    if (inside.length < 2) continue;
    const lo = first[0];
    const hi = Math.max(...inside.map((u) => u[1]));
    const strength = inside.reduce((sum, u) => sum + u[2], 0);
    if ((followed < lo || followed > hi) && !(strength > outweigh)) continue;
    const nearer = best && Math.abs((lo + hi) / 2 - near) < Math.abs((best.lo + best.hi) / 2 - near);
    if (!best || inside.length > best.n || (inside.length === best.n && nearer)) best = { lo, hi, n: inside.length };
  }
  return best;
}

/** The span of the subjects seen in a shot's samples from index `from` up to time `until` (0-1 of the width). */
function spanOf(shot: Interest[], from: number, until: number): { lo: number; hi: number } {
  let lo = 1;
  let hi = 0;
  for (let j = from; j < shot.length && shot[j]!.t <= until; j++)
    for (const u of shot[j]!.subjects ?? []) {
      lo = Math.min(lo, u[0]);
      hi = Math.max(hi, u[1]);
    }
  return { lo, hi };
}

/**
 * A subject whose motion follows the sound this closely (Pearson's r over the shot, both smoothed over a second: a
 * phrase's gestures, not each syllable), and more closely than any other by SPEAKING_LEAD, is the one speaking.
 */
const SPEAKING = 0.6;
const SPEAKING_LEAD = 0.2;
const SPEAKING_SMOOTH_SEC = 0.5;

/**
 * The one speaking, where subjects do not fit together (issue 47, item 3): of the subjects' places (bins of half the
 * window), the one whose motion rises and falls with the cut's sound (a mouth, a head, hands move while a person
 * talks), if any follows it closely; undefined where the cut has no sound that varies.
 */
function speakerBin(shot: Interest[], size: number, bins: number[]): number | undefined {
  if (!shot.some((s) => s.sound !== undefined) || bins.length < 2) return undefined;
  const smooth = (v: number[]) =>
    v.map((_, i) => {
      let sum = 0;
      let n = 0;
      for (let j = 0; j < v.length; j++)
        if (Math.abs(shot[j]!.t - shot[i]!.t) <= SPEAKING_SMOOTH_SEC) {
          sum += v[j]!;
          n++;
        }
      return sum / n;
    });
  const sound = smooth(shot.map((s) => s.sound ?? 0));
  const rs = bins
    .map((b) => {
      const motion = shot.map((s) =>
        (s.subjects ?? [])
          .filter((u) => Math.floor((u[0] + u[1]) / 2 / (size / 2)) === b)
          .reduce((sum, u) => sum + u[2], 0),
      );
      return { b, r: pearson(smooth(motion), sound) };
    })
    .sort((x, y) => y.r - x.r);
  const [first, second] = rs;
  return first && first.r >= SPEAKING && first.r - (second?.r ?? 0) >= SPEAKING_LEAD ? first.b : undefined;
}

function pearson(a: number[], b: number[]): number {
  const n = a.length;
  if (n < 3) return 0;
  const ma = a.reduce((s, v) => s + v, 0) / n;
  const mb = b.reduce((s, v) => s + v, 0) / n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb);
    saa += (a[i]! - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : 0;
}

/** How the path is shaped: the camera operator's habits. */
export const REFRAME = {
  /** The interest may wander this far (a fraction of the frame) from the frame's centre before the frame follows. */
  deadZone: 0.05,
  /** A shot whose interest stays within this (a fraction of the frame) is held still. */
  still: 0.25,
  /** Gaussian smoothing of the followed path, s (both ways in time: the frame anticipates as much as it lags). */
  sigmaSec: 0.35,
  /** The fastest pan, in frame widths (or heights) per second. */
  maxSpeed: 1.5,
  /** Samples weaker than this hold the path where their neighbours put it. */
  minWeight: 0.2,
  /** Keys are dropped while the path stays within this (0-1 of the picture) of its samples. */
  tolerance: 0.002,
  /**
   * At most this many keys per cut, or keysPerSec for each second of a longer one, up to maxKeysLong (the tolerance is
   * raised until they fit). Per cut alone, a busy 80 s cut's keys strayed 0.8% of the picture from its path: a scan
   * column, enough to cut someone at the edge of a group that fills the frame (vtest.avi: bench/README.md).
   */
  maxKeys: 120,
  keysPerSec: 2,
  maxKeysLong: 480,
  /**
   * The tolerance is raised by this factor at a time until the keys fit: doubled, it overshot what the budget needed
   * (vtest.avi's 79.5 s cut, 176 keys at 0.8% for 159, kept 137 at 1.6%: 6 px of 384 off the path, where a group
   * fills the frame to the pixel).
   */
  toleranceStep: 1.25,
};

/** How many keys a cut of `durationSec` may keep (REFRAME.maxKeys, keysPerSec, maxKeysLong). */
export const keysFor = (durationSec: number): number =>
  Math.min(REFRAME.maxKeysLong, Math.max(REFRAME.maxKeys, Math.ceil(REFRAME.keysPerSec * durationSec)));

/**
 * One axis of one shot: filled where weak, kept inside, followed with a dead zone (REFRAME.deadZone, or less where
 * `zones` says: a group that leaves less room), smoothed, speed-limited.
 */
function followAxis(
  ts: number[],
  vals: number[],
  weights: number[],
  size: number,
  zones: (number | undefined)[] = [],
): number[] {
  const n = ts.length;
  if (size >= 1) return ts.map(() => 0.5);
  const strong = weights.map((w) => w >= REFRAME.minWeight);
  const known = strong.flatMap((s, i) => (s ? [i] : []));
  if (!known.length) return ts.map(() => 0.5);
  // Weak samples take the line between their strong neighbours (the nearest one's value at the ends).
  const filled = vals.map((v, i) => {
    if (strong[i]) return v;
    const before = known.filter((k) => k < i).at(-1);
    const after = known.find((k) => k > i);
    if (before === undefined) return vals[after!]!;
    if (after === undefined) return vals[before]!;
    const f = (ts[i]! - ts[before]!) / (ts[after]! - ts[before]! || 1);
    return vals[before]! + (vals[after]! - vals[before]!) * f;
  });
  const target = filled.map((v) => clampCentre(v, size));
  // A dead zone: the frame moves only when the interest leaves it, and then just enough to keep it at its edge.
  const dz = REFRAME.deadZone * size;
  const followed: number[] = [];
  let p = target[0]!;
  target.forEach((v, i) => {
    // The centres that keep the interest within the zone, inside the picture (at its edge, the edge itself).
    const zone = Math.min(dz, zones[i] ?? dz);
    const lo = clampCentre(filled[i]! - zone, size);
    const hi = clampCentre(filled[i]! + zone, size);
    if (p < lo) p = lo;
    else if (p > hi) p = hi;
    followed.push(p);
  });
  // A shot whose interest stays within the dead zone is held still where it is on average.
  const lo = Math.min(...target);
  const hi = Math.max(...target);
  if (hi - lo <= REFRAME.still * size) {
    const mean = target.reduce((a, b) => a + b, 0) / n;
    return ts.map(() => clampCentre(mean, size));
  }
  // Smoothed (a Gaussian over time), then no faster than maxSpeed either way. Beyond the shot's ends the path is
  // mirrored through its end point (2 * end - the value as far inside), so that a pan under way at an end is smoothed
  // as a pan, not pulled back towards where it came from.
  const s2 = 2 * REFRAME.sigmaSec ** 2;
  const first = { t: ts[0]!, v: followed[0]! };
  const last = { t: ts[n - 1]!, v: followed[n - 1]! };
  const smooth = ts.map((t) => {
    let sum = 0;
    let wsum = 0;
    ts.forEach((u, j) => {
      const w = Math.exp(-((u - t) ** 2) / s2);
      sum += w * followed[j]!;
      wsum += w;
      // The mirror images of sample j beyond either end, where they are near enough to count.
      const before = 2 * first.t - u;
      const after = 2 * last.t - u;
      if (j > 0 && (t - before) ** 2 < 9 * s2) {
        const wb = Math.exp(-((before - t) ** 2) / s2);
        sum += wb * (2 * first.v - followed[j]!);
        wsum += wb;
      }
      if (j < n - 1 && (after - t) ** 2 < 9 * s2) {
        const wa = Math.exp(-((after - t) ** 2) / s2);
        sum += wa * (2 * last.v - followed[j]!);
        wsum += wa;
      }
    });
    return sum / wsum;
  });
  // Where a group is framed, smoothing does not take the frame off it: the path is held within the group's room (the
  // speed limit below still has the last word, and its pass backwards in time eases the frame over before a group
  // forms, so that it is there from the group's first picture, not a few after).
  const held = (j: number) => zones[j] !== undefined;
  const anchored = new Array<boolean>(n).fill(false);
  zones.forEach((zone, i) => {
    // (Only where the group is framed in three pictures running: one seen in a picture or two alone would have the
    // frame jerk to it and back.)
    const run = (held(i - 1) && held(i + 1)) || (held(i + 1) && held(i + 2)) || (held(i - 1) && held(i - 2));
    if (zone === undefined || !strong[i] || !run) return;
    anchored[i] = true;
    smooth[i] = Math.min(
      clampCentre(filled[i]! + zone, size),
      Math.max(clampCentre(filled[i]! - zone, size), smooth[i]!),
    );
  });
  // The speed limit: forwards in time the frame lags a jump (it leaves a group only once the group is gone), except
  // into a group held, which the pass backwards then reaches in advance (the frame anticipates a group forming).
  const vmax = REFRAME.maxSpeed * size;
  for (let i = 1; i < n; i++) {
    if (anchored[i]) continue;
    const step = vmax * (ts[i]! - ts[i - 1]!);
    smooth[i] = Math.min(smooth[i - 1]! + step, Math.max(smooth[i - 1]! - step, smooth[i]!));
  }
  for (let i = n - 2; i >= 0; i--) {
    const step = vmax * (ts[i + 1]! - ts[i]!);
    smooth[i] = Math.min(smooth[i + 1]! + step, Math.max(smooth[i + 1]! - step, smooth[i]!));
  }
  return smooth.map((v) => clampCentre(v, size));
}

/**
 * The keys of a path, fewest first: a key is kept where dropping it would move the path more than `tol`
 * (Douglas-Peucker).
 */
function simplify(keys: FocusKey[], tol: number): FocusKey[] {
  if (keys.length <= 2) return keys;
  const keep = new Array<boolean>(keys.length).fill(false);
  keep[0] = keep[keys.length - 1] = true;
  const stack: [number, number][] = [[0, keys.length - 1]];
  while (stack.length) {
    const [a, b] = stack.pop()!;
    let worst = -1;
    let far = tol;
    for (let i = a + 1; i < b; i++) {
      const f = (keys[i]!.t - keys[a]!.t) / (keys[b]!.t - keys[a]!.t || 1);
      const d = Math.max(
        Math.abs(keys[a]!.x + (keys[b]!.x - keys[a]!.x) * f - keys[i]!.x),
        Math.abs(keys[a]!.y + (keys[b]!.y - keys[a]!.y) * f - keys[i]!.y),
      );
      if (d > far) {
        far = d;
        worst = i;
      }
    }
    if (worst < 0) continue;
    keep[worst] = true;
    stack.push([a, worst], [worst, b]);
  }
  return keys.filter((_, i) => keep[i]);
}

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;
/** A shot's first key sits this long after the last key of the shot before: the frame cuts with the picture. */
const JUMP = 0.001;

/**
 * The frame's path over a cut of `durationSec` from its sampled interest (times from the cut's start, in order):
 * per shot (a sample marked shotChange starts one), a camera operator's path inside the picture, as piecewise-linear
 * keys from t = 0 to the cut's end. Without samples, or with nothing to follow, the frame holds the picture's centre.
 */
export function reframePath(samples: Interest[], win: FrameWindow, durationSec: number): FocusKey[] {
  const centre = { x: clampCentre(0.5, win.w), y: clampCentre(0.5, win.h) };
  if (!samples.length) return [{ t: 0, ...centre }];
  const shots: Interest[][] = [];
  for (const s of samples) {
    if (s.shotChange || !shots.length) shots.push([]);
    shots.at(-1)!.push(s);
  }
  const keys: FocusKey[] = [];
  shots.forEach((shot, k) => {
    const ts = shot.map((s) => s.t);
    // In a shot where something moves, a picture where nothing does holds the frame on the subject where it was (it
    // stopped; the background's detail never takes over).
    const moves = shot.some((s) => s.subjects?.length);
    const weights = shot.map((s) => (s.shotChange || (moves && !s.subjects?.length) ? 0 : s.weight));
    const subjects = moves ? subjectsX(shot, win.w) : { xs: shot.map((s) => s.x), zones: [] };
    const xs = followAxis(ts, subjects.xs, weights, win.w, subjects.zones);
    const ys = followAxis(
      ts,
      shot.map((s) => s.y),
      weights,
      win.h,
    );
    const path = ts.map((t, i) => ({ t, x: xs[i]!, y: ys[i]! }));
    // The shot's path held from its start (the cut's start, or the shot change) to the next shot's start.
    const from = k === 0 ? 0 : shot[0]!.t;
    const to = k + 1 < shots.length ? shots[k + 1]![0]!.t - JUMP : durationSec;
    if (path[0]!.t > from) path.unshift({ ...path[0]!, t: from });
    if (path.at(-1)!.t < to) path.push({ ...path.at(-1)!, t: to });
    keys.push(...path.filter((p) => p.t >= from && p.t <= to));
  });
  let tol = REFRAME.tolerance;
  let out = simplify(keys, tol);
  const budget = keysFor(durationSec);
  while (out.length > budget) out = simplify(keys, (tol *= REFRAME.toleranceStep));
  // A path that never moves is one key.
  const still = out.every((p) => Math.abs(p.x - out[0]!.x) <= tol && Math.abs(p.y - out[0]!.y) <= tol);
  const final = still ? [{ ...out[0]!, t: 0 }] : out;
  return final.map((p) => ({ t: round4(p.t), x: round4(p.x), y: round4(p.y) }));
}

/** A sampled picture as media/reframe.ts measures it: its time, its profile and its mean change from the one before. */
export interface PictureSample {
  t: number;
  profile: EnergyProfile;
  /** Mean absolute difference from the previous sample, 0-255 (0 for the first). */
  change: number;
  /** What differs from the shot's background, where the camera is still (analysis/still-background.ts). */
  presence?: Presence;
}

/** A picture this different from the one before (mean level), and far more than is usual in the cut, is a new shot. */
const SHOT_CHANGE = 25;

/** Which sampled pictures start a new shot (a sudden change of the whole picture). */
export function shotChanges(samples: Pick<PictureSample, 'change'>[]): boolean[] {
  const usual = samples.length > 1 ? median(samples.slice(1).map((s) => s.change)) : 0;
  return samples.map((s, i) => i > 0 && s.change >= SHOT_CHANGE && s.change > 4 * usual);
}

/** A column where this share of the pixels differ from the background holds someone. */
const PRESENT = 0.04;
/** Columns of presence this close (a fraction of the width) are one subject. */
const PRESENCE_GAP = 0.02;
/** A run of presence with fewer differing pixels than this is noise (a far person at 128 px wide has about 20). */
const PRESENCE_PIXELS = 12;
/** A picture with someone standing in it is followed with at least this weight (REFRAME.minWeight: not filled). */
const PRESENCE_WEIGHT = 0.5;

/**
 * The subjects of a picture whose camera is still: runs of columns holding someone (what differs from the
 * background), joined with those seen by motion where they overlap. A subject's strength is its motion (the mean
 * excess of its columns over the picture's typical one): one who stands counts as present, not as moving.
 */
function withPresence(
  moving: [number, number, number][],
  p: Presence,
  motionCols: number[],
): [number, number, number][] {
  const n = p.cols.length;
  const h = p.rows.length;
  const gap = Math.max(1, Math.round(PRESENCE_GAP * n));
  const runs: { lo: number; hi: number; pixels: number }[] = [];
  p.cols.forEach((share, i) => {
    if (share < PRESENT) return;
    const last = runs.at(-1);
    if (last && i - last.hi <= gap) {
      last.hi = i;
      last.pixels += share * h;
    } else runs.push({ lo: i, hi: i, pixels: share * h });
  });
  const floor = median(motionCols);
  const present: [number, number, number][] = runs
    .filter((r) => r.pixels >= PRESENCE_PIXELS)
    .map((r) => {
      let excess = 0;
      for (let i = r.lo; i <= r.hi; i++) excess += Math.max(0, (motionCols[i] ?? 0) - floor);
      return [r.lo / n, (r.hi + 1) / n, excess / n];
    });
  // One subject where what moves and what is present overlap: the union of their extents, the larger strength.
  const all = [...moving, ...present].sort((a, b) => a[0] - b[0]);
  const merged: [number, number, number][] = [];
  for (const s of all) {
    const last = merged.at(-1);
    if (last && s[0] <= last[1]) {
      last[1] = Math.max(last[1], s[1]);
      last[2] = Math.max(last[2], s[2]);
    } else merged.push([s[0], s[1], s[2]]);
  }
  return merged.map(([l, r, v]) => [round4(l), round4(r), round4(v)]);
}

/** The centre of mass of a profile of shares (0-1), or 0.5 where it is empty. */
function centreOf(v: number[]): number {
  let sum = 0;
  let moment = 0;
  v.forEach((x, i) => {
    sum += x;
    moment += x * ((i + 0.5) / v.length);
  });
  return sum > 0 ? moment / sum : 0.5;
}

/** The interest of each sampled picture, shot changes marked (a sudden change of the whole picture). */
export function interests(samples: PictureSample[], sound?: number[]): Interest[] {
  const changes = shotChanges(samples);
  return samples.map((s, i) => {
    const shotChange = changes[i]!;
    const it = interestOf(s.profile);
    const moving = !shotChange && it.moving ? subjectsOf(s.profile.motionCols) : [];
    const subjects = !shotChange && s.presence ? withPresence(moving, s.presence, s.profile.motionCols) : moving;
    // Someone standing where nothing moves: the frame is on them, not on the picture's detail.
    const standing = subjects.length > 0 && !it.moving;
    const x = standing ? (Math.min(...subjects.map((u) => u[0])) + Math.max(...subjects.map((u) => u[1]))) / 2 : it.x;
    const y = standing ? centreOf(s.presence!.rows) : it.y;
    const weight = subjects.length && s.presence ? Math.max(it.weight, PRESENCE_WEIGHT) : it.weight;
    return {
      t: s.t,
      x: round4(x),
      y: round4(y),
      weight: shotChange ? 0 : round4(weight),
      ...(shotChange ? { shotChange } : {}),
      ...(subjects.length ? { subjects } : {}),
      ...(sound?.[i] !== undefined ? { sound: round4(sound[i]!) } : {}),
    };
  });
}
