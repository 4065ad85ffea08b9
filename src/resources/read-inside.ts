// Reading one of cutroom's own files (a preview, an export) for a resource: through one descriptor opened without
// following a link, a regular file that lies inside its folder. A link or a FIFO planted in a cache that several
// servers share is not served (or waited on), whatever it points at.
import { openAllowed } from '../open-allowed.js';
import { UserFacingError } from '../errors.js';
import { Limiter } from '../media/probe.js';

/** Reads at once in the whole process: each holds a file of up to the limit, and its base64, in memory. */
const reads = new Limiter(2);

export type Read = { data: Buffer } | { missing: true } | { tooLarge: number };

export async function readInside(path: string, root: string, maxBytes: number): Promise<Read> {
  let opened: Awaited<ReturnType<typeof openAllowed>>;
  try {
    opened = await openAllowed(path, [root]);
  } catch (err) {
    if (err instanceof UserFacingError) return { missing: true };
    throw err;
  }
  const { fh, size } = opened;
  try {
    if (size > maxBytes) return { tooLarge: size };
    return { data: await reads.run(() => fh.readFile()) };
  } finally {
    await fh.close();
  }
}
