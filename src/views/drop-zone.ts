// The preview view's drop zone (browser code): a file the person drops (or chooses) is uploaded into the project the
// view shows, and the model is told the new asset. Through the host it asks import_media {upload} for a signed upload
// link, sends the file there by tus (tus-upload.ts; the server's origin is in the view's CSP connectDomains), then
// asks import_media {upload_id} for the asset. Offered only where the server serves upload links (over HTTP: it marks
// the view's HTML); elsewhere the zone says why a file cannot be dropped here.
import { forPerson } from './person-text.js';
import { tusUpload } from './tus-upload.js';

type Result = {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
};

export interface DropZoneHost {
  /** A tool call through the host. */
  callTool(name: string, args: Record<string, unknown>): Promise<Result>;
  /** The project the view shows (undefined: none known). */
  projectOf(): Promise<string | undefined>;
  /** Tells the model (the host's model context). */
  tell(text: string, structured: Record<string, unknown>): Promise<void>;
}

const textOf = (r: Result) => r.content?.find((c) => c.type === 'text')?.text ?? '';

/** Whether this view's server takes uploads: it marks the HTML it serves over HTTP. */
export const uploadsOffered = () =>
  document.querySelector('meta[name="cutroom-uploads"]')?.getAttribute('content') === 'offered';

export function setUpDropZone(zone: HTMLElement, host: DropZoneHost): void {
  const text = zone.querySelector<HTMLElement>('.drop-text')!;
  const bar = zone.querySelector<HTMLProgressElement>('progress')!;
  const input = zone.querySelector<HTMLInputElement>('input[type="file"]')!;
  const say = (state: string, words: string) => {
    zone.dataset.state = state;
    text.textContent = words;
  };
  if (!uploadsOffered()) {
    zone.querySelector('label')?.remove();
    say(
      'off',
      'Files cannot be dropped here: cutroom runs on this computer, not on the web. Ask the assistant to import the file from a folder cutroom may read.',
    );
    return;
  }
  say('ready', 'Drop a video, sound or picture here to add it to this project.');
  let uploading = false;

  /** The progress shown, and every whole percent seen (the tests read it). */
  const progress = (sent: number, total: number) => {
    const pct = total ? Math.floor((100 * sent) / total) : 100;
    bar.hidden = false;
    bar.value = pct / 100;
    const seen = zone.dataset.seen ? zone.dataset.seen.split(',') : [];
    if (seen.at(-1) !== String(pct)) zone.dataset.seen = [...seen, pct].join(',');
    return pct;
  };

  async function upload(file: File): Promise<void> {
    if (uploading) return;
    uploading = true;
    delete zone.dataset.seen;
    say('uploading', `Adding ${file.name}…`);
    try {
      const project = await host.projectOf();
      if (!project) throw new Error('this view shows no project to add it to yet');
      const asked = await host.callTool('import_media', {
        project_id: project,
        upload: { filename: file.name.slice(0, 200) || 'upload', bytes: file.size },
      });
      const link = asked.structuredContent?.upload as { upload_id: string; url: string } | undefined;
      if (asked.isError || !link) throw new Error(textOf(asked) || 'no upload link was given');
      await tusUpload(link.url, file, (sent, total) =>
        say('uploading', `Uploading ${file.name}… ${progress(sent, total)}%`),
      );
      const got = await host.callTool('import_media', { project_id: project, upload_id: link.upload_id });
      const asset = got.structuredContent?.asset as { id: string } | undefined;
      if (got.isError || !asset) throw new Error(textOf(got) || 'the upload became no asset');
      const kind = String(got.structuredContent?.kind ?? 'file');
      const secs = got.structuredContent?.duration_seconds as number | undefined;
      const facts = `${kind}${secs !== undefined ? `, ${secs.toFixed(1)} s` : ''}`;
      zone.dataset.assetId = asset.id;
      say('done', `Added ${file.name} to the project (${facts}).`);
      await host
        .tell(
          `In the preview, the person uploaded ${file.name} into project ${project}: it is asset ${asset.id} (${facts}), ready to use in the edit.`,
          { uploaded_asset: asset.id, project_id: project, filename: file.name },
        )
        .catch(() => undefined);
    } catch (err) {
      say('failed', `${file.name} was not added: ${forPerson((err as Error).message)}`);
    } finally {
      uploading = false;
      input.value = '';
    }
  }

  zone.addEventListener('dragover', (e) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    const file = e.dataTransfer?.files[0];
    zone.classList.remove('over');
    if (!file) return;
    e.preventDefault();
    void upload(file);
  });
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file) void upload(file);
  });
}
