// Where a query may be said, from an asset's phone pass (src/analysis/phone-pass.ts): the phone recogniser's output
// read, and stretches of it that sound like the query found (a phone or two misheard, inserted or missed), padded
// and joined; stretches that do not are left out.
import { describe, expect, it } from 'vitest';
import { phonesOf } from '../../src/analysis/dictionary.js';
import {
  candidateSpans,
  featParamsWithMean,
  joinSpans,
  parseFeatureMean,
  parsePhonePass,
  weightedMean,
  type HeardPhone,
} from '../../src/analysis/phone-pass.js';

/** Phones heard one after the other, 0.1 s each from `at`. */
const heardFrom = (names: string, at = 0): HeardPhone[] =>
  Array.from(phonesOf(names), (phone, k) => ({ phone, start: at + k * 0.1, end: at + (k + 1) * 0.1 }));

describe('the phone pass', () => {
  it("reads 0.8's -time lines on the asset's clock, silence and fillers dropped", () => {
    const out = parsePhonePass(
      [
        'SIL L AY T',
        'SIL 0.000 0.110 1.000000',
        'L 0.120 0.200 1.000000',
        '+NSN+ 0.21 0.3 1',
        'AY 0.310 0.450 1.000000',
        'junk',
      ].join('\n'),
      10,
    );
    expect(out.map((p) => [p.start, p.end])).toEqual([
      [10.12, 10.2],
      [10.31, 10.45],
    ]);
    expect(out.map((p) => p.phone)).toEqual(Array.from(phonesOf('L AY')));
  });

  it('finds the query where it was heard with a phone wrong, one missed and one more, and nowhere else', () => {
    // "lighthouse" L AY T HH AW S heard as L AY D AW Z (T for D, HH missed, S as Z) from 2.0 s, among other words.
    const heard = [...heardFrom('DH AH M AA R K IH T'), ...heardFrom('L AY D AW Z', 2), ...heardFrom('K IY P ER', 4)];
    const spans = candidateSpans(heard, [phonesOf('L AY T HH AW S')], 0.5, 0.5);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.from).toBeCloseTo(1.5, 5);
    expect(spans[0]!.to).toBeCloseTo(3.0, 5);
    // Nothing like it: no span.
    expect(candidateSpans(heardFrom('DH AH M AA R K IH T K IY P ER'), [phonesOf('L AY T HH AW S')])).toEqual([]);
  });

  it('tries every pronunciation, and joins spans that overlap', () => {
    const heard = [...heardFrom('T AH M EY T OW'), ...heardFrom('T AH M AA T OW', 1)];
    const spans = candidateSpans(heard, [phonesOf('T AH M EY T OW'), phonesOf('T AH M AA T OW')], 0.2, 0.5);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.from).toBeCloseTo(0, 5);
    expect(spans[0]!.to).toBeCloseTo(2.1, 5);
    expect(
      joinSpans([
        { from: 3, to: 4 },
        { from: 0, to: 1 },
        { from: 0.5, to: 2 },
      ]),
    ).toEqual([
      { from: 0, to: 2 },
      { from: 3, to: 4 },
    ]);
  });
});

describe("the asset's feature mean", () => {
  it("reads the last mean 0.8's log prints, and none from a log without one", () => {
    const log = [
      'INFO: feat.c(713): Initializing feature stream to type: 1s_c_d_dd',
      'INFO: cmn_live.c(88): Update from < 41.00 -5.29 -0.12 >',
      'INFO: cmn_live.c(105): Update to   < 49.79 35.04 -29.76 >',
      'INFO: cmn_live.c(120): Update from < 49.79 35.04 -29.76 >',
      'INFO: cmn_live.c(138): Update to   < 49.62 35.18 -30.96 >',
      'INFO: ngram_search.c(912): bestpath',
    ].join('\n');
    expect(parseFeatureMean(log)).toEqual([49.62, 35.18, -30.96]);
    expect(parseFeatureMean('INFO: nothing here')).toBeUndefined();
  });

  it("weighs pieces' means by their length, and gives none where a piece's is unknown or of another width", () => {
    expect(
      weightedMean([
        { mean: [10, 0], weight: 3 },
        { mean: [20, 4], weight: 1 },
      ]),
    ).toEqual([12.5, 1]);
    expect(weightedMean([{ mean: undefined, weight: 3 }])).toBeUndefined();
    expect(
      weightedMean([
        { mean: [1, 2], weight: 1 },
        { mean: undefined, weight: 2 },
      ]),
    ).toEqual([1, 2]);
    expect(
      weightedMean([
        { mean: [1, 2], weight: 1 },
        { mean: [1], weight: 1 },
      ]),
    ).toBeUndefined();
  });

  it("sets the model's starting mean in a copy of its feature parameters, the rest kept", () => {
    const params = '-lowerf 130\n-cmn batch\n-cmninit 41.00,-5.29,-0.12\n-varnorm no\n';
    expect(featParamsWithMean(params, [49.621, 35.18, -30.957])).toBe(
      '-lowerf 130\n-cmn batch\n-varnorm no\n-cmninit 49.62,35.18,-30.96\n',
    );
    expect(featParamsWithMean('-cmn live\n', [1, 2])).toBe('-cmn live\n-cmninit 1.00,2.00\n');
  });
});
