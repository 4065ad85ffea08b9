// How a media source becomes ffmpeg/ffprobe input arguments under the safety rules of DESIGN.md: only the
// protocols needed, only whitelisted demuxers (an ".mp4" URL serving an HLS playlist must not make ffmpeg
// fetch other URLs), a read timeout on network input, and no redirects. Only validated URLs and cutroom's own paths get
// here.
import { fileURLToPath } from 'node:url';

export type MediaSource = { kind: 'url'; url: string } | { kind: 'file'; path: string };

/**
 * Demuxers for the video, audio and image files a project holds; no playlists, no concat, no lavfi. Images are
 * read by the demuxers that recognise them by content: image2 is left out, because it reads a file name as a
 * pattern (`img%03d.png` is a sequence, `*` a glob), and a name must only ever name one file.
 */
export const DEMUXERS = [
  'mov',
  'mp4',
  'm4a',
  '3gp',
  'matroska',
  'webm',
  'avi',
  'mpegts',
  'flv',
  'ogg',
  'mp3',
  'wav',
  'aac',
  'flac',
  'png_pipe',
  'jpeg_pipe',
  'webp_pipe',
  'gif',
  'bmp_pipe',
  'tiff_pipe',
].join(',');

const NETWORK_READ_TIMEOUT_US = 15_000_000;

/**
 * Turns an asset's url into a source. Only http(s) is read from a service; a file: link is honoured only when the
 * links come from cutroom's own local backend (`allowFile`), so a hostile service cannot point ffmpeg at local files.
 */
export function sourceFromUrl(
  url: string | null | undefined,
  opts: { allowFile: boolean },
): MediaSource | { error: string } {
  if (!url) return { error: 'the asset has no url' };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { error: 'the asset url is not a URL' };
  }
  if (u.protocol === 'file:') {
    return opts.allowFile
      ? { kind: 'file', path: fileURLToPath(u) }
      : {
          error: 'the asset url is a file: link, which cutroom reads only from its local backend, never from a service',
        };
  }
  if (u.protocol === 'http:' || u.protocol === 'https:') return { kind: 'url', url: u.href };
  return { error: `the asset url uses ${u.protocol}, which cutroom does not read` };
}

/**
 * ffmpeg's arguments to decode `seconds` of a source's first audio stream from `from` as mono samples at `rate`
 * (16-bit, or 32-bit float), written to `out` (a file: path, or stdout).
 */
export function monoSoundArgs(
  src: MediaSource,
  span: { from: number; seconds: number },
  rate: number,
  opts: { sample?: 's16le' | 'f32le'; out?: string } = {},
): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    ...(span.from > 0 ? ['-ss', span.from.toFixed(3)] : []),
    '-t',
    span.seconds.toFixed(3),
    ...inputArgs(src),
    '-map',
    '0:a:0',
    '-ac',
    '1',
    '-ar',
    String(rate),
    '-f',
    opts.sample ?? 's16le',
    ...(opts.out ? ['-y', opts.out] : ['pipe:1']),
  ];
}

/** Input options to place before `-i`, then the input itself. */
export function inputArgs(src: MediaSource): string[] {
  if (src.kind === 'file') {
    // The explicit file: prefix keeps a colon in a file name from being read as a protocol.
    return ['-protocol_whitelist', 'file', '-format_whitelist', DEMUXERS, '-i', `file:${src.path}`];
  }
  const protocols = src.url.startsWith('https:') ? 'https,tls,tcp' : 'http,tcp';
  // No redirect is followed: a link is read only from the host it names (a 302 could lead anywhere).
  return [
    '-protocol_whitelist',
    protocols,
    '-format_whitelist',
    DEMUXERS,
    '-rw_timeout',
    String(NETWORK_READ_TIMEOUT_US),
    '-max_redirects',
    '0',
    '-i',
    src.url,
  ];
}
