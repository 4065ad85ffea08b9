// Transcriptions under way, joined and handed over (issue 31); and a call's progress in stages, rising only.
import { describe, expect, it } from 'vitest';
import { afterStage, beating, type Progress } from '../../src/tools/progress.js';
import { TranscriptionJobs } from '../../src/workflow/transcription-jobs.js';

/** A job's work that ends when told to, or when it is stopped. */
function controllable() {
  let finish!: (v: string) => void;
  let runs = 0;
  let stopped = false;
  let report!: (f: number, m: string) => void;
  const work = (signal: AbortSignal, progress: (f: number, m: string) => void) => {
    runs++;
    report = progress;
    return new Promise<string>((resolve, reject) => {
      finish = resolve;
      signal.addEventListener('abort', () => {
        stopped = true;
        reject(new Error('stopped'));
      });
    });
  };
  return {
    work,
    finish: (v: string) => finish(v),
    report: (f: number, m: string) => report(f, m),
    runs: () => runs,
    stopped: () => stopped,
  };
}
const tick = () => new Promise((r) => setTimeout(r, 5));
const handOver = () => new Error('handed over');

describe('TranscriptionJobs', () => {
  it('runs one job for everyone who asks meanwhile; a caller who joins gets the progress so far at once', async () => {
    const jobs = new TranscriptionJobs<string>();
    const w = controllable();
    const job = jobs.start('a', w.work);
    const first = jobs.follow(job, {}, handOver);
    await tick();
    w.report(0.4, 'listening');
    const seen: [number, string][] = [];
    expect(jobs.find('a')).toBe(job);
    const second = jobs.follow(jobs.find('a')!, { onProgress: (f, m) => seen.push([f, m]) }, handOver);
    expect(seen).toEqual([[0.4, 'listening']]);
    w.report(0.7, 'listening');
    w.finish('words');
    expect(await first).toBe('words');
    expect(await second).toBe('words');
    expect(seen.at(-1)).toEqual([0.7, 'listening']);
    expect(w.runs()).toBe(1);
    await tick();
    expect(jobs.find('a')).toBeUndefined();
  });

  it('a caller that hands over leaves the job running; a later caller joins it to its end', async () => {
    const jobs = new TranscriptionJobs<string>();
    const w = controllable();
    const job = jobs.start('a', w.work);
    await expect(jobs.follow(job, { handOverAt: Date.now() + 20 }, handOver)).rejects.toThrow('handed over');
    expect(w.stopped()).toBe(false);
    expect(job.callers.size).toBe(0);
    const later = jobs.follow(jobs.find('a')!, {}, handOver);
    w.finish('words');
    expect(await later).toBe('words');
    expect(w.runs()).toBe(1);
  });

  it('is stopped only when every caller still waiting has cancelled', async () => {
    const jobs = new TranscriptionJobs<string>();
    const w = controllable();
    const job = jobs.start('a', w.work);
    const one = new AbortController();
    const two = new AbortController();
    const a = jobs.follow(job, { signal: one.signal }, handOver);
    const b = jobs.follow(job, { signal: two.signal }, handOver);
    await tick();
    one.abort();
    await expect(a).rejects.toThrow(/cancelled/);
    expect(w.stopped()).toBe(false);
    two.abort();
    await expect(b).rejects.toThrow(/cancelled/);
    expect(w.stopped()).toBe(true);
    expect(jobs.find('a')).toBeUndefined();
  });

  it('latest names the newest job under a prefix', async () => {
    const jobs = new TranscriptionJobs<string>();
    const x = jobs.start('k|text:1', controllable().work);
    await new Promise((r) => setTimeout(r, 2));
    const y = jobs.start('k|text:2', controllable().work);
    jobs.start('k|heard', controllable().work);
    expect(jobs.latest('k|text:')).toBe(y);
    expect(jobs.latest('k|text:')).not.toBe(x);
    expect(jobs.latest('other|')).toBeUndefined();
  });
});

describe('progress in stages', () => {
  const recorder = () => {
    const sent: [number, number | undefined][] = [];
    const progress: Progress = async (p, total) => void sent.push([p, total]);
    return { sent, progress };
  };

  it('listening takes its share of the total, and the next stage goes on above it', () => {
    const { sent, progress } = recorder();
    const listen = beating(progress, { share: 0.5 });
    listen.update(0, 'listening');
    listen.update(0.5, 'listening');
    listen.update(1, 'listening');
    listen.stop();
    expect(listen.last).toBe(50);
    const next = afterStage(progress, listen.last);
    void next(0, 100, 'rendering');
    void next(50, 100, 'rendering');
    void next(100, 100, 'done');
    expect(sent).toEqual([
      [0, 100],
      [25, 100],
      [50, 100],
      [50, 100],
      [75, 100],
      [100, 100],
    ]);
  });

  it('keeps its units: a fraction of 1, or a count without a total', () => {
    const a = recorder();
    const listen = beating(a.progress, { total: 1, share: 0.5 });
    listen.update(0.5, 'listening');
    listen.stop();
    void afterStage(a.progress, listen.last)(0.5, 1, 'rendering');
    expect(a.sent).toEqual([
      [0.25, 1],
      [0.625, 1],
    ]);
    const b = recorder();
    const counting = beating(b.progress, { total: null, share: 0.5 });
    counting.update(0.2, 'listening');
    counting.stop();
    void afterStage(b.progress, counting.last)(3, undefined, '3 s');
    expect(b.sent).toEqual([
      [10, undefined],
      [13, undefined],
    ]);
  });

  it('sends nothing, and leaves the next stage as it is, when nothing was heard', () => {
    const { sent, progress } = recorder();
    const listen = beating(progress, { share: 0.5 });
    listen.stop();
    expect(listen.last).toBe(-1);
    expect(afterStage(progress, listen.last)).toBe(progress);
    expect(sent).toEqual([]);
  });
});
