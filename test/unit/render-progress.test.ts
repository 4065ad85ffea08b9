import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ProgressSidecar, readProgress, renderFileName } from '../../src/backend/local/render-files.js';
import { EtaEstimator } from '../../src/media/eta.js';
import { checkAgainSeconds, runningText, whereItStands, type RenderStatus } from '../../src/workflow/render-status.js';

describe('EtaEstimator', () => {
  it('gives no estimate until a little work is done, then the time left at the pace so far', () => {
    const eta = new EtaEstimator(0);
    eta.update(0.02, 1000);
    expect(eta.etaSeconds(1000)).toBeUndefined(); // 2% done
    eta.update(0.025, 1600);
    expect(eta.etaSeconds(1600)).toBeUndefined(); // still under 3%
    const early = new EtaEstimator(0);
    early.update(0.5, 500);
    expect(early.etaSeconds(500)).toBeUndefined(); // half done, but after only half a second
    eta.update(0.1, 2000);
    // 10% in 2 s: 18 s left.
    expect(eta.etaSeconds(2000)).toBeCloseTo(18, 5);
  });

  it('counts down between reports and never goes below zero', () => {
    const eta = new EtaEstimator(0);
    eta.update(0.5, 2000);
    expect(eta.etaSeconds(2000)).toBeCloseTo(2, 5);
    expect(eta.etaSeconds(3000)).toBeCloseTo(1, 5);
    expect(eta.etaSeconds(60_000)).toBe(0);
    eta.update(1, 4000);
    expect(eta.etaSeconds(4000)).toBe(0);
  });

  it('smooths a change of pace instead of jumping with it, and ignores fractions that go back', () => {
    const eta = new EtaEstimator(0);
    for (let t = 1; t <= 10; t++) eta.update(t * 0.02, t * 1000); // 2% a second
    const steady = eta.etaSeconds(10_000)!;
    expect(steady).toBeCloseTo(40, 3);
    eta.update(0.1, 10_500); // a fraction from the past
    expect(eta.etaSeconds(10_000)).toBeCloseTo(steady, 5);
    // One second four times as fast: the raw pace would say 9 s; the estimate moves only part of the way there.
    eta.update(0.28, 11_000);
    const after = eta.etaSeconds(11_000)!;
    expect(after).toBeLessThan(steady - 1);
    expect(after).toBeGreaterThan(0.72 / 0.08 + 5);
  });
});

describe('renderFileName', () => {
  it('keeps a plain name as it is, Unicode and spaces included', () => {
    expect(renderFileName('lake at dawn.mp4')).toBe('lake at dawn.mp4');
    expect(renderFileName('Café été.mp4')).toBe('Café été.mp4');
    expect(renderFileName('cut (v2), final.MP4')).toBe('cut (v2), final.mp4');
  });

  it('reduces anything else to a safe basename ending in .mp4', () => {
    expect(renderFileName('../../etc/passwd.mp4')).toBe('passwd.mp4');
    expect(renderFileName('C:\\out\\x.mp4')).toBe('x.mp4');
    expect(renderFileName('.hidden.mp4')).toBe('hidden.mp4');
    expect(renderFileName('-y.mp4')).toBe('y.mp4');
    expect(renderFileName('img%03d.mp4')).toBe('img_03d.mp4');
    expect(renderFileName('a:b*c?.mp4')).toBe('a_b_c_.mp4');
    expect(renderFileName('line\nbreak\u202e.mp4')).toBe('linebreak.mp4');
    expect(renderFileName('...mp4')).toBe('cutroom-edit.mp4');
    expect(renderFileName('.mp4')).toBe('cutroom-edit.mp4');
    expect(renderFileName(undefined)).toBe('cutroom-edit.mp4');
    expect(renderFileName('clip')).toBe('clip.mp4');
  });

  it("keeps a long name under the file system's limit with room for its temporary names, never splitting a character", () => {
    const name = renderFileName(`${'é'.repeat(150)}.mp4`);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(184);
    expect(name).toBe(`${'é'.repeat(90)}.mp4`);
  });
});

describe('ProgressSidecar', () => {
  it('writes the latest progress at most once in its interval, and removes it when closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-sidecar-'));
    let fraction = 0.1;
    // The clock is the test's (no timed waits: a loaded machine must not change the outcome); the writes are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const sidecar = new ProgressSidecar(dir, () => ({ fraction, eta_seconds: 5 }), 300);
      sidecar.changed();
      await vi.advanceTimersByTimeAsync(0);
      await sidecar.settled();
      expect(await readProgress(dir)).toMatchObject({ fraction: 0.1, eta_seconds: 5 });
      // Two changes inside the interval: neither is written until it has passed, and then the latest is.
      fraction = 0.2;
      sidecar.changed();
      fraction = 0.3;
      sidecar.changed();
      await vi.advanceTimersByTimeAsync(100);
      await sidecar.settled();
      expect((await readProgress(dir))?.fraction).toBe(0.1);
      await vi.advanceTimersByTimeAsync(250);
      await sidecar.settled();
      expect((await readProgress(dir))?.fraction).toBe(0.3);
      await sidecar.close();
    } finally {
      vi.useRealTimers();
    }
    expect(readdirSync(dir)).toEqual([]);
    expect(await readProgress(dir)).toBeUndefined();
  });
});

describe('where a running render stands, in words', () => {
  const running: RenderStatus = { asset_id: 'r', status: 'processing', uploaded: false, done: false, failed: false };
  it('says the fraction and time left of a local render, and checks again when it should be done', () => {
    const s = { ...running, progress: 0.423, eta_seconds: 12.4, elapsed_seconds: 9 };
    expect(whereItStands(s)).toBe('rendering 42%, about 12 s left');
    expect(runningText(s, 'local')).toBe('rendering 42%, about 12 s left (9 s since it started)');
    expect(checkAgainSeconds(s)).toBe(13);
    expect(whereItStands({ ...s, eta_seconds: 250 })).toBe('rendering 42%, about 4 min 10 s left');
    expect(checkAgainSeconds({ ...s, eta_seconds: 3600 })).toBe(60);
  });

  it('says when it is too early to tell, and what a service said as it said it', () => {
    expect(runningText({ ...running, progress: 0.01, elapsed_seconds: 1 }, 'local')).toBe(
      'rendering 1%, 1 s since it started; too early to tell the time left',
    );
    const remote = { ...running, status: 'rendering-queued', elapsed_seconds: 95 };
    expect(whereItStands(remote)).toBe('rendering-queued, 1 min 35 s since it started');
    expect(runningText(remote, 'remote')).toBe(
      'the service says "rendering-queued", 1 min 35 s since it started; it reports no progress',
    );
    expect(checkAgainSeconds(remote)).toBe(30);
    expect(checkAgainSeconds({ ...remote, elapsed_seconds: 3 })).toBe(5);
  });
});
