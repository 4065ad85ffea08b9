// GET /files/<token>/<name>: the server's files behind the signed, expiring links results carry over HTTP
// (workflow/file-links.ts makes them). The link is its own authority (a person opens it in a browser, with no
// credentials); one presented with the credentials of another caller than the one it was made for, altered, or
// naming a file that is gone is answered as a link that never existed; one past its time says it expired. The file
// is opened once (no link followed), must be a regular file inside the server's folders, and is served whole or by
// one byte range, named by its own name (Content-Disposition).
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { constants } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, relative, isAbsolute } from 'node:path';
import { readLink } from '../workflow/file-links.js';

export interface FileServing {
  secret: string;
  /** The server's folders, in the order links name them. */
  roots: string[];
  /** The caller the request's credentials name: undefined without credentials, null when they name nobody. */
  callerOf: (req: IncomingMessage) => Promise<string | undefined | null>;
}

const TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  json: 'application/json',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
  edl: 'text/plain; charset=utf-8',
  fcpxml: 'application/xml',
  otio: 'application/json',
};

function plain(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify({ error }));
}

/** Content-Disposition for a name: an ASCII fallback and the name itself (RFC 6266, RFC 8187). */
export function disposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** One byte range of a file of `size` bytes, as a Range header asks; 'unsatisfiable', or undefined for the whole. */
export function byteRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec((header ?? '').trim());
  // No range, several ranges, or another unit: the whole file (as RFC 9110 lets a server answer).
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

const NOT_FOUND = 'no such link: ask cutroom for the file again (its result carries a new link)';

export async function serveFile(req: IncomingMessage, res: ServerResponse, path: string, opts: FileServing) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'GET a link', { allow: 'GET, HEAD' });
  const token = /^\/files\/([^/]+)\/[^/]*$/.exec(path)?.[1];
  const claim = token ? readLink(opts.secret, token, Date.now()) : undefined;
  const root = claim ? opts.roots[claim.root] : undefined;
  if (!claim || !root) return plain(res, 404, NOT_FOUND);
  // A link presented by another caller is one that does not exist, for them.
  const caller = await opts.callerOf(req);
  if (caller !== undefined && caller !== claim.caller) return plain(res, 404, NOT_FOUND);
  if (claim.expired)
    return plain(res, 403, 'this link has expired: ask cutroom for the file again (its result carries a new link)');
  const file = join(root, claim.path);
  const rel = relative(root, file);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) return plain(res, 404, NOT_FOUND);
  let fh;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return plain(res, 404, NOT_FOUND);
  }
  let handed = false;
  try {
    const stat = await fh.stat();
    if (!stat.isFile()) return plain(res, 404, NOT_FOUND);
    const size = stat.size;
    const range = byteRange(typeof req.headers.range === 'string' ? req.headers.range : undefined, size);
    const ext = /\.([A-Za-z0-9]+)$/.exec(claim.name)?.[1]?.toLowerCase() ?? '';
    const headers: Record<string, string> = {
      'content-type': TYPES[ext] ?? 'application/octet-stream',
      'content-disposition': disposition(claim.name),
      'accept-ranges': 'bytes',
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
      'last-modified': stat.mtime.toUTCString(),
    };
    if (range === 'unsatisfiable')
      return plain(res, 416, 'the range asked for lies outside the file', {
        'content-range': `bytes */${size}`,
      });
    const { start, end } = range ?? { start: 0, end: size - 1 };
    const length = size === 0 ? 0 : end - start + 1;
    res.writeHead(range ? 206 : 200, {
      ...headers,
      'content-length': String(length),
      ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === 'HEAD' || length === 0) return void res.end();
    // Read from the descriptor opened above (never the name again); the stream closes it.
    const stream = createReadStream('', { fd: fh, start, end, autoClose: true });
    handed = true;
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  } finally {
    if (!handed) await fh.close().catch(() => {});
  }
}
