// What a caller over HTTP is shown of the server's files (workflow/remote-paths.ts): previews and exports by their
// cutroom:// URI, any other file of the server's by its name, links to them left out, and nothing else touched.
import { describe, expect, it } from 'vitest';
import { remotePaths } from '../../src/workflow/remote-paths.js';

const cache = '/srv/cutroom cache';
const data = '/srv/data';
const shown = remotePaths([cache, `${data}/`]);

describe('remotePaths', () => {
  it('names previews and exports by their URI, plain or as file: URLs, percent-encoded or not', () => {
    expect(
      shown.text(
        `Preview: ${cache}/previews/20261126-ab12/preview.mp4\nsheet ${cache}/previews/20261126-ab12/sheet.jpg`,
      ),
    ).toBe('Preview: cutroom://previews/20261126-ab12/preview.mp4\nsheet cutroom://previews/20261126-ab12/sheet.jpg');
    expect(shown.text(`"src": "file:///srv/cutroom%20cache/exports/e-1/cutroom-edit.otio"`)).toBe(
      '"src": "cutroom://exports/e-1/cutroom-edit.otio"',
    );
    // A caller's own folder under another key's cache folder: still the server's.
    expect(shown.text(`${cache}/callers/k1/exports/e-2/cut.edl`)).toBe('cutroom://exports/e-2/cut.edl');
  });

  it("names any other file of the server's by its name, and leaves out a link to one", () => {
    expect(shown.text(`* SOURCE FILE: ${data}/projects/p/media/a1.mp4\n`)).toBe('* SOURCE FILE: a1.mp4\n');
    expect(shown.text(`<media-rep src="file://${data}/projects/p/media/a1.mp4"/>`)).toBe('<media-rep src="a1.mp4"/>');
    const asset = {
      id: 'a1',
      name: 'talk.mp4',
      url: `file://${data}/projects/p/media/a1.mp4`,
      download_url: `file://${data}/projects/p/media/a1.mp4`,
      note: `kept in ${data}`,
    };
    expect(shown.value({ structuredContent: { assets: [asset] } })).toEqual({
      structuredContent: { assets: [{ id: 'a1', name: 'talk.mp4', note: 'kept in data' }] },
    });
  });

  it('leaves everything else as it is: other folders, names that only begin like a folder, links elsewhere, bytes', () => {
    const other = {
      path: '/home/me/media/talk.mp4',
      url: 'https://cdn.example/x.mp4?sig=1',
      near: `${data}-old/x`,
      n: 3,
      ok: true,
      none: null,
    };
    expect(shown.value(other)).toEqual(other);
    const image = { type: 'image', data: `${data}/not-a-path-but-bytes`, mimeType: 'image/jpeg' };
    expect(shown.value([image])).toEqual([image]);
    expect(shown.value({ uri: 'cutroom://previews/x/preview.mp4', blob: `${data}/x` })).toEqual({
      uri: 'cutroom://previews/x/preview.mp4',
      blob: `${data}/x`,
    });
    expect(remotePaths([]).text(`${data}/x`)).toBe(`${data}/x`);
  });

  it('knows a folder given in a form the paths made in it do not spell (a double slash, a dot, a dot-dot)', () => {
    const odd = remotePaths(['/srv//cache/', '/srv/x/../data']);
    expect(odd.text('/srv/cache/previews/20261126-ab12/preview.mp4 and /srv/data/projects/p/media/a1.mp4')).toBe(
      'cutroom://previews/20261126-ab12/preview.mp4 and a1.mp4',
    );
    expect(odd.text('/srv//cache/exports/e-1/cut.edl')).toBe('cutroom://exports/e-1/cut.edl');
  });
});
