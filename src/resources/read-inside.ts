// Reading one of cutroom's own files (a preview, an export) for a resource: through one descriptor opened without
// following a link, a regular file that lies inside its folder. A link or a FIFO planted in a cache that several
// servers share is not served (or waited on), whatever it points at. Its parts are read from that descriptor.
import { createHash } from 'node:crypto';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { openAllowed } from '../open-allowed.js';
import { UserFacingError } from '../errors.js';
import { Limiter } from '../media/probe.js';
import type { Body } from './parts.js';

/** Reads at once in the whole process: each holds a part, and its base64, in memory. */
const reads = new Limiter(2);
const HASH_CHUNK = 1024 * 1024;
/** The sha256 of files already hashed, by device, inode, size and times: a manifest read again costs no re-read. */
const hashes = new Map<string, string>();
const HASHES_KEPT = 64;

/** The file as a Body, or undefined when there is no such regular file inside `root`. */
export async function openInside(path: string, root: string): Promise<Body | undefined> {
  let opened: Awaited<ReturnType<typeof openAllowed>>;
  try {
    opened = await openAllowed(path, [root]);
  } catch (err) {
    if (err instanceof UserFacingError) return undefined;
    throw err;
  }
  const { fh, size } = opened;
  const readAt = async (buf: Buffer, offset: number): Promise<void> => {
    for (let got = 0; got < buf.length;) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, offset + got);
      if (!bytesRead)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          'the file shrank while it was read: read the resource again',
        );
      got += bytesRead;
    }
  };
  return {
    size,
    read: (offset, length) =>
      reads.run(async () => {
        const buf = Buffer.alloc(length);
        await readAt(buf, offset);
        return buf;
      }),
    sha256: async () => {
      const st = await fh.stat();
      const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      const known = hashes.get(key);
      if (known) return known;
      const hash = createHash('sha256');
      const buf = Buffer.alloc(Math.min(HASH_CHUNK, size));
      for (let offset = 0; offset < size; offset += buf.length) {
        const chunk = buf.subarray(0, Math.min(buf.length, size - offset));
        await readAt(chunk, offset);
        hash.update(chunk);
      }
      const digest = hash.digest('hex');
      hashes.set(key, digest);
      if (hashes.size > HASHES_KEPT) hashes.delete(hashes.keys().next().value!);
      return digest;
    },
    close: () => fh.close(),
  };
}
