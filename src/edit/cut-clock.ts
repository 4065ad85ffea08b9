// Where a cut reads its source, decided without media: the in point moved onto the frame it means. Shared by the
// render graph (media/) and the timeline files (interchange/), so a file names the frame the render starts on.

/** A frame rate or a time base, as a fraction. */
export interface Fraction {
  num: number;
  den: number;
}

/**
 * A frame rate written as a number (29.97, 23.976, 59.94, 30) as the exact fraction it means: NTSC rates are
 * n*1000/1001, which no decimal holds; a rate written with three decimals is off it by a millionth, a frame an hour.
 */
export function exactRate(rate: number): Fraction | undefined {
  if (!Number.isFinite(rate) || rate <= 0) return undefined;
  const whole = Math.round(rate);
  if (Math.abs(rate - whole) < 1e-6) return { num: whole, den: 1 };
  const ntsc = Math.round((rate * 1001) / 1000);
  if (Math.abs(rate - (ntsc * 1000) / 1001) < 0.005) return { num: ntsc * 1000, den: 1001 };
  return { num: Math.round(rate * 1000), den: 1000 };
}

/** What the clock needs of a source: its constant frame rate, its first frame's time and its time base. */
export interface ClockSource {
  frameRate?: Fraction;
  videoStartSec?: number;
  videoTimeBase?: Fraction;
}

/**
 * How far after a frame's start an in point may lie and still mean that frame: an edit's times are written to the
 * millisecond, so a shot that starts on a frame at 0.041708 s (23.976) is cut at 0.042 s.
 */
export const IN_POINT_ROUNDING = 0.0005 + 1e-6;

/**
 * Where a cut reads its source: for a constant-rate source, the frame its in point means: the one starting within
 * half a millisecond before it (the in point was rounded to the millisecond), else the next frame start (less than
 * one source frame later); on the stream's time base, where the muxer rounded the frame times. Picture and sound of
 * the cut start on the instant its first frame shows: both streams are seeked there (ffmpeg drops what comes before
 * it, to the sample) and run on one clock from it. `seekSec` is it to the microsecond (ffmpeg's precision), which
 * maps back onto the frame's own timestamp; a keyframe on the in point is the one seeked to.
 */
export function cutClock(cut: { inSec: number }, spec: ClockSource): { inSec: number; seekSec: number } {
  let inSec = cut.inSec;
  const r = spec.frameRate;
  if (r && r.num > 0 && r.den > 0) {
    const start = spec.videoStartSec ?? 0;
    // Frame k starts at start + k*den/num: the first one starting at or after the in point less its rounding.
    // Before the first frame nothing moves: the sound plays from the in point and the first frame is held.
    const k = Math.ceil(((cut.inSec - IN_POINT_ROUNDING - start) * r.num) / r.den);
    if (k >= 0) {
      let frameAt = start + (k * r.den) / r.num;
      const tb = spec.videoTimeBase;
      // A coarse time base (Matroska's millisecond) rounds the frame times: use the rounded one, as stored.
      if (tb && tb.num > 0 && tb.den > 0 && tb.num / tb.den > 1e-5)
        frameAt = (Math.round((frameAt * tb.den) / tb.num) * tb.num) / tb.den;
      if (frameAt >= cut.inSec - IN_POINT_ROUNDING) inSec = frameAt;
    }
  }
  return { inSec, seekSec: Math.round(inSec * 1e6) / 1e6 };
}
