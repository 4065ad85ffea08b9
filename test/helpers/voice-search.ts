// A flite voice saying lines with words planted in them (true word times: flite-words.ts), imported into a project of
// a local server of its own (local-project.ts) and transcribed by recognition: the set-up of the listening searches'
// tests, with a listening search that collects its progress messages, and a restart on the same folders.
import { join } from 'node:path';
import { sayWithWordTimes, type TrueWord } from './flite-words.js';
import { spawnServer, type Spawned } from './harness.js';
import { localEnv, localProject, structuredOf, testRoot } from './local-project.js';

export type Hit = { start_seconds: number; end_seconds: number; text?: string; match: string };
export type Search = { hits: Hit[]; near_misses?: Hit[]; listened?: number; missing?: unknown[] };

export interface VoiceSearch {
  root: string;
  /** The server now (a restart replaces it). */
  readonly server: Spawned;
  projectId: string;
  asset: string;
  /** Every word said, with its true start and end. */
  truth: TrueWord[];
  call: (
    name: string,
    args: Record<string, unknown>,
    onprogress?: (p: { message?: string }) => void,
  ) => Promise<unknown>;
  /** A listening search of one asset (this one unless given), and the progress messages it sent. */
  listen: (query: string, of?: string) => Promise<{ r: Search; messages: string[] }>;
  /** The server closed and another spawned on the same folders. */
  restart: () => Promise<void>;
  close: () => Promise<void>;
}

/** `voice` says `lines` (a WAV in the allowed folder), imported and transcribed; calls wait up to 5 minutes. */
export async function voiceSearch(name: string, voice: string, lines: string[]): Promise<VoiceSearch> {
  const dirs = testRoot(name);
  const wav = join(dirs.allowed, `${voice}.wav`);
  const truth = sayWithWordTimes(lines.join(' '), wav, voice);
  const project = await localProject(dirs, { name: voice, description: 'planted words' }, { timeout: 300_000 });
  let server = project.server;
  const call: VoiceSearch['call'] = (tool, args, onprogress) =>
    server.client.callTool(
      { name: tool, arguments: args },
      { timeout: 300_000, ...(onprogress ? { onprogress } : {}) },
    );
  const asset = await project.importMedia(wav);
  structuredOf(await call('transcribe_asset', { project_id: project.projectId, asset_id: asset }));
  return {
    root: dirs.root,
    get server() {
      return server;
    },
    projectId: project.projectId,
    asset,
    truth,
    call,
    async listen(query, of = asset) {
      const messages: string[] = [];
      const r = structuredOf<Search>(
        await call(
          'search_transcripts',
          { project_id: project.projectId, query, asset_ids: [of], listen: true },
          (p) => {
            if (p.message) messages.push(p.message);
          },
        ),
      );
      return { r, messages: [...new Set(messages)] };
    },
    async restart() {
      await server.close();
      server = await spawnServer(localEnv(dirs.root, dirs.allowed));
    },
    close: () => server.close(),
  };
}
