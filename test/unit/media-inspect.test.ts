// The pure parts of the shot scan: the packet list, the keyframe measure, candidates and the runs to decode.
import { describe, expect, it } from 'vitest';
import {
  candidateGops,
  lastJump,
  mafd,
  parsePackets,
  planRuns,
  sizeOutliers,
  stopEarly,
} from '../../src/media/inspect.js';
import type { FramePacket } from '../../src/media/inspect-frames.js';

describe('the packet list', () => {
  it('reads ffprobe csv relative to the start, sorted by time, keeping decode order, skipping N/A and discarded packets', () => {
    const csv = [
      '1.080000,1.000000,500,__',
      '1.000000,N/A,9000,K_',
      '1.040000,1.040000,400,__',
      'N/A,N/A,10,__',
      '1.120000,1.120000,30,_D',
      '',
    ].join('\n');
    expect(parsePackets(csv, 1)).toEqual([
      { t: 0, size: 9000, key: true, dts: 1 },
      { t: expect.closeTo(0.04, 6), size: 400, key: false, dts: 2 },
      { t: expect.closeTo(0.08, 6), size: 500, key: false, dts: 0 },
    ]);
  });

  it("takes a packet's decode time where the container gives no presentation time (AVI), and says so", () => {
    // Megamind.avi: most packets have only a decode time; skipped, the list held one frame in several.
    const csv = ['N/A,0.000000,900,K_', 'N/A,0.041708,100,__', '0.083417,0.083417,120,__', 'N/A,0.125125,110,__'].join(
      '\n',
    );
    const frames = parsePackets(csv, 0);
    expect(frames.map((f) => f.t)).toEqual([0, 0.041708, 0.083417, 0.125125]);
    expect(frames.map((f) => !!f.fromDts)).toEqual([true, true, false, true]);
  });
});

describe("scdet's measure", () => {
  it('is the mean absolute difference in percent of full scale', () => {
    expect(mafd(new Uint8Array([0, 0, 0, 0]), new Uint8Array([0, 0, 0, 0]))).toBe(0);
    expect(mafd(new Uint8Array([0, 0, 0, 0]), new Uint8Array([128, 128, 0, 0]))).toBe(25);
  });
});

const gop = (sizes: number[]): FramePacket[] => sizes.map((size, i) => ({ t: i / 25, size, key: i % 10 === 0 }));

describe('candidates', () => {
  it('flags a packet much larger than its neighbours on either side, not steady P/B alternation', () => {
    const steady = gop([9000, 800, 200, 200, 800, 200, 200, 800, 200, 200]);
    expect(sizeOutliers(steady, 64)).toEqual(new Set());
    const cutIntoSimple = gop([1200, 800, 900, 850, 700, 60, 50, 40, 45, 50]);
    expect(sizeOutliers(cutIntoSimple, 64)).toEqual(new Set([4]));
    const cutIntoBusy = gop([5000, 100, 90, 110, 95, 3000, 1200, 1100, 1000, 1300]);
    expect(sizeOutliers(cutIntoBusy, 64)).toEqual(new Set([5]));
    expect(sizeOutliers(gop([100, 10, 10, 10, 40, 10, 10, 10, 10, 10]), 64)).toEqual(new Set()); // too small to mean anything
    // Larger than its neighbours but far smaller than a picture of its own (the keyframes): motion, not a cut.
    expect(sizeOutliers(gop([9000, 100, 90, 110, 95, 3000, 1200, 1100, 1000, 1300]), 64)).toEqual(new Set());
  });

  it('makes a GOP a candidate for differing keyframes or an outlier inside it, and always the last GOP', () => {
    const keys = [0, 50, 100, 150];
    // GOP 0 (0-50) keyframes differ; GOP 2 (100-150) holds an outlier at frame 120; GOP 3 runs to the end (frame 199).
    expect([...candidateGops(keys, 200, [12, 1, 0], new Set([120]))].sort()).toEqual([0, 2, 3]);
    expect([...candidateGops(keys, 151, [0, 0, 0], new Set())]).toEqual([]);
  });

  it('decodes each candidate GOP up to the next keyframe inclusive, contiguous ones as one run', () => {
    expect(planRuns([0, 50, 100, 150], 200, new Set([0, 1, 3]))).toEqual([
      { from: 0, to: 100 },
      { from: 150, to: 199 },
    ]);
  });

  it('finds the last packet of a GOP that jumps in size: new content after cheap frames, not steady P/B alternation', () => {
    // Keyframes at 0 and 10: a cut into busy content at 4 (a jump), busy on (no jump), then B/P alternation.
    const cutIntoBusy = gop([5000, 100, 90, 110, 3000, 2800, 2900, 2700, 2800, 2900, 5000]);
    expect(lastJump(cutIntoBusy, 0, 10, 64)).toBe(4);
    expect(lastJump(gop([9000, 800, 200, 200, 800, 200, 200, 800, 200, 200, 9000]), 0, 10, 64)).toBeUndefined();
    // The first packet after the keyframe is judged against the keyframe.
    expect(lastJump(gop([1000, 900, 10, 10, 10, 10, 10, 10, 10, 10, 1000]), 0, 10, 64)).toBe(1);
    expect(lastJump(gop([5000, 100, 90, 110, 95, 100, 90, 110, 95, 100, 5000]), 0, 10, 64)).toBeUndefined();
    // A drop: busy footage cut to something calm (a quarter of the smallest of the 4 packets before).
    expect(lastJump(gop([9000, 3000, 2800, 2900, 2700, 2800, 200, 90, 80, 90, 9000]), 0, 10, 64)).toBe(6);
  });

  it("stops a run at its last GOP's last jump when enough frames are left, and says which keyframe closes it", () => {
    const frames = gop([
      5000, 100, 90, 110, 3000, 2800, 2900, 2700, 2800, 2900, 5000, 100, 90, 110, 95, 100, 90, 110, 95, 100, 5000,
    ]);
    expect(stopEarly(frames, [{ from: 0, to: 10 }], 64)).toEqual([{ from: 0, to: 4, closes: 10 }]);
    // Too few frames after the jump to be worth a check; no jump at all; a run that ends at the file's last frame.
    const late = gop([5000, 100, 90, 110, 95, 100, 90, 110, 3000, 2900, 5000]);
    expect(stopEarly(late, [{ from: 0, to: 10 }], 64)).toEqual([{ from: 0, to: 10 }]);
    expect(stopEarly(frames, [{ from: 10, to: 20 }], 64)).toEqual([{ from: 10, to: 20 }]);
    expect(stopEarly(frames.slice(0, 16), [{ from: 10, to: 15 }], 64)).toEqual([{ from: 10, to: 15 }]);
    // A run of two GOPs stops inside its last one only.
    const two = gop([
      5000, 100, 90, 110, 3000, 2800, 2900, 2700, 2800, 2900, 5000, 100, 90, 3000, 2900, 2800, 2700, 2800, 2900, 2800,
      5000,
    ]);
    expect(stopEarly(two, [{ from: 0, to: 20 }], 64)).toEqual([{ from: 0, to: 13, closes: 20 }]);
  });
});
