// Issue 47, item 6 (publishable: the vertical cut on real footage). Debian's opencv-doc ships a street scene filmed by a
// still camera (examples/data/vtest.avi: 768x576, 10 fps, 79.5 s, people walking). Through the built server, the scene
// is previewed at 9:16 (324x576: the source's own scale) with focus "auto" and with the centre; the people are found in
// each source frame by a way of our own that needs no model and that a still camera makes reliable: the per-pixel
// median of the scene is its empty street, and upright blobs that differ from it are people (a blob joined to the
// street's fluttering barrier tape is cut back to its runs of columns tall enough for a person). Each preview frame is
// placed back on its source frame (the horizontal offset whose pixels differ least), and a person counts as kept when
// all the blob's own pixels (before the dilation that joins its pieces) lie inside that window.
// Figures: people-frames kept whole (auto vs centre), frames where at least one person is in the scene but none is
// kept, among frames whose people all fit in one 9:16 window together the frames where all are kept (and the same for
// frames with exactly two people), and the CPU of each preview (the server and its ffmpeg children, from /proc).
// Megamind.avi (a film clip with cuts and camera moves) has no still background to measure against: where its
// preview's window sits in each frame is printed (and written to BENCH_SHEET_DIR with contact sheets to look at), to
// set one version beside another.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from './lib.mjs';

const DATA = '/usr/share/doc/opencv-doc/examples/data';
/** Detection runs at half the source's size (384x288): enough for people 40-120 px tall, four times less work. */
const W = 384;
const H = 288;
const CROP = Math.round((H * 9) / 16); // 162: the 9:16 window at the same scale

function grayFrames(file, width, height, extra = []) {
  const p = spawnSync(
    'ffmpeg',
    ['-v', 'error', '-i', file, ...extra, '-vf', `scale=${width}:${height},format=gray`, '-f', 'rawvideo', 'pipe:1'],
    { maxBuffer: 1 << 30 },
  );
  if (p.status !== 0) throw new Error(`ffmpeg failed on ${file}: ${p.stderr}`);
  const size = width * height;
  const frames = [];
  for (let at = 0; at + size <= p.stdout.length; at += size) frames.push(p.stdout.subarray(at, at + size));
  return frames;
}

/** The empty street: each pixel's median over frames spread through the scene (people pass; the street stays). */
function medianBackground(frames) {
  const picks = frames.filter((_, i) => i % Math.max(1, Math.floor(frames.length / 61)) === 0);
  const bg = new Uint8Array(W * H);
  const v = new Uint8Array(picks.length);
  for (let p = 0; p < W * H; p++) {
    for (let k = 0; k < picks.length; k++) v[k] = picks[k][p];
    v.sort();
    bg[p] = v[v.length >> 1];
  }
  return bg;
}

/** A column of a blob with fewer of its own pixels than this is a barrier tape or a cone's tip, not a person. */
const THIN = 6;

/**
 * People in one frame: connected regions differing from the street by > 30 levels, upright, at least 150 px. A region
 * wider than tall is a person (or people side by side) joined to the barrier tape that flutters across the street, or
 * to a cone: its runs of columns with at least THIN own pixels each (gaps of up to 2 columns bridged) are taken as the
 * people, each where it is upright, at least 25 px tall and of 100 own pixels (drawn over the clip and looked at: every
 * run so taken was a person or people, the tape alone has no such run).
 */
