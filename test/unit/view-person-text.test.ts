// The preview view's words for the person (src/views/person-text.ts): a server text written for the model, as the
// person reads it. The texts are the server's own (as tools and previews write them today).
import { describe, expect, it } from 'vitest';
import { forPerson } from '../../src/views/person-text.js';

describe('forPerson', () => {
  it('numbers cuts and overlays as the view does (#1 first), where the text points into the edit', () => {
    expect(
      forPerson(
        'Not ready: the out point 01:39.000 is past the end of the clip (it lasts 7.92 s) (at /video_series_sequential/1/video_end_time). Nothing was previewed. Fix these and call again:\n- error at /video_series_sequential/1/video_end_time: …',
      ),
    ).toBe('cut 2: the out point 01:39.000 is past the end of the clip (it lasts 7.92 s)');
    expect(forPerson('Not ready: from (9 s) is past the end of the audio (6 s) (at /audio_overlay/0/from).')).toBe(
      'overlay 1: from (9 s) is past the end of the audio (6 s)',
    );
    expect(forPerson('clips[0].end is before clips[0].start')).toBe('cut 1 is before cut 1');
  });

  it('leaves out the clauses and asides that tell the model which tool to call or which field to set', () => {
    expect(
      forPerson(
        'the edit to change is not ready: cut 1: no asset 2b90c742 in this project; get_project lists the assets; the project has no video assets',
      ),
    ).toBe(
      'the edit to change is not ready: cut 1: no asset 2b90c742 in this project; the project has no video assets',
    );
    expect(
      forPerson(
        'music only 6.1 dB under the dialogue (10 dB or more keeps speech clear); lower it (gain_db) or duck it deeper (duck_db over 12)',
      ),
    ).toBe('music only 6.1 dB under the dialogue (10 dB or more keeps speech clear)');
    expect(forPerson('the mix is too quiet (raise it with gain_db)')).toBe('the mix is too quiet');
  });

  it("keeps what a person reads as it is: file names, times, the view's own lines", () => {
    const plain = [
      'frozen picture for 1.0 s',
      'the changed edit would not play: cut 3: the out point 16:39.000 is past the end of the clip (it lasts 7.92 s); end the cut by 00:00:07.920',
      'the preview changed while it was read: open it again',
      'no asset my_clip.mov in this project; video assets: a1 (take_2.mov)',
    ];
    for (const t of plain) expect(forPerson(t)).toBe(t);
  });
});
