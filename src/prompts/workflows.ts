// MCP prompts: the workflows people start from, each a message that tells the assistant which tools to use in which
// order. Project ids complete from the project list.
import { completable, type McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Backend } from '../backend/types.js';
import type { Logger } from '../log.js';
import { completeProjectId } from '../workflow/completion.js';

export interface PromptDeps {
  backend: Backend;
  logger: Logger;
}

const say = (text: string) => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] });

export function register(server: McpServer, deps: PromptDeps): void {
  const projectId = () =>
    completable(z.string().describe('The project (a UUID; list_projects shows them)'), completeProjectId(deps));
  const local = deps.backend.kind === 'local';

  server.registerPrompt(
    'rough_cut_from_folder',
    {
      title: 'A rough cut from a folder of clips',
      description: 'Bring a folder of clips into a project, look inside them, and cut a first version to a brief. Uses list_media, import_media, inspect_asset, transcribe_asset, compose_edit, preview_edit.',
      argsSchema: z.object({
        project_id: projectId(),
        folder: z.string().describe('A folder of clips on this machine, inside the allowed folders'),
        brief: z.string().optional().describe('What the cut should be, e.g. "60 s, the three best moments, upbeat"'),
        length_seconds: z.string().optional().describe('Target length in seconds'),
      }),
    },
    ({ project_id, folder, brief, length_seconds }) =>
      say(
        [
          `Make a rough cut in project ${project_id} from the clips in ${folder}.${brief ? ` The brief: ${brief}.` : ''}${length_seconds ? ` Aim for about ${length_seconds} seconds.` : ''}`,
          local
            ? `1. list_media {folder: "${folder}"} to see what it holds, then import_media {project_id: "${project_id}", path: "${folder}"} to bring every clip in (it reports what it skipped and why).`
            : '1. get_project to see the project\'s assets (this service takes uploads on its own side; import_media is the local backend\'s).',
          '2. inspect_asset on each video: its shots, silences and a contact sheet. Where people speak, transcribe_asset to hear what they say.',
          '3. Choose the moments that serve the brief; compose_edit with clips given by shot ({asset_id, shot}), by words ({asset_id, phrase}) or by times, until ready is true.',
          '4. preview_edit, look at the contact sheet and the flags of every cut (black, frozen, silent, clipping, flash frames), fix what is off with compose_edit, and preview again.',
          '5. Tell me what you cut and why, cut by cut, with the preview; render only when I say so.',
        ].join('\n'),
      ),
  );

  server.registerPrompt(
    'cut_to_voiceover',
    {
      title: 'Cut pictures to a voiceover',
      description: 'Lay pictures on the phrases of a voiceover: align its script, find the words, cut a picture to each phrase. Uses transcribe_asset, search_transcripts, inspect_asset, compose_edit, preview_edit.',
      argsSchema: z.object({
        project_id: projectId(),
        voiceover_asset_id: z.string().describe('The voiceover (an audio asset of the project)'),
        script: z.string().optional().describe('What the voiceover says, when known: it is aligned, not guessed'),
      }),
    },
    ({ project_id, voiceover_asset_id, script }) =>
      say(
        [
          `Cut pictures to the voiceover ${voiceover_asset_id} in project ${project_id}.`,
          script
            ? `1. transcribe_asset {project_id: "${project_id}", asset_id: "${voiceover_asset_id}", text: <the script below>} to place every word of it in time.\n\nThe script:\n${script}\n`
            : `1. transcribe_asset {project_id: "${project_id}", asset_id: "${voiceover_asset_id}"} to hear it, sentence by sentence.`,
          '2. For each sentence, find a picture that shows what it says: inspect_asset on the video assets (shots and sheets), transcribe_asset and search_transcripts where the footage speaks.',
          '3. compose_edit: clips whose lengths follow the sentences (each from the start of its sentence to the start of the next), and the voiceover as an overlay from 0.',
          '4. preview_edit and review it cut by cut; adjust and preview again. Render only when I say so.',
        ].join('\n'),
      ),
  );

  server.registerPrompt(
    'review_preview',
    {
      title: 'Review a preview cut by cut',
      description: 'Go through a preview cut by cut: what each shows, how loud it plays, what is flagged, and what to change. Uses get_preview (or preview_edit), inspect_asset, compose_edit.',
      argsSchema: z.object({
        project_id: projectId(),
        preview_id: z.string().optional().describe('A preview preview_edit made; without it, preview the latest edit first'),
      }),
    },
    ({ project_id, preview_id }) =>
      say(
        [
          preview_id ? `Review preview ${preview_id} of project ${project_id}: get_preview {preview_id: "${preview_id}"}.` : `Preview the edit we are working on in project ${project_id} with preview_edit, then review it.`,
          'Go through it cut by cut, in order: its place on the timeline, what the contact sheet shows of it, its loudness against its neighbours, and every flag (black or frozen picture, silence where sound was asked, clipping, a flash frame at an end).',
          'For each problem, say what to change (an in or out point one frame later, a level, another shot: inspect_asset to find it) and make the change with compose_edit. Preview again and say what changed.',
        ].join('\n'),
      ),
  );

  server.registerPrompt(
    'hand_to_editor',
    {
      title: 'Hand the cut to an editor',
      description: 'Write the cut as a timeline file an editor opens in Resolve, Premiere or Final Cut, and read their changes back. Uses compose_edit, export_edit, import_edit, preview_edit.',
      argsSchema: z.object({
        project_id: projectId(),
        format: z.string().optional().describe('otio (OpenTimelineIO, the default), fcpxml (Final Cut, Resolve) or edl (CMX 3600)'),
      }),
    },
    ({ project_id, format }) =>
      say(
        [
          `Hand the cut of project ${project_id} to an editor.`,
          `1. export_edit {project_id: "${project_id}", format: "${format ?? 'otio'}", ...the edit}${local ? '' : ' (media: "download" for files the editor can relink against, where allowed)'}; tell me the file's path and every warning.`,
          '2. When the editor sends their timeline back, import_edit reads it: report what was mapped to which asset and every diagnostic, then preview_edit the result and compare it with our cut.',
        ].join('\n'),
      ),
  );
}
