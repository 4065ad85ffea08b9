// Finished previews in an object store (jobs/preview-store.ts), against an in-memory store: the record goes last
// and once, a fetch is whole or nothing, and the fetched record names this server's own files.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PreviewCache } from '../../src/media/cache.js';
import type { ObjectStore } from '../../src/jobs/object-store.js';
import { previewStore } from '../../src/jobs/preview-store.js';

const ID = '20261126120000-0123abcd';

/** An in-memory bucket: keys to files' bytes, and the order they were put in. */
function memoryStore(): { store: ObjectStore; objects: Map<string, Buffer>; puts: string[]; lose: Set<string> } {
  const objects = new Map<string, Buffer>();
  const puts: string[] = [];
  const lose = new Set<string>();
  const store = {
    putFile: async (key: string, path: string) => {
      objects.set(key, readFileSync(path));
      puts.push(key);
    },
    getFile: async (key: string, path: string) => {
      const b = objects.get(key);
      if (!b || lose.has(key)) return false;
      await mkdir(dirname(path), { recursive: true });
      writeFileSync(path, b);
      return true;
    },
    exists: async (key: string) => objects.has(key),
    list: async (folder: string) => [...objects.keys()].filter((k) => k.startsWith(folder)),
  } as unknown as ObjectStore;
  return { store, objects, puts, lose };
}

function madePreview(): PreviewCache {
  const cache = new PreviewCache({ dir: mkdtempSync(join(tmpdir(), 'cutroom-pstore-w-')), keep: 5, maxBytes: 1e9 });
  const dir = join(cache.root, ID);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'preview.mp4'), 'video');
  writeFileSync(join(dir, 'sheet.jpg'), 'sheet');
  writeFileSync(join(dir, 'levels.json'), '{}');
  writeFileSync(join(dir, 'cut-0.mp4'), 'clip');
  writeFileSync(
    join(dir, 'preview.json'),
    JSON.stringify({ preview_id: ID, path: join(dir, 'preview.mp4'), sheet_path: join(dir, 'sheet.jpg') }),
  );
  return cache;
}

describe('previews in an object store', () => {
  it("puts a finished preview once, its record last, under its caller's folder", async () => {
    const mem = memoryStore();
    const s = previewStore(mem.store, madePreview(), 'callers/abc');
    await s.put(ID);
    expect(mem.puts.at(-1)).toBe(`callers/abc/previews/${ID}/preview.json`);
    expect(mem.puts.sort()).toEqual(
      ['cut-0.mp4', 'levels.json', 'preview.json', 'preview.mp4', 'sheet.jpg'].map(
        (f) => `callers/abc/previews/${ID}/${f}`,
      ),
    );
    mem.puts.length = 0;
    await s.put(ID);
    expect(mem.puts).toEqual([]);
  });

  it("fetches whole or not at all, and the record names the fetching server's files", async () => {
    const mem = memoryStore();
    await previewStore(mem.store, madePreview(), '').put(ID);
    const here = new PreviewCache({ dir: mkdtempSync(join(tmpdir(), 'cutroom-pstore-s-')), keep: 5, maxBytes: 1e9 });
    const s = previewStore(mem.store, here, '');
    expect(await s.fetch('20261126120000-ffffffff')).toBe(false);
    mem.lose.add(`previews/${ID}/sheet.jpg`);
    expect(await s.fetch(ID)).toBe(false);
    expect(readdirSync(here.root)).toEqual([]);
    mem.lose.clear();
    expect(await s.fetch(ID)).toBe(true);
    expect(readFileSync(join(here.root, ID, 'preview.mp4'), 'utf8')).toBe('video');
    const record = JSON.parse(readFileSync(join(here.root, ID, 'preview.json'), 'utf8')) as {
      path: string;
      sheet_path: string;
    };
    expect(record.path).toBe(join(here.root, ID, 'preview.mp4'));
    expect(record.sheet_path).toBe(join(here.root, ID, 'sheet.jpg'));
    // Fetched again (another reader, or a server sharing this dir): the copy here stays.
    expect(await s.fetch(ID)).toBe(true);
    expect(readdirSync(here.root).filter((n) => n.startsWith('.new-'))).toEqual([]);
    expect(existsSync(join(here.root, ID, 'cut-0.mp4'))).toBe(true);
  });

  it('a record not yet there is no preview (one still being put is never served half-written)', async () => {
    const mem = memoryStore();
    const made = madePreview();
    await previewStore(mem.store, made, '').put(ID);
    mem.objects.delete(`previews/${ID}/preview.json`);
    expect(
      await previewStore(
        mem.store,
        new PreviewCache({ dir: mkdtempSync(join(tmpdir(), 'cutroom-pstore-s-')), keep: 5, maxBytes: 1e9 }),
        '',
      ).fetch(ID),
    ).toBe(false);
  });
});
