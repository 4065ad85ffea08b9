// The framing of a cut in an output of another shape than its source (model.ts FocusSchema): the window the output's
// shape covers in the source picture (zoom 1: the frame covered), and the frame's centre over time as keys. Shared
// by the plan, the service's form and analysis/reframe.ts. Pure: no I/O.

/** Where the frame's centre is at `t` (s from the cut's start): x, y in 0-1 of the source picture. */
export interface FocusKey {
  t: number;
  x: number;
  y: number;
}

/** The size of the frame within the source picture, in 0-1 of its width and height (1: the whole side). */
export interface FrameWindow {
  w: number;
  h: number;
}

/** The window a frame of the output's shape covers in a source of another shape (zoom 1: the frame is covered). */
export function frameWindow(
  source: { width: number; height: number },
  output: { width: number; height: number },
): FrameWindow {
  const s = source.width / source.height;
  const o = output.width / output.height;
  return { w: Math.min(1, o / s), h: Math.min(1, s / o) };
}

/** A centre kept where the window of `size` stays inside 0-1. */
export const clampCentre = (v: number, size: number): number => Math.min(1 - size / 2, Math.max(size / 2, v));

/** The frame's centre at `t` along a path (held before its first key and after its last). */
export function focusAt(keys: FocusKey[], t: number): { x: number; y: number } {
  if (t <= keys[0]!.t) return keys[0]!;
  for (let i = 1; i < keys.length; i++) {
    const a = keys[i - 1]!;
    const b = keys[i]!;
    if (t <= b.t) {
      const f = (t - a.t) / (b.t - a.t || 1);
      return { x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f };
    }
  }
  return keys.at(-1)!;
}
