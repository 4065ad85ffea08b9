import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trimExports } from '../../src/workflow/interchange.js';

describe("a hosted caller's exports", () => {
  it('keeps the newest by the time in their ids, and touches nothing else', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-exports-'));
    const ids = [
      '20261101000000-aaaaaaaa',
      '20261123101010-bbbbbbbb',
      '20261102000000-cccccccc',
      '20261123101011-dddddddd',
      '20260101000000-eeeeeeee',
    ];
    for (const id of ids) {
      mkdirSync(join(dir, id, 'media'), { recursive: true });
      writeFileSync(join(dir, id, 'cut.otio'), '{}');
    }
    // Being built by a live process, and a stranger's file: neither is an export to trim.
    mkdirSync(join(dir, `.20250101000000-ffffffff.${process.pid}.building`));
    writeFileSync(join(dir, 'README'), 'not an export');
    expect(await trimExports(dir, 2)).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([
      `.20250101000000-ffffffff.${process.pid}.building`,
      '20261123101010-bbbbbbbb',
      '20261123101011-dddddddd',
      'README',
    ]);
    expect(await trimExports(dir, 2)).toBe(0);
    expect(await trimExports(join(dir, 'absent'), 2)).toBe(0);
  });
});
