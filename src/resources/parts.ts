// Resources larger than one message. A body over the part size is read as a manifest (its mime type, size, sha256
// and every part's URI with its offset and length), and each part, `<uri>/parts/<n>`, as a blob of those bytes: no
// answer carries more than one part (3 MiB, 4 MiB in base64), half the 8 MiB cutroom sends, under the 10 MiB the
// official TypeScript client reads on stdio. A read holds one part in memory, never the whole file. The part size is
// a multiple of 3, so the parts' base64 joins as text into the whole's (the view plays it without decoding); a body
// over 1000 parts' worth gets larger parts (up to 3 MiB), so that a manifest stays short.
import { createHash } from 'node:crypto';
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type McpServer,
  type ReadResourceResult,
  type ResourceMetadata,
} from '@modelcontextprotocol/server';

export const DEFAULT_PART_BYTES = 3 * 1024 * 1024;
/**
 * The part size over HTTP: 720 KiB, 960 KiB in base64, so that a part's message stays under the 1 MiB one server-sent
 * event may carry (message-bound.ts). A configured size at or under it never grows past it.
 */
export const HTTP_PART_BYTES = 720 * 1024;
/** The most parts a manifest lists while parts may still grow: a huge body gets larger parts, not a huge manifest. */
const MAX_PARTS = 1000;
/** Where a manifest is also found: its content item's _meta. */
export const PARTS_META_KEY = 'cutroom/parts';
const PART_MIME = 'application/octet-stream';

/** The bytes a resource serves: a file read through one descriptor, or text made in memory. */
export interface Body {
  size: number;
  /** Exactly `length` bytes from `offset`. */
  read(offset: number, length: number): Promise<Buffer>;
  sha256(): Promise<string>;
  close(): Promise<void>;
}

/** What a resource's URI opens: its body, the whole's mime type, and whether it is text (else a blob). */
export interface Served {
  body: Body;
  mimeType: string;
  text: boolean;
}

export interface Manifest {
  uri: string;
  mimeType: string;
  size: number;
  sha256: string;
  parts: { uri: string; offset: number; length: number }[];
}

export function textBody(text: string): Body {
  const bytes = Buffer.from(text, 'utf8');
  return {
    size: bytes.length,
    read: async (offset, length) => bytes.subarray(offset, offset + length),
    sha256: async () => createHash('sha256').update(bytes).digest('hex'),
    close: async () => {},
  };
}

const partCount = (size: number, partBytes: number) => Math.max(1, Math.ceil(size / partBytes));
/**
 * The part size of a body of `size` bytes: the configured one, or larger (a multiple of 3, up to 3 MiB; up to
 * HTTP_PART_BYTES when the configured one is no larger) for a huge one.
 */
export const partSizeFor = (size: number, configured: number) =>
  Math.max(
    configured,
    Math.min(configured <= HTTP_PART_BYTES ? HTTP_PART_BYTES : DEFAULT_PART_BYTES, 3 * Math.ceil(size / MAX_PARTS / 3)),
  );
/** The base64 of a full part: a whole text may take as much room, escaped as a JSON string. */
const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

async function manifestOf(uri: string, served: Served, configured: number): Promise<Manifest> {
  const { size } = served.body;
  const partBytes = partSizeFor(size, configured);
  const parts = Array.from({ length: partCount(size, partBytes) }, (_, i) => ({
    uri: `${uri}/parts/${i}`,
    offset: i * partBytes,
    length: Math.min(partBytes, size - i * partBytes),
  }));
  return { uri, mimeType: served.mimeType, size, sha256: await served.body.sha256(), parts };
}