function people(frame, bg) {
  const mask = new Uint8Array(W * H);
  for (let p = 0; p < W * H; p++) mask[p] = Math.abs(frame[p] - bg[p]) > 30 ? 1 : 0;
  // Close small gaps (a shirt the colour of the street splits a person in two): a 3x3 dilation.
  const grown = new Uint8Array(W * H);
  for (let y = 1; y < H - 1; y++)
    for (let x = 1; x < W - 1; x++) {
      let any = 0;
      for (let dy = -1; dy <= 1 && !any; dy++)
        for (let dx = -1; dx <= 1 && !any; dx++) any = mask[(y + dy) * W + x + dx];
      grown[y * W + x] = any;
    }
  const seen = new Uint8Array(W * H);
  const found = [];
  const stack = [];
  // Per column of the region being filled: its own pixels, and their top and bottom rows.
  const count = new Int32Array(W);
  const top = new Int32Array(W).fill(H);
  const bottom = new Int32Array(W).fill(-1);
  for (let start = 0; start < W * H; start++) {
    if (!grown[start] || seen[start]) continue;
    let n = 0;
    let l = W;
    let r = -1;
    let t = H;
    let b = -1;
    // The person's own extent: the dilation joins a person's pieces, but widens the blob by a pixel a side, which is
    // not the person (a window 1 px short of the blob holds all of them).
    let ownL = W;
    let ownR = -1;
    stack.push(start);
    seen[start] = 1;
    while (stack.length) {
      const p = stack.pop();
      const x = p % W;
      const y = (p - x) / W;
      n++;
      l = Math.min(l, x);
      r = Math.max(r, x);
      t = Math.min(t, y);
      b = Math.max(b, y);
      if (mask[p]) {
        ownL = Math.min(ownL, x);
        ownR = Math.max(ownR, x);
        count[x]++;
        top[x] = Math.min(top[x], y);
        bottom[x] = Math.max(bottom[x], y);
      }
      for (const q of [p - 1, p + 1, p - W, p + W])
        if (q >= 0 && q < W * H && grown[q] && !seen[q] && Math.abs((q % W) - x) <= 1) {
          seen[q] = 1;
          stack.push(q);
        }
    }
    const h = b - t + 1;
    const w = r - l + 1;
    if (n >= 150 && h >= 25 && h >= 0.9 * w) found.push({ l: ownL, r: ownR, cols: count.slice(ownL, ownR + 1) });
    else if (n >= 150 && h >= 25) found.push(...uprightRuns(l, r));
    for (let x = l; x <= r; x++) {
      count[x] = 0;
      top[x] = H;
      bottom[x] = -1;
    }
  }
  function uprightRuns(l, r) {
    const runs = [];
    for (let x = l; x <= r; x++) {
      if (count[x] < THIN) continue;
      const last = runs.at(-1);
      if (last && x - last.r <= 3) last.r = x;
      else runs.push({ l: x, r: x });
    }
    return runs.filter((u) => {
      let t = H;
      let b = -1;
      let own = 0;
      for (let x = u.l; x <= u.r; x++) {
        t = Math.min(t, top[x]);
        b = Math.max(b, bottom[x]);
        own += count[x];
      }
      u.cols = count.slice(u.l, u.r + 1);
      return own >= 100 && b - t + 1 >= 25 && b - t + 1 >= 0.9 * (u.r - u.l + 1);
    });
  }
  return found;
}

/**
 * Where a preview frame (crop x height) sits on its source frame (width x height): the offset whose pixels differ
 * least, and how much.
 */
function placeWindow(view, source, width = W, crop = CROP, height = H) {
  let best = { x: 0, sad: Infinity };
  for (let x = 0; x + crop <= width; x++) {
    let sad = 0;
    for (let y = 0; y < height; y += 2) {
      const row = y * width + x;
      const vrow = y * crop;
      for (let i = 0; i < crop; i += 2) sad += Math.abs(view[vrow + i] - source[row + i]);
      if (sad >= best.sad) break;
    }
    if (sad < best.sad) best = { x, sad };
  }
  return { x: best.x, meanDiff: best.sad / ((height / 2) * (crop / 2)) };
}

/** CPU seconds a process and the children it waited for have used (Linux: /proc/<pid>/stat, 100 ticks a second). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: fields 14-17 of the line, 12-15 after the name.
  return fields.slice(11, 15).reduce((a, v) => a + Number(v), 0) / 100;
}

/** A sliver: at most this many columns (at 384 wide: 4 px of the source's 768) and this share of a person left out. */
const SLIVER_PX = 2;
const SLIVER_SHARE = 0.02;

/** How much of a person a window at x leaves out: columns, and the share of their own pixels. */
function leftOut(p, x) {
  let out = 0;
  let all = 0;
  let px = 0;
  for (let k = 0; k < p.cols.length; k++) {
    all += p.cols[k];
    const col = p.l + k;
    if (col < x || col >= x + CROP) {
      px++;
      out += p.cols[k];
    }
  }
  return { px, share: all ? out / all : 0 };
}

