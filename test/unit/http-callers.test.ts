import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Shared } from '../../src/assemble.js';
import { loadConfig } from '../../src/config.js';
import { Callers, callerId } from '../../src/http/callers.js';
import { redact, secretCount, silentLogger } from '../../src/log.js';
import { Limiter } from '../../src/media/probe.js';

function shared(): Shared {
  const config = loadConfig({ VJ_BACKEND: 'remote', VJ_API_URL: 'http://127.0.0.1:9', CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-callers-')) }, ['--http']);
  return { config, logger: silentLogger, media: {}, limiter: new Limiter(4) };
}

const settle = () => new Promise((r) => setTimeout(r, 50));

describe('caller contexts of a hosted server', () => {
  it('keeps one context per key, and the same one for the same key', () => {
    const callers = new Callers(shared(), 4);
    const a = callers.forKey('key-alice-0123456789');
    expect(callers.forKey('key-alice-0123456789')).toBe(a);
    expect(callers.forKey('key-bob-0123456789')).not.toBe(a);
    expect(callerId('key-alice-0123456789')).toMatch(/^[0-9a-f]{32}$/);
    expect(callerId('key-alice-0123456789')).not.toBe(callerId('key-bob-0123456789'));
  });

  it('forgets the keys of evicted callers, so a stream of made-up keys cannot grow memory', async () => {
    const s = shared();
    const before = secretCount();
    const callers = new Callers(s, 4);
    for (let i = 0; i < 500; i++) callers.forKey(`made-up-key-${i}-abcdef`);
    await settle();
    // The four live callers' keys are still kept out of logs; the other 496 are gone.
    expect(secretCount() - before).toBe(4);
    expect(redact('made-up-key-499-abcdef failed')).toBe('[redacted] failed');
    expect(redact('made-up-key-3-abcdef failed')).toBe('made-up-key-3-abcdef failed');
    // Nothing was written to disk for callers who made no media.
    expect(readdirSync(s.config.cacheDir)).toEqual([]);
    await callers.close();
    expect(secretCount()).toBe(before);
  });

  it('a key two contexts share stays secret until both are gone', async () => {
    const s = shared();
    const before = secretCount();
    const one = new Callers(s, 2);
    const two = new Callers(s, 2);
    one.forKey('shared-key-0123456789');
    two.forKey('shared-key-0123456789');
    await one.close();
    expect(redact('shared-key-0123456789')).toBe('[redacted]');
    await two.close();
    expect(secretCount()).toBe(before);
  });
});