/** The whole body when it fits one part (a text also once escaped), else its manifest. */
async function wholeOrManifest(uri: string, served: Served, partBytes: number): Promise<ReadResourceResult> {
  const { body, mimeType } = served;
  if (body.size <= partBytes) {
    const bytes = await body.read(0, body.size);
    if (!served.text) return { contents: [{ uri, mimeType, blob: bytes.toString('base64') }] };
    const text = bytes.toString('utf8');
    if (Buffer.byteLength(JSON.stringify(text)) <= base64Length(partBytes))
      return { contents: [{ uri, mimeType, text }] };
  }
  const manifest = await manifestOf(uri, served, partBytes);
  const note = `${manifest.size} bytes, more than one message carries: read each part's uri (a blob of its bytes) and join them in order.`;
  return {
    contents: [
      {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({ ...manifest, note }),
        _meta: { [PARTS_META_KEY]: manifest },
      },
    ],
  };
}

async function partOf(
  uri: string,
  whole: string,
  served: Served,
  index: number,
  configured: number,
): Promise<ReadResourceResult> {
  const { body } = served;
  const partBytes = partSizeFor(body.size, configured);
  const count = partCount(body.size, partBytes);
  if (index >= count)
    throw new ResourceNotFoundError(
      uri,
      `${whole} has ${count} part${count === 1 ? '' : 's'} (0-${count - 1}); read it for its manifest`,
    );
  const offset = index * partBytes;
  const length = Math.min(partBytes, body.size - offset);
  return { contents: [{ uri, mimeType: PART_MIME, blob: (await body.read(offset, length)).toString('base64') }] };
}

/** How each server shows a text body (over HTTP: without the server's paths), set once per server. */
const shownText = new WeakMap<McpServer, (text: string) => string>();
/** Text bodies this server serves, whole or in parts, are shown through `shown` first (so parts join to it). */
export function showTextBodies(server: McpServer, shown: (text: string) => string): void {
  shownText.set(server, shown);
}

/** The text as shown, read whole (a text body is a timeline, a transcript or JSON); the body unchanged when it is. */
async function shownBody(served: Served, shown: ((text: string) => string) | undefined): Promise<Served> {
  if (!shown || !served.text) return served;
  const text = (await served.body.read(0, served.body.size)).toString('utf8');
  const after = shown(text);
  if (after === text) return served;
  await served.body.close();
  return { ...served, body: textBody(after) };
}

type Variables = Record<string, string | string[]>;
type Callbacks = ConstructorParameters<typeof ResourceTemplate>[1];

/**
 * Registers `template` and, beside it, `template/parts/{part}`: both open the body with `open` (which throws the
 * resource's own errors for a bad id or a missing thing), the first answering whole or with a manifest.
 */
export function registerParted(
  server: McpServer,
  name: string,
  template: string,
  callbacks: Callbacks,
  metadata: ResourceMetadata & { title: string },
  partBytes: number,
  open: (uri: URL, variables: Variables) => Promise<Served>,
): void {
  const serve = async (uri: URL, variables: Variables, answer: (served: Served) => Promise<ReadResourceResult>) => {
    const served = await shownBody(await open(uri, variables), shownText.get(server));
    try {
      return await answer(served);
    } finally {
      await served.body.close();
    }
  };
  server.registerResource(name, new ResourceTemplate(template, callbacks), metadata, (uri, variables) =>
    serve(uri, variables, (s) => wholeOrManifest(uri.href, s, partBytes)),
  );
  server.registerResource(
    `${name}-part`,
    new ResourceTemplate(`${template}/parts/{part}`, {
      list: undefined,
      ...(callbacks.complete ? { complete: callbacks.complete } : {}),
    }),
    {
      title: `${metadata.title} (a part)`,
      description: 'A part of a resource too large for one message, as its manifest names it: a blob of those bytes.',
    },
    (uri, variables) => {
      const part = String(variables.part ?? '');
      if (!/^\d{1,9}$/.test(part))
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `the part must be a number, as the manifest names it`);
      const whole = uri.href.replace(/\/parts\/[^/]*$/, '');
      return serve(uri, variables, (s) => partOf(uri.href, whole, s, Number(part), partBytes));
    },
  );
}
