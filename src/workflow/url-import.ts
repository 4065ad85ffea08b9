// import_media {url}: a caller's link fetched under the hosted-fetcher rules (api/url-fetch.ts) into a folder of
// cutroom's own, then imported (probed, copied into the project) like any file, and the folder removed whatever
// happens. The asset is named by the link's file name; the link itself is never kept nor shown with its query.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DownloadError } from '../api/download.js';
import { fetchUrl, type FetchRules } from '../api/url-fetch.js';
import type { ImportedMedia, ImportOptions } from '../backend/types.js';
import { UserFacingError } from '../errors.js';

export async function importFromUrl(
  importMedia: (projectId: string, path: string, call?: ImportOptions) => Promise<ImportedMedia>,
  projectId: string,
  url: string,
  opts: {
    rules: FetchRules;
    scratchDir?: string;
    again?: boolean;
    signal?: AbortSignal;
    onProgress?: (bytes: number, total?: number) => void;
  },
): Promise<{ media: ImportedMedia; name: string; bytes: number }> {
  const parent = opts.scratchDir ?? tmpdir();
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, 'fetch-'));
  try {
    const file = join(dir, 'fetched');
    const got = await fetchUrl(url, file, opts.rules, {
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    }).catch((err: unknown) => {
      throw err instanceof DownloadError ? new UserFacingError(err.message) : err;
    });
    const media = await importMedia(projectId, file, {
      fetched: { name: got.name },
      ...(opts.again ? { again: true } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return { media, ...got };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
