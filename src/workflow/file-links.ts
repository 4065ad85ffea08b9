// Signed, expiring links to the server's own files, for callers over HTTP (who cannot open a path on the server):
// what a link says (the file, the name it downloads as, whose it is, until when) and its HMAC with the server's link
// secret. Made here, where results are shown to a caller (remote-paths.ts); checked by http/file-links.ts, which
// serves the file. Pure: no I/O, no clock but the one handed in.
import { isAbsolute, relative, sep } from 'node:path';
import { openClaim, signClaim } from './signed-claims.js';

/** What a link names, as signed. */
export interface LinkClaim {
  /** The folder of the server's (index in the roots) and the file's path inside it. */
  root: number;
  path: string;
  /** The name the file downloads as (Content-Disposition). */
  name: string;
  /** Whose it is: the caller's key (callerKeyOf), never a credential. */
  caller: string;
  /** Unix seconds after which the link is refused. */
  expires: number;
}

export interface FileLinks {
  /** The link to a file of the server's for this caller, or undefined when the file lies in none of the roots. */
  link(file: string, name?: string): { url: string; expiresAt: string } | undefined;
}

/** A name safe to put in a URL's last segment and a header: the file's own characters, no path. */
export function downloadName(name: string, file: string): string {
  const base = name.split(/[\\/]/).pop()?.trim() || file.split(/[\\/]/).pop() || 'file';
  const ext = /\.[A-Za-z0-9]{1,8}$/.exec(file)?.[0] ?? '';
  // A name without the file's extension gets it (a render named "cut 3" downloads as "cut 3.mp4").
  const named = ext && !base.toLowerCase().endsWith(ext.toLowerCase()) ? `${base}${ext}` : base;
  // No control character or quote: the name goes in a header.
  return [...named]
    .map((c) => (c < ' ' || c === '\x7f' || c === '"' ? '_' : c))
    .join('')
    .slice(0, 200);
}

/**
 * Links for one caller. `roots` are the server's folders a file may lie in; `base` is where the caller reaches the
 * server (scheme, host, port); a link lasts `ttlS` seconds from `now()`.
 */
export function fileLinks(opts: {
  secret: string;
  roots: string[];
  base: string;
  caller: string;
  ttlS: number;
  now?: () => number;
}): FileLinks {
  const now = opts.now ?? Date.now;
  return {
    link(file, name) {
      if (!isAbsolute(file)) return undefined;
      const root = opts.roots.findIndex((r) => {
        const rel = relative(r, file);
        return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
      });
      if (root < 0) return undefined;
      const path = relative(opts.roots[root]!, file).split(sep).join('/');
      const expires = Math.floor(now() / 1000) + opts.ttlS;
      const shownName = downloadName(name ?? '', file);
      const claim: LinkClaim = { root, path, name: shownName, caller: opts.caller, expires };
      const token = signClaim(opts.secret, 'link', claim);
      return {
        url: `${opts.base}/files/${token}/${encodeURIComponent(shownName)}`,
        expiresAt: new Date(expires * 1000).toISOString(),
      };
    },
  };
}

/**
 * What a link's token says, when its signature is the server's: `expired` when it is past its time. Undefined for
 * anything altered or not a link at all (answered alike: as a link that never existed).
 */
export function readLink(secret: string, token: string, nowMs: number): (LinkClaim & { expired: boolean }) | undefined {
  const claim = openClaim(secret, 'link', token) as Partial<LinkClaim> | undefined;
  if (!claim) return undefined;
  if (
    typeof claim.root !== 'number' ||
    typeof claim.path !== 'string' ||
    typeof claim.name !== 'string' ||
    typeof claim.caller !== 'string' ||
    typeof claim.expires !== 'number'
  )
    return undefined;
  return { ...(claim as LinkClaim), expired: nowMs >= claim.expires * 1000 };
}
