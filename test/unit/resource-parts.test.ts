// Resources in parts (resources/parts.ts), read by the SDK's client from an McpServer in the same process: a body
// that fits is served whole, a larger one as a manifest whose parts join into it, and the part sizes stay bounded.
import { createHash } from 'node:crypto';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_PART_BYTES,
  HTTP_PART_BYTES,
  PARTS_META_KEY,
  partSizeFor,
  registerParted,
  textBody,
  type Body,
  type Manifest,
} from '../../src/resources/parts.js';

const PART = 3072;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

/** A server with one parted template, `test://things/{name}`, serving `bodies[name]`; counts the bodies closed. */
async function serve(
  bodies: Record<string, { body: () => Body; text: boolean }>,
  partBytes = PART,
): Promise<{ client: Client; closed: () => number }> {
  const server = new McpServer({ name: 't', version: '1' });
  let closed = 0;
  registerParted(
    server,
    'thing',
    'test://things/{name}',
    { list: undefined },
    { title: 'Thing' },
    partBytes,
    async (uri, variables) => {
      const entry = bodies[String(variables.name)];
      if (!entry) throw new ResourceNotFoundError(uri.href, 'no such thing');
      const body = entry.body();
      return {
        body: { ...body, close: async () => void closed++ },
        mimeType: entry.text ? 'text/plain' : 'video/mp4',
        text: entry.text,
      };
    },
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  client = new Client({ name: 'c', version: '1' });
  await client.connect(a);
  return { client, closed: () => closed };
}

const bytes = (n: number, seed = 7) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * 131 + seed * 17 + (i >> 7)) & 0xff));
/** A binary Body over `buf` (textBody is for text; this one need not be valid UTF-8). */
const binary = (buf: Buffer): Body => ({
  size: buf.length,
  read: async (o, l) => buf.subarray(o, o + l),
  sha256: async () => createHash('sha256').update(buf).digest('hex'),
  close: async () => {},
});

describe('a resource served in parts', () => {
  it('serves a body of at most one part whole: a blob, or text', async () => {
    const blob = bytes(PART);
    const { client } = await serve({
      small: { body: () => binary(blob), text: false },
      note: { body: () => textBody('héllo'), text: true },
    });
    const r = await client.readResource({ uri: 'test://things/small' });
    expect(r.contents).toEqual([{ uri: 'test://things/small', mimeType: 'video/mp4', blob: blob.toString('base64') }]);
    expect((await client.readResource({ uri: 'test://things/note' })).contents).toEqual([
      { uri: 'test://things/note', mimeType: 'text/plain', text: 'héllo' },
    ]);
  });

  it('serves a larger body as a manifest whose parts, read and joined, are the body; each part a multiple of 3 bytes but the last', async () => {
    const blob = bytes(PART * 3 + 1000);
    const { client, closed } = await serve({ big: { body: () => binary(blob), text: false } });
    const r = await client.readResource({ uri: 'test://things/big' });
    const item = r.contents[0] as { mimeType: string; text: string; _meta: Record<string, Manifest> };
    expect(r.contents).toHaveLength(1);
    expect(item.mimeType).toBe('application/json');
    const manifest = item._meta[PARTS_META_KEY]!;
    expect(JSON.parse(item.text)).toMatchObject(manifest);
    expect(manifest).toMatchObject({
      uri: 'test://things/big',
      mimeType: 'video/mp4',
      size: blob.length,
      sha256: createHash('sha256').update(blob).digest('hex'),
    });
    expect(manifest.parts.map((p) => [p.uri, p.offset, p.length])).toEqual(
      [0, 1, 2, 3].map((i) => [`test://things/big/parts/${i}`, i * PART, i < 3 ? PART : 1000]),
    );
    const blobs: string[] = [];
    for (const p of manifest.parts) {
      const part = (await client.readResource({ uri: p.uri })).contents[0] as {
        uri: string;
        mimeType: string;
        blob: string;
      };
      expect(part).toMatchObject({ uri: p.uri, mimeType: 'application/octet-stream' });
      expect(Buffer.from(part.blob, 'base64')).toEqual(blob.subarray(p.offset, p.offset + p.length));
      blobs.push(part.blob);
    }
    // The parts' base64, joined as text, is the body's.
    expect(blobs.join('')).toBe(blob.toString('base64'));
    expect(closed()).toBe(5);
  });

  it('serves text in parts of bytes, also when it fits one part by size but not once escaped as JSON', async () => {
    const quotes = '"'.repeat(PART);
    const long = 'mot ünïcode '.repeat(1000);
    const { client } = await serve({
      quotes: { body: () => textBody(quotes), text: true },
      long: { body: () => textBody(long), text: true },
    });
    for (const [name, text] of [
      ['quotes', quotes],
      ['long', long],
    ] as const) {
      const m = (
        (await client.readResource({ uri: `test://things/${name}` })).contents[0] as { _meta: Record<string, Manifest> }
      )._meta[PARTS_META_KEY]!;
      expect(m.size).toBe(Buffer.byteLength(text));
      const parts = await Promise.all(
        m.parts.map(async (p) =>
          Buffer.from(((await client.readResource({ uri: p.uri })).contents[0] as { blob: string }).blob, 'base64'),
        ),
      );
      expect(Buffer.concat(parts).toString('utf8')).toBe(text);
    }
  });

  it('refuses a part past the last, and a part that is not a number, naming what exists', async () => {
    const { client } = await serve({ big: { body: () => binary(bytes(PART + 1)), text: false } });
    await expect(client.readResource({ uri: 'test://things/big/parts/2' })).rejects.toThrow(
      /test:\/\/things\/big has 2 parts \(0-1\); read it for its manifest/,
    );
    await expect(client.readResource({ uri: 'test://things/big/parts/x' })).rejects.toThrow(
      /the part must be a number/,
    );
    await expect(client.readResource({ uri: 'test://things/nothing/parts/0' })).rejects.toThrow(/no such thing/);
  });
});

describe('partSizeFor', () => {
  it('keeps the configured size up to 1000 parts, then grows by multiples of 3 up to 3 MiB (720 KiB over HTTP)', () => {
    expect(partSizeFor(1000 * PART, PART)).toBe(PART);
    const grown = partSizeFor(1000 * PART + 1, PART);
    expect(grown % 3).toBe(0);
    expect(Math.ceil((1000 * PART + 1) / grown)).toBeLessThanOrEqual(1000);
    // A configured size within HTTP's (every part's event under 1 MiB) never grows past it; a larger one grows to 3 MiB.
    expect(partSizeFor(50e9, PART)).toBe(HTTP_PART_BYTES);
    expect(partSizeFor(50e9, HTTP_PART_BYTES + 3)).toBe(DEFAULT_PART_BYTES);
    expect(partSizeFor(10, DEFAULT_PART_BYTES)).toBe(DEFAULT_PART_BYTES);
  });
});
