// A file sent to an upload link by tus 1.0 from the preview view (browser code: fetch and XMLHttpRequest, no Node):
// created with one POST, sent in chunks by PATCH (each chunk's progress from XMLHttpRequest's upload events), and,
// when a chunk fails for want of a network or a server answer, resumed where the server says it stands (HEAD). An
// answer that refuses the upload (expired, over its cap, not media) ends it with the server's reason.

/** Bytes one PATCH carries: a failed chunk costs at most this much again. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** Failed chunks in a row before the upload is given up. */
const MOST_RETRIES = 5;
const TUS = { 'Tus-Resumable': '1.0.0' };

/** A refusal by the server (a 4xx or 5xx answer with its reason): not retried. */
export class UploadRefused extends Error {}

/** The reason an answer gives: cutroom's JSON {error}, or tus's own text. */
function reasonOf(status: number, body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: unknown }).error;
    if (typeof error === 'string') return error;
  } catch {
    // Not JSON: tus's own words.
  }
  return body.trim() || `the server answered ${status}`;
}

async function refusal(res: Response): Promise<UploadRefused> {
  return new UploadRefused(reasonOf(res.status, await res.text().catch(() => '')));
}

/** Where the upload stands on the server (HEAD), in bytes. */
async function offsetOf(at: string): Promise<number> {
  const res = await fetch(at, { method: 'HEAD', headers: TUS, cache: 'no-store' });
  const offset = Number(res.headers.get('Upload-Offset'));
  if (res.status !== 200 || !Number.isInteger(offset)) throw await refusal(res);
  return offset;
}

/**
 * One chunk from `offset`; `onSent` hears the bytes of it sent so far. Resolves to the server's new offset; rejects
 * with UploadRefused on an answer that refuses it, with a plain Error when the network failed.
 */
function patch(at: string, chunk: Blob, offset: number, onSent: (bytes: number) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PATCH', at);
    xhr.setRequestHeader('Tus-Resumable', '1.0.0');
    xhr.setRequestHeader('Upload-Offset', String(offset));
    xhr.setRequestHeader('Content-Type', 'application/offset+octet-stream');
    xhr.upload.onprogress = (e) => onSent(e.loaded);
    xhr.onload = () => {
      const next = Number(xhr.getResponseHeader('Upload-Offset'));
      if (xhr.status === 204 && Number.isInteger(next)) resolve(next);
      else if (xhr.status >= 500) reject(new Error(reasonOf(xhr.status, xhr.responseText)));
      else reject(new UploadRefused(reasonOf(xhr.status, xhr.responseText)));
    };
    xhr.onerror = () => reject(new Error('the connection to cutroom failed'));
    xhr.ontimeout = xhr.onerror;
    xhr.send(chunk);
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends `file` to the upload link `url`; `onProgress` hears the bytes the server holds (and those of the chunk under
 * way). Resolves when the server has all of it (and has answered the last chunk: by then it imported the file).
 */
export async function tusUpload(
  url: string,
  file: Blob,
  onProgress: (sent: number, total: number) => void,
): Promise<void> {
  const created = await fetch(url, {
    method: 'POST',
    headers: { ...TUS, 'Upload-Length': String(file.size) },
  }).catch((err: Error) => {
    throw new Error(`cutroom could not be reached to upload to (${err.message})`);
  });
  const location = created.headers.get('Location');
  if (created.status !== 201 || !location) throw await refusal(created);
  const at = new URL(location, url).href;
  let offset = 0;
  let failures = 0;
  onProgress(0, file.size);
  while (offset < file.size) {
    try {
      const from = offset;
      offset = await patch(at, file.slice(from, from + CHUNK_BYTES), from, (n) => onProgress(from + n, file.size));
      failures = 0;
      onProgress(offset, file.size);
    } catch (err) {
      if (err instanceof UploadRefused || ++failures > MOST_RETRIES) throw err;
      // The network failed midway: resumed from what the server holds, after a pause that grows.
      await pause(250 * 2 ** failures);
      offset = await offsetOf(at).catch(() => offset);
    }
  }
}
