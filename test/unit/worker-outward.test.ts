// What a caller is shown of a worker's message (jobs/failures.ts workerOutward): as a server's own, exact strings.
import { describe, expect, it } from 'vitest';
import { workerOutward } from '../../src/jobs/failures.js';

const hash = 'c15394b7cf9a6e19688838ea3fc8cfa8';
const outward = workerOutward({ cache: '/srv/w/cache', data: '/srv/w/cache-data' }, ['minio.internal:9000']);

describe('workerOutward', () => {
  it("names the worker's folders as a server names its own, and leaves out a caller's folder", () => {
    expect(outward(`the disk holding the cache dir (CUTROOM_CACHE_DIR=/srv/w/cache/callers/${hash}) is full`)).toBe(
      "the disk holding the cache dir (CUTROOM_CACHE_DIR=(the server's cache)) is full",
    );
    expect(outward(`cannot write /srv/w/cache/callers/${hash}/previews/p1/preview.mp4: EIO`)).toBe(
      "cannot write (the server's cache)/previews/p1/preview.mp4: EIO",
    );
    // The longer folder is matched whole, not as the shorter one followed by "-data".
    expect(outward('render written to /srv/w/cache-data/projects/x/out.mp4')).toBe(
      "render written to (the server's data)/projects/x/out.mp4",
    );
    expect(outward(`job for callers/${hash}: failed`)).toBe("job for (a caller's folder): failed");
  });

  it("names no store address and no signed link's query; leaves other text alone", () => {
    expect(outward('the store at http://minio.internal:9000/b did not answer')).toBe(
      'the store at http://(the object store)/b did not answer',
    );
    expect(outward('reading https://cdn.example/a.mp4?X-Amz-Signature=abc failed')).toBe(
      'reading https://cdn.example/a.mp4?[redacted] failed',
    );
    expect(outward('/srv/w/cachet is another folder')).toBe('/srv/w/cachet is another folder');
  });
});
