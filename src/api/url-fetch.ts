// Fetching a URL a caller gives (import_media {url}) as a hosted fetcher must (DESIGN.md, safety rules): https only
// (http where the operator allows it); the name resolved once, every address it gives checked, and the connection made
// to that address (undici's connect is handed a lookup that answers with it alone, so no second resolution can
// point elsewhere); private, loopback, link-local, shared, multicast, reserved and cloud-metadata addresses refused;
// every redirect checked again the same way (at most MAX_REDIRECTS); the size capped (declared and counted), the whole
// fetch and every pause in the body timed; a web page or a playlist refused by its type or first bytes. What arrives
// is written to a file cutroom names; the caller probes it before it becomes an asset.
import { Resolver, lookup } from 'node:dns/promises';
import { open, rm } from 'node:fs/promises';
import { BlockList, isIP } from 'node:net';
import { DownloadError, shown } from './download.js';

export interface FetchRules {
  /** http:// too (CUTROOM_FETCH_ALLOW_HTTP). */
  allowHttp: boolean;
  /** Addresses the operator lets through although the rules refuse them (CUTROOM_FETCH_ALLOW_ADDRESSES: CIDRs). */
  allowAddresses: string[];
  /** DNS servers names are resolved through instead of the system's resolver (CUTROOM_FETCH_DNS_SERVERS). */
  dnsServers?: string[];
  maxBytes: number;
  /** The whole fetch, redirects included. */
  timeoutMs: number;
  /** The longest pause between two pieces of the body (or before the headers). */
  stallMs: number;
}

export const MAX_REDIRECTS = 5;

/** Addresses no fetch may reach: RFC 6890's special-purpose ranges and the cloud metadata services. */
const FORBIDDEN: [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 3, 'ipv4'],
  ['::', 127, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001::', 23, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];
const forbidden = new BlockList();
for (const [net, prefix, family] of FORBIDDEN) forbidden.addSubnet(net, prefix, family);

/** An IPv4 address inside an IPv6 one (::ffff:a.b.c.d, ::a.b.c.d) as itself. */
function plainAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const a = parseInt(hex[1]!, 16);
    const b = parseInt(hex[2]!, 16);
    return { address: `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`, family: 'ipv4' };
  }
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** The operator's exceptions, as a BlockList (a list of what is let through). */
export function allowList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, bits] = c.split('/') as [string, string | undefined];
    const family = isIP(net) === 6 ? 'ipv6' : 'ipv4';
    const whole = family === 'ipv6' ? 128 : 32;
    list.addSubnet(net, bits === undefined ? whole : Number(bits), family);
  }
  return list;
}

/** Whether an address may be fetched from: not in a forbidden range, or let through by the operator. */
export function addressAllowed(address: string, allowed: BlockList): boolean {
  const a = plainAddress(address);
  if (allowed.check(a.address, a.family)) return true;
  return !forbidden.check(a.address, a.family);
}

/** A name's addresses from the operator's DNS servers (IPv4 and IPv6 asked together; none is an empty list). */
async function resolveThrough(servers: string[], host: string): Promise<{ address: string; family: 4 | 6 }[]> {
  const resolver = new Resolver({ timeout: 5000, tries: 2 });
  resolver.setServers(servers);
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  if (v4.status === 'rejected' && v6.status === 'rejected') throw v4.reason;
  return [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
  ];
}

/** The one address a URL's host is fetched from, or why it may not be. */
async function pinnedAddress(
  url: URL,
  allowed: BlockList,
  dnsServers: string[] | undefined,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const notFound = () => {
    throw new DownloadError(`${shown(url.href)}: its host name does not resolve`);
  };
  let found: { address: string; family: number }[];
  if (isIP(host)) found = [{ address: host, family: isIP(host) }];
  else if (dnsServers?.length) found = await resolveThrough(dnsServers, host).catch(notFound);
  else found = await lookup(host, { all: true, verbatim: true }).catch(notFound);
  if (!found.length) throw new DownloadError(`${shown(url.href)}: its host name does not resolve`);
  // Any address refused refuses the name: a name that also points inward is not fetched from at all.
  const refused = found.find((a) => !addressAllowed(a.address, allowed));
  if (refused)
    throw new DownloadError(
      `${shown(url.href)} points at a private, loopback, link-local or metadata address: cutroom fetches only from the public internet`,
    );
  return found[0]! as { address: string; family: 4 | 6 };
}

const MEDIA_TYPE = /^(video|audio|image)\/|^application\/(octet-stream|mp4|x-matroska|ogg|mxf)|^binary\//i;

/** Why an answer is not media by its type or first bytes, or undefined. */
function notMediaAnswer(contentType: string, head: Buffer): string | undefined {
  const text = head.subarray(0, 64).toString('latin1').trimStart().toLowerCase();
  if (/mpegurl/i.test(contentType) || text.startsWith('#extm3u')) return 'a playlist (HLS), not a media file';
  if (text.startsWith('<!doctype') || text.startsWith('<html') || text.startsWith('<?xml'))
    return 'a web page, not a media file';
  if (contentType && !MEDIA_TYPE.test(contentType))
    return `${contentType.split(';')[0]!.trim()}, not a media type (video/, audio/ or image/)`;
  return undefined;
}

