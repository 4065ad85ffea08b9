import { describe, expect, it } from 'vitest';
import { contentForVersion } from '../../src/tools/protocol-compat.js';

const result = () => ({
  content: [
    { type: 'text' as const, text: 'hi' },
    { type: 'audio' as const, data: 'AAAA', mimeType: 'audio/wav' },
    {
      type: 'resource_link' as const,
      uri: 'vj://projects/p/renders/r',
      name: 'cut.mp4',
      mimeType: 'video/mp4',
      description: 'The render',
    },
  ],
  structuredContent: { a: 1 },
});

describe('contentForVersion', () => {
  it('keeps everything for 2025-06-18 and later, and when the version is unknown', () => {
    for (const v of ['2025-06-18', '2025-11-25', '2026-07-28', undefined])
      expect(contentForVersion(result(), v)).toEqual(result());
  });
  it('turns a resource_link into text with its URI for 2025-03-26, and keeps audio and structuredContent', () => {
    const r = contentForVersion(result(), '2025-03-26');
    expect(r.content.map((c) => c.type)).toEqual(['text', 'audio', 'text']);
    expect(r.content[2]).toEqual({
      type: 'text',
      text: 'Resource vj://projects/p/renders/r: cut.mp4 (video/mp4) — The render; read it with resources/read.',
    });
    expect(r.structuredContent).toEqual({ a: 1 });
  });
  it('also leaves audio out, saying so, for 2024-11-05', () => {
    expect(contentForVersion(result(), '2024-11-05').content.map((c) => c.type)).toEqual(['text', 'text', 'text']);
  });
});
