// Who is in a still camera's shot against its median background (analysis/still-background.ts): pure, checked on
// made-up gray pictures (a textured wall, a block standing on it, the whole picture shifted as by a pan).
import { describe, expect, it } from 'vitest';
import { stillPresence } from '../../src/analysis/still-background.js';

const W = 64;
const H = 36;
const FPS = 6;
/** A textured wall, seen `shift` px to the right (a camera that pans shifts it). */
const wall = (shift = 0) => {
  const p = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) p[y * W + x] = 60 + 50 * Math.sin((x + shift) / 1.3) * Math.sin(y / 2.1);
  return p;
};
/** The wall with a bright block (someone) standing at columns lo..lo+5, rows 8-27. */
const withSomeone = (p: Uint8Array, lo: number) => {
  const q = Uint8Array.from(p);
  for (let y = 8; y < 28; y++) for (let x = lo; x < lo + 6; x++) q[y * W + x] = 230;
  return q;
};
const noShots = (n: number) => new Array<boolean>(n).fill(false);
/**
 * A wall of stripes four columns wide (a building's windows), seen `shift` (0-1) px to the right: a shift of a fraction
 * of a pixel changes the picture only in the one column at each stripe's edge.
 */
const stripes = (shift = 0) => {
  const at = (x: number) => (Math.floor((x + 8) / 4) % 2 ? 60 : 200);
  const p = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) p[y * W + x] = (1 - shift) * at(x) + shift * at(x - 1);
  return p;
};

describe('stillPresence', () => {
  it('a still camera: someone standing still for 4 s of 10 is present at their place, the textured wall never', () => {
    // 10 s at 6 a second: the block stands at columns 40-45 from 3 s to 7 s and is gone the rest of the time.
    const pictures = Array.from({ length: 60 }, (_, i) => (i >= 18 && i < 42 ? withSomeone(wall(), 40) : wall()));
    const found = stillPresence(pictures, W, H, noShots(60), FPS);
    const standing = found[30]!;
    expect(standing).toBeDefined();
    const cols = standing.cols.flatMap((v, x) => (v > 0.2 ? [x] : []));
    expect(cols).toEqual([40, 41, 42, 43, 44, 45]);
    // Before they come, nothing is there: the wall's texture is its own background.
    expect(Math.max(...found[5]!.cols)).toBe(0);
  });

  it("a background's edges seen half a pixel off for 2 s are nobody (lines one pixel thin); someone standing is", () => {
    // 10 s at 6 a second: from 2 s to 4 s the striped wall is seen half a pixel off (a camera's tremor, compression),
    // which changes each stripe's edge column by 70 levels; from 6 s to 8 s someone stands at columns 40-45.
    const pictures = Array.from({ length: 60 }, (_, i) =>
      i >= 12 && i < 24 ? stripes(0.5) : i >= 36 && i < 48 ? withSomeone(stripes(), 40) : stripes(),
    );
    const found = stillPresence(pictures, W, H, noShots(60), FPS);
    expect(Math.max(...found[18]!.cols)).toBe(0);
    expect(found[42]!.cols.flatMap((v, x) => (v > 0.2 ? [x] : []))).toEqual([40, 41, 42, 43, 44, 45]);
  });

  it('a panning camera, or a shot too short for people to pass, is left to motion', () => {
    const panning = Array.from({ length: 60 }, (_, i) => withSomeone(wall(i), 20));
    expect(stillPresence(panning, W, H, noShots(60), FPS).every((p) => p === undefined)).toBe(true);
    const short = Array.from({ length: 24 }, (_, i) => (i < 8 ? withSomeone(wall(), 20) : wall()));
    expect(stillPresence(short, W, H, noShots(24), FPS).every((p) => p === undefined)).toBe(true);
  });

  it('each shot has its own background: a shot change starts another', () => {
    // Two still shots of 8 s: the second shows another wall (shifted far), with someone in its first 2 s.
    const pictures = Array.from({ length: 96 }, (_, i) =>
      i < 48 ? wall() : i < 60 ? withSomeone(wall(17), 10) : wall(17),
    );
    const starts = noShots(96);
    starts[48] = true;
    const found = stillPresence(pictures, W, H, starts, FPS);
    expect(Math.max(...found[20]!.cols)).toBe(0);
    expect(found[50]!.cols.flatMap((v, x) => (v > 0.2 ? [x] : []))).toEqual([10, 11, 12, 13, 14, 15]);
  });
});
