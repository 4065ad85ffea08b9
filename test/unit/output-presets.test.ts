// The output presets are declared once (OUTPUT_PRESETS in edit/model.ts): what compose_edit and import_edit resolve,
// what the tool description names and what docs/editing.md lists all follow from that table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolvePreset, sourceOutput } from '../../src/edit/compose.js';
import { parseResolution } from '../../src/edit/normalize.js';
import {
  DEFAULT_RESOLUTION,
  LISTED_OUTPUT_PRESETS,
  OUTPUT_PRESET_NAMES,
  OUTPUT_PRESETS,
} from '../../src/edit/model.js';
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
    expect(EditInputShape.resolution.description).toBe(`WxH or ${LISTED_OUTPUT_PRESETS}; default the sources' size`);
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

describe("the output the call does not name: the sources' (issue 51, item 5)", () => {
  const src = (width: number, height: number, rate?: [number, number], fps?: number) => ({
    hasVideo: true,
    width,
    height,
    ...(rate ? { frameRate: { num: rate[0], den: rate[1] } } : {}),
    ...(fps ? { fps } : {}),
  });

  it('takes the size and rate most cuts have, a tie to the earlier cut', () => {
    const a = src(1280, 720, [25, 1]);
    const b = src(3840, 2160, [30000, 1001]);
    expect(sourceOutput([a, b, a])).toEqual({ resolution: '1280x720', fps: 25 });
    expect(sourceOutput([b, a])).toEqual({ resolution: '3840x2160', fps: 29.97 });
  });

  it('makes sides even, fits 8K, and counts a variable rate as the common one near it', () => {
    expect(sourceOutput([src(853, 481, undefined, 29.87)])).toEqual({ resolution: '852x480', fps: 29.97 });
    expect(sourceOutput([src(15360, 8640, [24000, 1001])])).toEqual({ resolution: '7680x4320', fps: 23.976 });
    expect(sourceOutput([src(640, 360, undefined, 17.3)])).toEqual({ resolution: '640x360' });
  });

  it('says nothing where no cut is a known video: the defaults hold', () => {
    expect(sourceOutput([undefined, { hasVideo: false }])).toEqual({});
  });

  it('refuses a resolution it cannot read by naming every preset it takes, and takes them in the edit too', () => {
    const r = parseResolution('Full HD vertical');
    expect(r).toEqual({ reason: expect.stringContaining(`or a preset (${OUTPUT_PRESET_NAMES})`) });
    expect(OUTPUT_PRESET_NAMES).toMatch(/1080p.*full hd.*720p.*vertical.*9:16.*square.*4k/);
    expect(parseResolution('9:16')).toEqual({ width: 1080, height: 1920 });
    expect(parseResolution('Full HD')).toEqual({ width: 1920, height: 1080 });
  });
});
