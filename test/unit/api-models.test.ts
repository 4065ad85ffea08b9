import { describe, expect, it } from 'vitest';
import {
  ProjectSchema,
  ScriptSchema,
  formatServiceTimestamp,
  parseServiceTimestamp,
  signedUrlExpiry,
  unwrapList,
} from '../../src/api/models.js';
import { outlineGraph, summarizeScript, detailProject } from '../../src/api/summaries.js';
import { exampleGraph } from '../fixtures/service.mjs';

describe('service models', () => {
  it('parses a project as the interface doc shows it, keeping unknown fields', () => {
    const p = ProjectSchema.parse({
      id: '0b7c3a4e-1f2d-4c5b-9a8e-7d6c5b4a3f2e',
      name: 'Beach',
      description: 'a day at the beach',
      data: '',
      created_at: '2024-05-01T12:34:56.123456',
      owner_id: '1b7c3a4e-1f2d-4c5b-9a8e-7d6c5b4a3f2e',
      asset_count: 1,
      assets: [
        {
          id: 'a',
          keyname: 'k',
          url: 'https://x/y?Expires=1',
          asset_path: null,
          asset_type: 'generated_video',
          status: 'uploaded',
          uploaded: true,
          extra: 1,
        },
      ],
      thumbnail: 'new-field',
    });
    expect(p.assets?.[0]?.status).toBe('uploaded');
    expect((p as Record<string, unknown>).thumbnail).toBe('new-field');
  });

  it('tolerates missing and null optional fields but requires an id', () => {
    expect(ProjectSchema.safeParse({ id: 'x', name: null, assets: null }).success).toBe(true);
    expect(ProjectSchema.safeParse({ name: 'no id' }).success).toBe(false);
  });

  it('accepts script inputs as a list of objects or as a string', () => {
    expect(ScriptSchema.parse({ id: 's', inputs: [{ id: 1, name: 'topic', type: 'text' }] }).inputs).toHaveLength(1);
    expect(ScriptSchema.parse({ id: 's', inputs: '[]' }).inputs).toBe('[]');
  });

  it('unwraps a bare list or the usual envelopes, and refuses anything else', () => {
    expect(unwrapList([1])).toEqual([1]);
    expect(unwrapList({ items: [2] })).toEqual([2]);
    expect(unwrapList({ projects: [3] })).toEqual([3]);
    expect(unwrapList({ detail: 'x' })).toBeUndefined();
    expect(unwrapList('nope')).toBeUndefined();
  });

  it('reads zone-less timestamps with microseconds as UTC and writes them back the same way', () => {
    const d = parseServiceTimestamp('2024-05-01T12:34:56.123456');
    expect(d?.toISOString()).toBe('2024-05-01T12:34:56.123Z');
    expect(parseServiceTimestamp('2024-05-01T12:34:56+02:00')?.toISOString()).toBe('2024-05-01T10:34:56.000Z');
    expect(parseServiceTimestamp('yesterday')).toBeUndefined();
    expect(formatServiceTimestamp(new Date('2024-05-01T12:34:56.789Z'))).toBe('2024-05-01T12:34:56.789000');
  });

  it('finds the expiry of signed links (epoch Expires, or X-Amz-Date + X-Amz-Expires)', () => {
    expect(
      signedUrlExpiry(
        'https://b.s3.amazonaws.com/k.mp4?AWSAccessKeyId=A&Signature=S&Expires=1700000000',
      )?.toISOString(),
    ).toBe('2023-11-14T22:13:20.000Z');
    expect(signedUrlExpiry('https://b/k?X-Amz-Date=20240501T120000Z&X-Amz-Expires=3600')?.toISOString()).toBe(
      '2024-05-01T13:00:00.000Z',
    );
    expect(signedUrlExpiry('https://b/k.mp4')).toBeUndefined();
    expect(signedUrlExpiry('not a url')).toBeUndefined();
  });
});

describe('summaries', () => {
  it('orders a graph by its edges, not by the order nodes are stored in', () => {
    const { steps, cycle } = outlineGraph(exampleGraph());
    expect(cycle).toBe(false);
    expect(steps.map((s) => s.job)).toEqual([
      'project flow',
      'render custom prompt',
      'text to speech',
      'speech to text with time markers',
      'generate images from text',
      'generate video from assets',
    ]);
    expect(steps[1]?.after).toEqual(['Project flow']);
  });

  it('keeps nodes caught in a cycle and says so', () => {
    const { steps, cycle } = outlineGraph({
      nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
      edges: [
        { source: 'a', target: 'b' },
        { source: 'b', target: 'c' },
        { source: 'c', target: 'b' },
      ],
    });
    expect(cycle).toBe(true);
    expect(steps.map((s) => s.id)).toEqual(['a', 'b', 'c']);
  });

  it('summarises a script with its inputs and numbered steps', () => {
    const s = summarizeScript(
      { id: 's1', name: 'P2V', inputs: [{ name: 'topic', label: 'Topic', type: 'text' }], value: exampleGraph() },
      'p1',
    );
    expect(s.inputs[0]?.name).toBe('topic');
    expect(s.graph).toMatchObject({ nodes: 6, edges: 5 });
    expect(s.graph.steps[0]).toBe('1. Project flow [project flow]');
    expect(s.resource_uri).toBe('vj://projects/p1/scripts/s1');
  });

  it('pages assets and reports the earliest link expiry', () => {
    const assets = Array.from({ length: 60 }, (_, i) => ({
      id: `a${i}`,
      url: `https://x/k?Expires=${1700000000 + i}`,
    }));
    const d = detailProject({ id: 'p', assets }, 50);
    expect(d.assets.map((a) => a.id)).toEqual(['a50', 'a51', 'a52', 'a53', 'a54', 'a55', 'a56', 'a57', 'a58', 'a59']);
    expect(d.assets_total).toBe(60);
    expect(d.links_expire_at).toBe(new Date(1700000050 * 1000).toISOString());
  });
});