function measure(previewFile, sourceFrames, found) {
  const views = grayFrames(previewFile, CROP, H);
  const n = Math.min(views.length, sourceFrames.length);
  let kept = 0;
  let present = 0;
  let emptyHanded = 0;
  let fitFrames = 0;
  let fitAllKept = 0;
  let roomFrames = 0;
  let roomAllKept = 0;
  // Frames with exactly two people: where they fit together (and with room), both kept.
  const two = { fit: 0, fitKept: 0, room: 0, roomKept: 0 };
  // Where all fit and someone is not kept whole: how much of them the window leaves out (columns at 384 wide, and the
  // share of their own pixels), so that a person cut by a sliver is told from one cut in half.
  const cutShort = [];
  let fitAllButSliver = 0;
  let twoButSliver = 0;
  let worstDiff = 0;
  let travel = 0;
  let reversals = 0;
  let lastX;
  let lastStep = 0;
  for (let i = 0; i < n; i++) {
    const { x, meanDiff } = placeWindow(views[i], sourceFrames[i]);
    worstDiff = Math.max(worstDiff, meanDiff);
    // How much the frame moves, and how often it turns back (a frame that hunts turns back often).
    if (lastX !== undefined && x !== lastX) {
      const step = Math.sign(x - lastX);
      travel += Math.abs(x - lastX);
      if (lastStep && step !== lastStep) reversals++;
      lastStep = step;
    }
    lastX = x;
    const ps = found[i];
    const inside = ps.filter((p) => p.l >= x && p.r < x + CROP).length;
    kept += inside;
    present += ps.length;
    if (ps.length && !inside) emptyHanded++;
    const span = ps.length >= 2 ? Math.max(...ps.map((p) => p.r)) - Math.min(...ps.map((p) => p.l)) + 1 : Infinity;
    if (span <= CROP) {
      fitFrames++;
      if (inside === ps.length) fitAllKept++;
      const outs = ps.map((p) => leftOut(p, x));
      for (const o of outs) if (o.px) cutShort.push({ frame: i, ...o });
      if (outs.every((o) => o.px <= SLIVER_PX && o.share <= SLIVER_SHARE)) {
        fitAllButSliver++;
        if (ps.length === 2) twoButSliver++;
      }
    }
    // With room to spare (an eighth of the window): a frame that keeps them all need not sit to the pixel.
    if (span <= CROP - CROP / 8) {
      roomFrames++;
      if (inside === ps.length) roomAllKept++;
    }
    if (ps.length === 2 && span <= CROP) {
      two.fit++;
      if (inside === 2) two.fitKept++;
      if (span <= CROP - CROP / 8) {
        two.room++;
        if (inside === 2) two.roomKept++;
      }
    }
  }
  return {
    frames: n,
    kept,
    present,
    emptyHanded,
    fitFrames,
    fitAllKept,
    roomFrames,
    roomAllKept,
    two,
    worstDiff,
    travel,
    reversals,
    cutShort,
    fitAllButSliver,
    twoButSliver,
  };
}

