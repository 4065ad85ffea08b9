// What a caller over HTTP is shown of the server's own files. Such a caller (on another machine, or a browser page)
// cannot open a path on the server, and a path says what the server's folders are: every path in the server's cache
// or data folder, plain or as a file: URL, is shown as what the caller can use instead. A preview's or an export's
// file becomes its cutroom:// resource URI (resources/read serves it); any other file of the server's (an imported
// asset's copy, a local render) is named by its file name only, and a `url` or `download_url` field that held such
// a file is left out (the caller could not fetch it). Paths the caller named in the folders they import from are
// theirs, and are left as they are. server.ts applies it to every tool result and resource read over HTTP. With
// signed links (file-links.ts), a file: link to a file of the server's (a local render's, an asset's) becomes a
// signed, expiring https link the caller can hand to a person, and its object says when it expires.
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FileLinks } from './file-links.js';

/** A path's characters, up to what ends it in text, JSON or XML. */
const PATH_TAIL = String.raw`(?:/[^\s"'<>\\)\]]*)?`;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export interface RemotePaths {
  /** The text with every server path in it replaced. */
  text(s: string): string;
  /** A value (a result, structured content, resource contents) with every string in it replaced. */
  value<T>(v: T): T;
}

/** What stands for one path of the server's, found in `folders`. */
function shown(path: string): string {
  const plain = path.startsWith('file:') ? safeDecode(path.replace(/^file:\/\//, '')) : path;
  const preview = /\/previews\/([\w-]+)\/(preview\.mp4|sheet\.jpg|preview\.json)$/.exec(plain);
  if (preview) return `cutroom://previews/${preview[1]}/${preview[2]}`;
  const exported = /\/exports\/([\w-]+)\/([^/]+)$/.exec(plain);
  if (exported) return `cutroom://exports/${exported[1]}/${exported[2]}`;
  return plain.split('/').filter(Boolean).pop() ?? '';
}
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The path a file: URL names, if it is one. */
function filePath(url: string): string | undefined {
  try {
    return url.startsWith('file:') ? fileURLToPath(url) : undefined;
  } catch {
    return undefined;
  }
}

export function remotePaths(folders: string[], links?: FileLinks): RemotePaths {
  // Each as given and as the paths made in it spell it (join normalises: no "//", "/./" or "/../").
  const roots = [
    ...new Set(
      folders.filter((f) => f.startsWith('/') && f.length > 1).flatMap((f) => [f.replace(/\/+$/, ''), resolve(f)]),
    ),
  ].filter((r) => r.length > 1);
  // Longest first: a folder inside another is matched whole. Each as a file: URL (percent-encoded) and as a path.
  const forms = roots.flatMap((r) => [pathToFileURL(r).href, `file://${r}`, r]).sort((a, b) => b.length - a.length);
  const pattern = forms.length
    ? new RegExp(`(?:${forms.map(escape).join('|')})(?=[/\\s"'<>\\\\)\\]]|$)${PATH_TAIL}`, 'g')
    : undefined;
  // In text, a file: link of the server's becomes its signed link; a plain path, what stands for it.
  const linked = (m: string) => {
    const path = m.startsWith('file:') ? filePath(m) : undefined;
    return (path && links?.link(path)?.url) || shown(m);
  };
  const text = (s: string) => (pattern && s.length ? s.replace(pattern, linked) : s);
  const holds = (s: string) => !!pattern && new RegExp(pattern.source).test(s);
  const value = <T>(v: T): T => {
    if (typeof v === 'string') return text(v) as T;
    if (Array.isArray(v)) return v.map((x) => value(x)) as T;
    if (v && typeof v === 'object') {
      // Bytes (an image's, a resource's blob) name no path, and may be megabytes: passed as they are.
      const type = (v as { type?: unknown }).type;
      if (type === 'image' || type === 'audio') return v;
      const out: Record<string, unknown> = {};
      const record = v as Record<string, unknown>;
      for (const [k, x] of Object.entries(v)) {
        if (k === 'blob') {
          out[k] = x;
          continue;
        }
        // A link to a file of the server's: its signed link (named as the asset is), or, without signed links, left
        // out rather than shown as a name (the caller could not fetch it).
        if ((k === 'url' || k === 'download_url') && typeof x === 'string' && x.startsWith('file:') && holds(x)) {
          const path = filePath(x);
          const signed = path
            ? links?.link(path, typeof record.name === 'string' ? record.name : undefined)
            : undefined;
          if (!signed) continue;
          out[k] = signed.url;
          // An asset's or a render's status: both say when their links expire.
          if ('status' in record) out.links_expire_at = signed.expiresAt;
          continue;
        }
        // A preview's or an export's file: its URI, and (with signed links) a link a person can open.
        if (
          k === 'path' &&
          links &&
          typeof x === 'string' &&
          (holds(x) || x.startsWith('cutroom://')) &&
          ('preview_id' in record || 'export_id' in record)
        ) {
          const signed = links.link(filePath(x) ?? x);
          if (signed) {
            out.link = signed.url;
            out.links_expire_at = signed.expiresAt;
          }
        }
        out[k] = value(x);
      }
      return out as T;
    }
    return v;
  };
  return { text, value };
}
