// The job queue's pure parts: job data through JSON, content-addressed ids, which failures are retried.
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { decode, encode, jobIdOf } from '../../src/jobs/codec.js';
import { failureForCaller, isMachineFailure, jobFailure } from '../../src/jobs/failures.js';
import { UserFacingError } from '../../src/errors.js';
import { RenderError } from '../../src/media/render-error.js';

describe('job data', () => {
  it('keeps Maps and Sets through JSON', () => {
    const data = {
      assets: new Map([['a', { source: { kind: 'url', url: 'http://x/y?sig=1' } }]]),
      words: new Map([['a', [{ start: 1, end: 2 }]]]),
      seen: new Set([1, 2]),
      n: 1.5,
    };
    const back = decode<typeof data>(encode(data));
    expect(back.assets).toBeInstanceOf(Map);
    expect(back.assets.get('a')).toEqual(data.assets.get('a'));
    expect(back.words.get('a')).toEqual([{ start: 1, end: 2 }]);
    expect(back.seen).toEqual(new Set([1, 2]));
    expect(back.n).toBe(1.5);
  });

  it("gives the same work the same id: key order and a link's signature do not count, the media and options do", () => {
    const a = jobIdOf('preview', { x: 1, m: new Map([['k', 'https://h/media/a.mp4?sig=abc&exp=1']]) });
    const b = jobIdOf('preview', { m: new Map([['k', 'https://h/media/a.mp4?sig=def&exp=2']]), x: 1 });
    expect(a).toBe(b);
    expect(a).toMatch(/^preview-[0-9a-f]{40}$/);
    expect(jobIdOf('preview', { x: 2, m: new Map([['k', 'https://h/media/a.mp4']]) })).not.toBe(a);
    expect(jobIdOf('preview', { x: 1, m: new Map([['k', 'https://h/media/b.mp4']]) })).not.toBe(a);
  });
});

describe('which failures are tried again', () => {
  it("the machine's (a full disk, a killed process, anything unexpected), not the input's nor a cancel", () => {
    expect(
      isMachineFailure(
        new UserFacingError(
          'the preview failed: the disk holding the cache dir (CUTROOM_CACHE_DIR=/c) is full; nothing was kept',
        ),
      ),
    ).toBe(true);
    expect(
      isMachineFailure(
        new UserFacingError('the preview failed: x; killed by SIGKILL (out of memory, or stopped from outside)'),
      ),
    ).toBe(true);
    expect(isMachineFailure(new Error('EIO: i/o error'))).toBe(true);
    expect(isMachineFailure(new UserFacingError('asset a could not be read (404)'))).toBe(false);
    // ffmpeg's own failure is the input's, unless the disk filled or the process was killed.
    expect(isMachineFailure(new RenderError('Invalid data found when processing input; exit code 1'))).toBe(false);
    expect(isMachineFailure(new RenderError('x', false, true))).toBe(true);
    expect(
      isMachineFailure(
        new RenderError('killed by SIGKILL (out of memory, or stopped from outside), with nothing on stderr'),
      ),
    ).toBe(true);
    expect(jobFailure(new UserFacingError('asset a could not be read'), false, 'cancelled')).toBeInstanceOf(
      UnrecoverableError,
    );
    expect(jobFailure(new Error('ENOSPC'), false, 'cancelled')).not.toBeInstanceOf(UnrecoverableError);
    const cancelled = jobFailure(new Error('ENOSPC'), true, 'the preview was cancelled');
    expect(cancelled).toBeInstanceOf(UnrecoverableError);
    expect(cancelled.message).toBe('the preview was cancelled');
  });

  it('says a job that stalled too often in words', () => {
    expect(failureForCaller('job stalled more than allowable limit', 'preview')).toMatch(
      /workers that took it stopped before finishing/,
    );
    expect(failureForCaller(undefined, 'preview')).toMatch(/nothing was kept/);
    expect(failureForCaller('asset a could not be read', 'preview')).toBe('asset a could not be read');
  });
});