/** The file name a URL's path ends with, for the asset's name; `media` when it names none. */
export function nameFromUrl(url: URL): string {
  const last = decodeURIComponent(url.pathname.split('/').pop() ?? '').replace(/[\\/]/g, '_');
  return last.trim() || 'media';
}

/**
 * Fetches `href` into `dest` under the rules; returns the final URL's name and the bytes written. Every failure is a
 * DownloadError that says what was wrong, without the URL's query (a signature) or login.
 */
export async function fetchUrl(
  href: string,
  dest: string,
  rules: FetchRules,
  opts: { signal?: AbortSignal; onProgress?: (bytes: number, total?: number) => void } = {},
): Promise<{ name: string; bytes: number }> {
  const { Agent, request } = await import('undici');
  const allowed = allowList(rules.allowAddresses);
  const deadline = AbortSignal.timeout(rules.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new DownloadError('url is not a URL: give an https:// link to a media file');
  }
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp))
      throw new DownloadError(
        `${shown(url.href)}: cutroom fetches https:// links only${url.protocol === 'http:' ? ' (this server does not allow http://)' : ''}`,
      );
    if (url.username || url.password) throw new DownloadError(`${shown(url.href)}: a link with a login is not fetched`);
    const pinned = await pinnedAddress(url, allowed, rules.dnsServers);
    // The connection goes to the address checked above, whatever the name would resolve to now.
    const agent = new Agent({
      connect: {
        // (Node asks for every address when it may try several families, else for one.)
        lookup: (_host: string, o: { all?: boolean }, cb: (e: null, a: unknown, f?: number) => void) =>
          o?.all
            ? cb(null, [{ address: pinned.address, family: pinned.family }])
            : cb(null, pinned.address, pinned.family),
      } as never,
      headersTimeout: rules.stallMs,
      bodyTimeout: rules.stallMs,
    });
    try {
      let res;
      try {
        res = await request(url, {
          method: 'GET',
          dispatcher: agent,
          signal,
          headers: { 'user-agent': 'cutroom', accept: 'video/*, audio/*, image/*, */*;q=0.1' },
        });
      } catch (err) {
        throw failure(err, url, rules, signal);
      }
      const status = res.statusCode;
      if (status >= 300 && status < 400 && res.headers.location) {
        await res.body.dump().catch(() => {});
        if (hop >= MAX_REDIRECTS) throw new DownloadError(`${shown(href)} redirects more than ${MAX_REDIRECTS} times`);
        url = new URL(String(res.headers.location), url);
        continue;
      }
      if (status !== 200) {
        await res.body.dump().catch(() => {});
        throw new DownloadError(`${shown(url.href)} answered ${status}`);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > rules.maxBytes) {
        await res.body.dump().catch(() => {});
        throw new DownloadError(
          `${shown(url.href)} is ${mb(declared)}, over the ${mb(rules.maxBytes)} a fetch may bring`,
        );
      }
      const type = String(res.headers['content-type'] ?? '');
      const fh = await open(dest, 'wx');
      let bytes = 0;
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (bytes === 0) {
            const why = notMediaAnswer(type, chunk);
            if (why) throw new DownloadError(`${shown(url.href)} answered with ${why}`);
          }
          bytes += chunk.length;
          if (bytes > rules.maxBytes)
            throw new DownloadError(`${shown(url.href)} sent more than the ${mb(rules.maxBytes)} a fetch may bring`);
          await fh.write(chunk);
          opts.onProgress?.(bytes, Number.isFinite(declared) ? declared : undefined);
        }
      } catch (err) {
        await fh.close().catch(() => {});
        await rm(dest, { force: true });
        res.body.destroy();
        throw failure(err, url, rules, signal);
      }
      await fh.close();
      if (bytes === 0) {
        await rm(dest, { force: true });
        throw new DownloadError(`${shown(url.href)} answered with no bytes`);
      }
      return { name: nameFromUrl(url), bytes };
    } finally {
      void agent.close().catch(() => {});
    }
  }
}

const mb = (n: number) => `${Math.round(n / 1e5) / 10} MB`;

function failure(err: unknown, url: URL, rules: FetchRules, signal: AbortSignal): Error {
  if (err instanceof DownloadError) return err;
  const code = (err as { code?: string }).code;
  if (signal.aborted && (signal.reason as Error)?.name === 'TimeoutError')
    return new DownloadError(`${shown(url.href)} took over ${Math.round(rules.timeoutMs / 1000)} s: too slow to fetch`);
  if (signal.aborted) return err as Error;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return new DownloadError(`${shown(url.href)} paused over ${Math.round(rules.stallMs / 1000)} s: too slow to fetch`);
  return new DownloadError(`${shown(url.href)} could not be fetched (${(err as Error).message})`);
}
