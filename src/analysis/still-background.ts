// Where the camera is still, the people in it (issue 47, item 3): a shot whose picture does not shift from second to
// second has a background, each pixel's median over the shot (people pass; the street stays), and what differs from it
// is someone there, whether they move or stand: a person who stops is still seen, and a textured background, being the
// background, is never taken for one. From the small gray pictures media/reframe.ts decodes; analysis/reframe.ts turns
// the presence per column into subjects beside those seen by motion.
// Pure: no I/O.

/** The share (0-1) of each column's and each row's pixels that differ from the shot's background. */
export interface Presence {
  cols: number[];
  rows: number[];
}

/** A shot shorter than this (s) is too short for people to pass: its median would hold them (a talking head). */
const MIN_SECONDS = 6;
/** At most this many pictures, spread over the shot, make its median. */
const MEDIAN_PICTURES = 61;
/** A pixel this far (0-255) from its background is someone there (compression and noise stay under it). */
const DIFFERS = 20;
/** The camera is still where at least this share of the pictures a second apart line up best unshifted. */
const STILL_SHARE = 0.8;
/** An image shift (px of the small picture) is tried up to this far each way. */
const MAX_SHIFT = 2;
/** A shift lines two pictures up better than none when its mean difference is below this share of none's. */
const SHIFT_WINS = 0.9;
/** Where the typical picture differs from its median in more than this share of pixels, the median is no
 * background (a slow pan, a change of light): the shot is left to motion. */
const MAX_FOREGROUND = 0.35;

/**
 * Per picture, what differs from its shot's background (undefined where the camera moves, or the shot is too short
 * to tell). `pictures` are gray, w x h; a shot starts at index 0 and at each index where `shotStarts` is true;
 * `perSecond` pictures a second.
 */
export function stillPresence(
  pictures: Uint8Array[],
  w: number,
  h: number,
  shotStarts: boolean[],
  perSecond: number,
): (Presence | undefined)[] {
  const out: (Presence | undefined)[] = pictures.map(() => undefined);
  let a = 0;
  for (let i = 1; i <= pictures.length; i++) {
    if (i < pictures.length && !shotStarts[i]) continue;
    const shot = pictures.slice(a, i);
    if (shot.length >= MIN_SECONDS * perSecond && cameraStill(shot, w, h, Math.max(1, Math.round(perSecond)))) {
      const bg = medianPicture(shot, w, h);
      const found = shot.map((p) => presenceOf(p, bg, w, h));
      const shares = found.map((f) => f.cols.reduce((s, v) => s + v, 0) / w).sort((x, y) => x - y);
      if (shares[shares.length >> 1]! <= MAX_FOREGROUND) found.forEach((f, k) => (out[a + k] = f));
    }
    a = i;
  }
  return out;
}

/**
 * Whether a shot's camera holds still: pictures `gap` apart (about a second) line up best without a shift in most
 * pairs. (A person walking moves a small part of the picture; a pan or a shake moves all of it.)
 */
function cameraStill(shot: Uint8Array[], w: number, h: number, gap: number): boolean {
  let pairs = 0;
  let still = 0;
  for (let i = 0; i + gap < shot.length; i += gap) {
    pairs++;
    const unshifted = meanDiff(shot[i]!, shot[i + gap]!, w, h, 0, 0);
    let best = Infinity;
    for (let dy = -MAX_SHIFT; dy <= MAX_SHIFT; dy++)
      for (let dx = -MAX_SHIFT; dx <= MAX_SHIFT; dx++)
        if (dx || dy) best = Math.min(best, meanDiff(shot[i]!, shot[i + gap]!, w, h, dx, dy));
    if (!(best < SHIFT_WINS * unshifted)) still++;
  }
  return pairs > 0 && still >= STILL_SHARE * pairs;
}

/** Mean absolute difference of a and b shifted by (dx, dy), over every other pixel away from the edges. */
function meanDiff(a: Uint8Array, b: Uint8Array, w: number, h: number, dx: number, dy: number): number {
  let sum = 0;
  let n = 0;
  for (let y = MAX_SHIFT; y < h - MAX_SHIFT; y += 2)
    for (let x = MAX_SHIFT; x < w - MAX_SHIFT; x += 2) {
      sum += Math.abs(a[y * w + x]! - b[(y + dy) * w + x + dx]!);
      n++;
    }
  return n ? sum / n : 0;
}

/** Each pixel's median over at most MEDIAN_PICTURES pictures spread through the shot. */
function medianPicture(shot: Uint8Array[], w: number, h: number): Uint8Array {
  const step = Math.max(1, Math.floor(shot.length / MEDIAN_PICTURES));
  const picks = shot.filter((_, i) => i % step === 0);
  const bg = new Uint8Array(w * h);
  const v = new Uint8Array(picks.length);
  for (let p = 0; p < w * h; p++) {
    for (let k = 0; k < picks.length; k++) v[k] = picks[k]![p]!;
    v.sort();
    bg[p] = v[v.length >> 1]!;
  }
  return bg;
}

/**
 * The share of each column's and row's pixels that differ from the background, counting a pixel only where a
 * neighbour beside it and one above or below it differ too: someone is a patch. A lone pixel is noise, and a line one
 * pixel thin is a background edge seen a fraction of a pixel off (vtest.avi's window frames, for 2.5 s, were taken
 * for someone at the picture's edge when a neighbour either way counted: bench/README.md).
 */
function presenceOf(p: Uint8Array, bg: Uint8Array, w: number, h: number): Presence {
  const cols = new Array<number>(w).fill(0);
  const rows = new Array<number>(h).fill(0);
  const differs = (i: number) => Math.abs(p[i]! - bg[i]!) > DIFFERS;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!differs(i)) continue;
      const beside = (x + 1 < w && differs(i + 1)) || (x > 0 && differs(i - 1));
      const aboveOrBelow = (y + 1 < h && differs(i + w)) || (y > 0 && differs(i - w));
      if (!beside || !aboveOrBelow) continue;
      cols[x]!++;
      rows[y]!++;
    }
  return {
    cols: cols.map((c) => Math.round((c / h) * 1e4) / 1e4),
    rows: rows.map((r) => Math.round((r / w) * 1e4) / 1e4),
  };
}
