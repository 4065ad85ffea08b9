// The output presets are declared once (OUTPUT_PRESETS in edit/model.ts): what compose_edit and import_edit resolve,
// what the tool description names and what docs/editing.md lists all follow from that table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolvePreset } from '../../src/edit/compose.js';
import { DEFAULT_RESOLUTION, LISTED_OUTPUT_PRESETS, OUTPUT_PRESETS } from '../../src/edit/model.js';
import { EditInputShape } from '../../src/workflow/edit-input.js';

describe('output presets', () => {
  it('every name and alias resolves to its size, in any case and with spaces around', () => {
    for (const preset of OUTPUT_PRESETS)
      for (const name of preset.names) {
        expect(resolvePreset(name)).toBe(preset.size);
        expect(resolvePreset(` ${name.toUpperCase()} `)).toBe(preset.size);
      }
    expect(resolvePreset('portrait')).toBe(resolvePreset('vertical'));
    expect(resolvePreset(undefined)).toBe(DEFAULT_RESOLUTION);
    expect(resolvePreset('1000x500')).toBe('1000x500');
  });

  it('no name means two sizes, and every size is WxH with even sides', () => {
    const names = OUTPUT_PRESETS.flatMap((p) => p.names);
    expect(new Set(names).size).toBe(names.length);
    for (const preset of OUTPUT_PRESETS) expect(preset.size).toMatch(/^\d*[02468]x\d*[02468]$/);
  });

  it("the resolution argument's description names the listed presets, from the table", () => {
    expect(LISTED_OUTPUT_PRESETS).toBe('1080p, 720p, vertical, square, 4k');
    expect(EditInputShape.resolution.description).toBe(
      `WxH or ${LISTED_OUTPUT_PRESETS}; default ${DEFAULT_RESOLUTION}`,
    );
  });

  it('docs/editing.md lists every preset with its size and aliases', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/editing.md'), 'utf8');
    const rows = new Map(
      [...doc.matchAll(/^\| `([^`]+)` \| (\d+x\d+) \| (.*?) ?\|$/gm)].map((m) => [m[1], { size: m[2], also: m[3] }]),
    );
    expect([...rows.keys()]).toEqual(OUTPUT_PRESETS.map((p) => p.names[0]));
    for (const preset of OUTPUT_PRESETS) {
      const row = rows.get(preset.names[0]);
      expect(row?.size, preset.names[0]).toBe(preset.size);
      expect(row?.also.match(/`[^`]+`/g)?.map((a) => a.slice(1, -1)) ?? [], preset.names[0]).toEqual(
        preset.names.slice(1),
      );
    }
  });
});
