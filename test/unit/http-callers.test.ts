import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Shared } from '../../src/assemble.js';
import { loadConfig } from '../../src/config.js';
import { Callers, callerId, callerLogger } from '../../src/http/callers.js';
import { createLogger, redact, silentLogger } from '../../src/log.js';
import { Limiter } from '../../src/media/probe.js';

function shared(): Shared {
  const config = loadConfig(
    {
      VJ_BACKEND: 'remote',
      VJ_API_URL: 'http://127.0.0.1:9',
      CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-callers-')),
    },
    ['--http'],
  );
  return { config, logger: silentLogger, media: {}, limiter: new Limiter(4) };
}

describe('caller contexts of a hosted server', () => {
  it('keeps one context per key, and the same one for the same key', () => {
    const callers = new Callers(shared(), 4);
    const a = callers.forKey('key-alice-0123456789');
    expect(callers.forKey('key-alice-0123456789')).toBe(a);
    expect(callers.forKey('key-bob-0123456789')).not.toBe(a);
    expect(callerId('key-alice-0123456789')).toMatch(/^[0-9a-f]{32}$/);
    expect(callerId('key-alice-0123456789')).not.toBe(callerId('key-bob-0123456789'));
  });

  it('keeps at most `max` idle contexts, whatever the number of keys, and writes nothing for them', () => {
    const s = shared();
    const callers = new Callers(s, 4);
    for (let i = 0; i < 500; i++) callers.acquire(`made-up-key-${i}-abcdef`)();
    expect(callers.size).toBe(4);
    expect(readdirSync(s.config.cacheDir)).toEqual([]);
  });

  it('never closes a context in use: it outlives a flood of other keys and goes once released', () => {
    const callers = new Callers(shared(), 4);
    const release = callers.acquire('busy-key-0123456789');
    const before = callers.forKey('busy-key-0123456789');
    for (let i = 0; i < 100; i++) callers.acquire(`made-up-key-${i}-abcdef`)();
    expect(callers.forKey('busy-key-0123456789')).toBe(before);
    release();
    release(); // twice is once
    for (let i = 100; i < 200; i++) callers.acquire(`made-up-key-${i}-abcdef`)();
    expect(callers.size).toBe(4);
    expect(callers.forKey('busy-key-0123456789')).not.toBe(before);
  });

  it("hides a caller's key in their own lines and results only, never in other callers' lines", () => {
    const lines: string[] = [];
    const server = createLogger('debug', (l) => lines.push(l));
    // A caller who sends "127.0.0.1" as their key: their lines lose it, nobody else's do.
    const prankster = callerLogger(server, '127.0.0.1');
    const other = callerLogger(server, 'key-bob-0123456789');
    prankster.warn('rejected key 127.0.0.1');
    other.info('GET http://127.0.0.1:8000/projects -> 200 for key-bob-0123456789');
    expect(lines).toEqual([
      'cutroom warn: rejected key [redacted]\n',
      'cutroom info: GET http://127.0.0.1:8000/projects -> 200 for [redacted]\n',
    ]);
    expect(other.hide!('the key key-bob-0123456789 was refused')).toBe('the key [redacted] was refused');
    // The process-wide filter does not learn callers' keys.
    expect(redact('127.0.0.1 key-bob-0123456789')).toBe('127.0.0.1 key-bob-0123456789');
  });

  it("shows a caller no path of the server's folders in what they are told, while the log keeps them", () => {
    const lines: string[] = [];
    const server = createLogger('debug', (l) => lines.push(l));
    const caller = callerLogger(server, 'key-carol-0123456789', [
      '/var/cache/cutroom/callers/abc',
      '/var/cache/cutroom',
    ]);
    const message =
      'the disk holding the cache dir (CUTROOM_CACHE_DIR=/var/cache/cutroom/callers/abc) is full; also /var/cache/cutroom/exports for key-carol-0123456789';
    expect(caller.outward!(message)).toBe(
      "the disk holding the cache dir (CUTROOM_CACHE_DIR=(the server's cache)) is full; also (the server's cache)/exports for [redacted]",
    );
    caller.warn(message);
    expect(lines[0]).toContain('/var/cache/cutroom/callers/abc');
    expect(lines[0]).not.toContain('key-carol');
  });
});
