// How long a job that reports its fraction done has left: the rate of progress, smoothed, turned into seconds.
// Pure arithmetic on (time, fraction) samples; the caller says what time it is.

/**
 * No estimate before this share of the work and this much time: the first moments (opening inputs, the encoder's
 * lookahead) say little.
 */
const MIN_FRACTION = 0.03;
const MIN_WORK_MS = 1500;
/** The smoothed rate follows a change of pace over about this long, so one slow or fast second barely moves it. */
const RATE_TIME_CONSTANT_MS = 5000;

export class EtaEstimator {
  private fraction = 0;
  private lastAt: number;
  /** Fraction per millisecond, once estimated. */
  private rate: number | undefined;

  constructor(private readonly startedAt: number) {
    this.lastAt = startedAt;
  }

  /** A new fraction done (0..1) at `now` (ms); fractions that go back are ignored. */
  update(fraction: number, now: number): void {
    const f = Math.min(1, Math.max(0, fraction));
    if (!(f > this.fraction) || now <= this.lastAt) return;
    if (this.rate === undefined) {
      // The first estimate is the average since the start, from when there is enough to average.
      if (f >= MIN_FRACTION && now - this.startedAt >= MIN_WORK_MS) this.rate = f / (now - this.startedAt);
    } else {
      const dt = now - this.lastAt;
      const weight = 1 - Math.exp(-dt / RATE_TIME_CONSTANT_MS);
      this.rate += weight * ((f - this.fraction) / dt - this.rate);
    }
    this.fraction = f;
    this.lastAt = now;
  }

  get done(): number {
    return this.fraction;
  }

  /** Seconds left at `now`, or undefined while too little is done to tell; never negative. */
  etaSeconds(now: number): number | undefined {
    if (this.rate === undefined || this.rate <= 0) return undefined;
    const sinceLast = Math.max(0, now - this.lastAt);
    return Math.max(0, ((1 - this.fraction) / this.rate - sinceLast) / 1000);
  }
}