export async function run() {
  const street = join(DATA, 'vtest.avi');
  if (!existsSync(street)) {
    console.log(`reframe-real: ${street} is missing (apt-get install opencv-doc); skipped`);
    return;
  }
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-reframe-'));
  const { client, transport } = await connect({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: DATA,
    CUTROOM_LOG_LEVEL: 'error',
  });
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, { timeout: 1_800_000 });
    if (r.isError) throw new Error(r.content[0].text);
    return r.structuredContent;
  };
  try {
    const project = (await call('create_project', { name: 'bench', description: 'reframe on real footage' })).project
      .id;
    const asset = (await call('import_media', { project_id: project, path: street })).asset.id;
    const sourceFrames = grayFrames(street, W, H);
    const bg = medianBackground(sourceFrames);
    const found = sourceFrames.map((f) => people(f, bg));
    const vertical = async (focus) => {
      const t = performance.now();
      const cpu = cpuSeconds(transport.pid);
      const p = await call('preview_edit', {
        project_id: project,
        resolution: 'vertical',
        fps: 10,
        width: 324,
        clips: [{ asset_id: asset, start: 0, end: 79.5, focus }],
      });
      return { path: p.path, seconds: (performance.now() - t) / 1000, cpu: cpuSeconds(transport.pid) - cpu };
    };
    const auto = await vertical('auto');
    const centre = await vertical({ x: 0.5, y: 0.5 });
    const rows = [
      ['auto', auto, measure(auto.path, sourceFrames, found)],
      ['centre', centre, measure(centre.path, sourceFrames, found)],
    ];
    console.log(`\nreframe on vtest.avi (${sourceFrames.length} frames, 9:16 at 324x576, people by median background)`);
    console.log(
      '| focus | people-frames kept whole | frames with people, none kept | frames where all fit: all kept | fit with room: all kept | exactly two who fit: both kept | exactly two, with room: both kept | travel of the frame, px (turns) | preview s | preview CPU s | worst mean diff |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const [name, p, m] of rows)
      console.log(
        `| ${name} | ${m.kept} of ${m.present} (${((100 * m.kept) / m.present).toFixed(0)}%) | ${m.emptyHanded} of ${m.frames} | ${m.fitAllKept} of ${m.fitFrames} | ${m.roomAllKept} of ${m.roomFrames} | ${m.two.fitKept} of ${m.two.fit} | ${m.two.roomKept} of ${m.two.room} | ${2 * m.travel} (${m.reversals}) | ${p.seconds.toFixed(1)} | ${p.cpu.toFixed(1)} | ${m.worstDiff.toFixed(1)} |`,
      );
    console.log(`the reframe's own CPU (auto preview less centre preview): ${(auto.cpu - centre.cpu).toFixed(1)} s`);
    const a = rows[0][2];
    const worstPx = Math.max(0, ...a.cutShort.map((c) => c.px));
    const worstShare = Math.max(0, ...a.cutShort.map((c) => c.share));
    console.log(
      `auto, where all fit: all kept but for a sliver (at most ${SLIVER_PX} px of 384 and ${100 * SLIVER_SHARE}% of a person's own pixels left out) ${a.fitAllButSliver} of ${a.fitFrames}; exactly two ${a.twoButSliver} of ${a.two.fit}`,
    );
    console.log(
      `auto, where all fit, people not kept whole: ${a.cutShort.length} in ${new Set(a.cutShort.map((c) => c.frame)).size} frames; left out at most ${worstPx} px (${(100 * worstShare).toFixed(1)}% of a person's own pixels): ` +
        a.cutShort.map((c) => `${c.frame}: ${c.px} px ${(100 * c.share).toFixed(1)}%`).join(', '),
    );
    const film = join(DATA, 'Megamind.avi');
    const sheets = process.env.BENCH_SHEET_DIR;
    if (existsSync(film)) {
      const filmAsset = (await call('import_media', { project_id: project, path: film })).asset.id;
      const p = await call('preview_edit', {
        project_id: project,
        resolution: 'vertical',
        width: 180,
        fps: 24,
        clips: [{ asset_id: filmAsset, start: 0, end: 11.2, focus: 'auto' }],
      });
      // Where the window sits in each frame (px of the source at 320 high, 436 wide; the window is 180): to set one
      // version's path beside another's (BENCH_SHEET_DIR/megamind-window.json), frame by frame.
      const [fw, fh] = [436, 320];
      const filmFrames = grayFrames(film, fw, fh, ['-r', '24']);
      const views = grayFrames(p.path, 180, fh);
      const xs = views.slice(0, filmFrames.length).map((v, i) => placeWindow(v, filmFrames[i], fw, 180, fh).x);
      console.log(`Megamind.avi: ${xs.length} frames, the window's x from ${Math.min(...xs)} to ${Math.max(...xs)} px`);
      if (!sheets) return;
      mkdirSync(sheets, { recursive: true });
      writeFileSync(join(sheets, 'megamind-window.json'), JSON.stringify(xs));
      spawnSync('ffmpeg', [
        '-v',
        'error',
        '-y',
        '-i',
        p.path,
        '-vf',
        'fps=2,tile=12x2',
        join(sheets, 'megamind-auto.png'),
      ]);
      spawnSync('ffmpeg', [
        '-v',
        'error',
        '-y',
        '-i',
        film,
        '-vf',
        'fps=2,scale=180:-2,tile=6x4',
        join(sheets, 'megamind-source.png'),
      ]);
      console.log(`Megamind.avi: contact sheets (2 frames a second) in ${sheets}, to look at`);
    }
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}
