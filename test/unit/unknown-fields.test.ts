import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { unknownFieldMessage, unknownFields } from '../../src/unknown-fields.js';
import { EditInputShape } from '../../src/workflow/edit-input.js';

const composeArgs = z.object(EditInputShape);
const messages = (schema: z.ZodType, value: unknown) => unknownFields(schema, value).map(unknownFieldMessage);

describe('arguments nobody reads', () => {
  it('names a top-level key the tool does not take, with the field that does what it asks', () => {
    const args = { project_id: 'p', clips: [{ asset_id: 'a' }], reframe: 'auto' };
    expect(composeArgs.safeParse(args).success).toBe(true); // zod alone drops it
    expect(messages(composeArgs, args)).toEqual(['reframe is not an argument; did you mean clips[].focus: "auto"?']);
  });

  it('names a nested key by its path, with the same name where it is declared', () => {
    const args = { project_id: 'p', clips: [{ asset_id: 'a' }, { asset_id: 'b', focus: { x: 0.5, y: 0.5, zoom: 2 } }] };
    expect(messages(composeArgs, args)).toEqual([
      'clips[1].focus.zoom is not a field of clips[1].focus (it takes x, y); did you mean clips[1].crop.zoom?',
    ]);
  });

  it('points a misspelt name at the one meant, and a synonym at its field', () => {
    const args = { project_id: 'p', clips: [{ asset_id: 'a', volum: 0.5, in: 2 }], overlays: [] };
    expect(messages(composeArgs, args)).toEqual([
      'clips[0].volum is not a field of clips (it takes asset_id, start, end, shot, phrase, occurrence, words, handle, volume, crop, focus, gain_db, fade_in, fade_out); did you mean clips[0].volume?',
      'clips[0].in is not a field of clips (it takes asset_id, start, end, shot, phrase, occurrence, words, handle, volume, crop, focus, gain_db, fade_in, fade_out); did you mean clips[0].start?',
    ]);
  });

  it('says nothing of a key it cannot place beyond what the place takes', () => {
    expect(messages(composeArgs, { project_id: 'p', colour_grade: 'warm' })).toEqual([
      'colour_grade is not an argument',
    ]);
  });

  it('leaves loose objects, records and well-formed arguments alone', () => {
    const schema = z.object({ loose: z.looseObject({ a: z.number() }), tags: z.record(z.string(), z.number()) });
    expect(unknownFields(schema, { loose: { a: 1, b: 2 }, tags: { anything: 1 } })).toEqual([]);
    const args = {
      project_id: 'p',
      clips: [{ asset_id: 'a', start: 1, end: 2, focus: 'auto', crop: { zoom: 1.5 } }],
      loudness: { target_lufs: -14, anything: 1 },
      captions: { burn: true },
    };
    expect(unknownFields(composeArgs, args)).toEqual([]);
  });
});
