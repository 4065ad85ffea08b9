// The workflows' know-how, written once: how to go from what a person asks ("the three best moments over the
// voiceover") to a checked render, step by step, naming the tools. Served two ways: as MCP prompts (workflows.ts,
// filled in with the person's arguments) and as skills (skills.ts, SEP-2640, with the arguments as placeholders), so
// that hosts that load know-how on demand get it without it sitting in every tool description.

export interface WorkflowArg {
  name: string;
  description: string;
  required?: boolean;
}

export interface Workflow {
  /** The prompt's name; the skill's is the same in kebab case. */
  name: string;
  title: string;
  /** What it is for, then "Uses" and the tools it calls (every prompt says which). */
  description: string;
  /** When a person's request calls for it: the skill's trigger. */
  when: string;
  args: WorkflowArg[];
  /** The steps, with the arguments filled in (a prompt) or as <placeholders> (a skill). */
  steps(a: Record<string, string | undefined>, local: boolean): string[];
}

/** How to lay music under speech, said where a workflow has a voiceover. */
const MUSIC_BED =
  'Music under it: an overlay {asset_id, at: 0, role: "music"} ducks 12 dB under the speech by itself (duck_db to change it; gain_db lowers the whole bed, fade_in/fade_out in seconds).';

/**
 * A value as it goes into a tool-call snippet: a JSON string, so a quote or brace in what a person typed stays inside
 * it and cannot add arguments to the call the snippet shows.
 */
const q = (v: string | undefined) => JSON.stringify(v ?? '');

const projectArg: WorkflowArg = {
  name: 'project_id',
  description: 'The project (a UUID; list_projects shows them)',
  required: true,
};

/** The checks every workflow ends with before a render: said once, used by all. */
const PREVIEW_AND_ASK =
  "preview_edit {edit_id}: look at the contact sheet and every cut's flags (black, frozen, silent, clipping, flash frame); fix what is off with compose_edit and preview again. Render (render_edit {edit_id}) only when the person says so.";

export const WORKFLOWS: Workflow[] = [
  {
    name: 'rough_cut_from_folder',
    title: 'A rough cut from a folder of clips',
    description:
      'Bring a folder of clips into a project, look inside them, and cut a first version to a brief. Uses list_media, import_media, inspect_asset, transcribe_asset, compose_edit, preview_edit.',
    when: 'Someone points at a folder of footage and wants a first cut of it.',
    args: [
      projectArg,
      { name: 'folder', description: 'A folder of clips on this machine, inside the allowed folders', required: true },
      { name: 'brief', description: 'What the cut should be, e.g. "60 s, the three best moments, upbeat"' },
      { name: 'length_seconds', description: 'Target length in seconds' },
    ],
    steps: ({ project_id, folder, brief, length_seconds }, local) => [
      `Make a rough cut in project ${project_id} from the clips in ${folder}.${brief ? ` The brief: ${brief}.` : ''}${length_seconds ? ` Aim for about ${length_seconds} seconds.` : ''}`,
      local
        ? `1. list_media {folder: ${q(folder)}} to see what it holds, then import_media {project_id: ${q(project_id)}, path: ${q(folder)}} to bring every clip in (it reports what it skipped and why; a file imported before is not copied again).`
        : "1. get_project to see the project's assets (this service takes uploads on its own side; import_media is the local backend's).",
      '2. inspect_asset on each video: its shots, silences and a contact sheet. Where people speak, transcribe_asset to hear what they say.',
      '3. Choose the moments that serve the brief; compose_edit with clips given by shot ({asset_id, shot}), by words ({asset_id, phrase}) or by times, until ready is true. It returns an edit_id.',
      `4. ${PREVIEW_AND_ASK}`,
      '5. Tell the person what you cut and why, cut by cut, with the preview.',
    ],
  },
  {
    name: 'best_moments_over_voiceover',
    title: 'The best moments of some clips over a voiceover',
    description:
      'Find the strongest moments of a set of clips and cut them over a voiceover, to its length. Uses find_moments, inspect_asset, transcribe_asset, compose_edit, preview_edit, render_edit.',
    when: 'Someone asks for "the three best moments of these clips over the voiceover", a highlight reel or a supercut to a narration.',
    args: [
      projectArg,
      { name: 'voiceover_asset_id', description: 'The voiceover (an audio asset of the project)' },
      { name: 'count', description: 'How many moments (default 3)' },
    ],
    steps: ({ project_id, voiceover_asset_id, count }) => [
      `Cut the ${count ?? 'three'} best moments of the clips in project ${project_id} over ${voiceover_asset_id ? `the voiceover ${voiceover_asset_id}` : 'the voiceover'}.`,
      '1. get_project: the assets by name, kind and length. Pick the voiceover (audio) and the clips (video) the person means, by name.',
      "2. transcribe_asset on the voiceover: its sentences and length set the cut's length and where each moment can start.",
      '3. find_moments {project_id, asset_ids: <the clips>} ranks candidate moments (whole sentences, else whole shots) by what is said (about: the subject), loudness, motion and cuts, each with its reason and a clip; inspect_asset on each clip shows them (one frame per shot). Choose with your eyes too: a face, a strong picture; never a cut into a word.',
      `4. compose_edit: the moments as clips (find_moments' clip, {asset_id, shot} or {asset_id, phrase}) whose lengths add up to the voiceover's, and the voiceover as an overlay {asset_id, at: 0}; iterate until ready. Say why each moment was chosen. ${MUSIC_BED}`,
      `5. ${PREVIEW_AND_ASK}`,
      '6. Once the person agrees: render_edit {edit_id, wait: true}, then get_render_status until done; give the link.',
    ],
  },
  {
    name: 'cut_to_voiceover',
    title: 'Cut pictures to a voiceover',
    description:
      'Lay pictures on the phrases of a voiceover: align its script, find the words, cut a picture to each phrase. Uses transcribe_asset, search_transcripts, inspect_asset, compose_edit, preview_edit.',
    when: 'Someone has a narration or voiceover and wants pictures that follow what it says, sentence by sentence.',
    args: [
      projectArg,
      { name: 'voiceover_asset_id', description: 'The voiceover (an audio asset of the project)', required: true },
      { name: 'script', description: 'What the voiceover says, when known: it is aligned, not guessed' },
    ],
    steps: ({ project_id, voiceover_asset_id, script }) => [
      `Cut pictures to the voiceover ${voiceover_asset_id} in project ${project_id}.`,
      script
        ? `1. transcribe_asset {project_id: ${q(project_id)}, asset_id: ${q(voiceover_asset_id)}, text: <the script below>} to place every word of it in time.\n\nThe script:\n${script}\n`
        : `1. transcribe_asset {project_id: ${q(project_id)}, asset_id: ${q(voiceover_asset_id)}} to hear it, sentence by sentence (with its script as text, when known, every word is placed instead of guessed).`,
      '2. For each sentence, find a picture that shows what it says: inspect_asset on the video assets (shots and sheets), transcribe_asset and search_transcripts where the footage speaks.',
      `3. compose_edit: clips whose lengths follow the sentences (each from the start of its sentence to the start of the next), and the voiceover as an overlay from 0. ${MUSIC_BED}`,
      `4. ${PREVIEW_AND_ASK}`,
    ],
  },
  {
    name: 'review_preview',
    title: 'Review a preview cut by cut',
    description:
      'Go through a preview cut by cut: what each shows, how loud it plays, what is flagged, and what to change. Uses preview_edit, inspect_asset, compose_edit.',
    when: 'Someone wants a preview checked, or asks what is wrong with a cut.',
    args: [
      projectArg,
      { name: 'preview_id', description: 'A preview preview_edit made; without it, preview the latest edit first' },
    ],
    steps: ({ project_id, preview_id }) => [
      preview_id
        ? `Review preview ${preview_id} of project ${project_id}: preview_edit {preview_id: ${q(preview_id)}}.`
        : `Preview the edit being worked on in project ${project_id} with preview_edit {edit_id}, then review it.`,
      'Go through it cut by cut, in order: its place on the timeline, what the contact sheet shows of it, its loudness against its neighbours, and every flag (black or frozen picture, silence where sound was asked, clipping, a flash frame at an end).',
      'For each problem, say what to change (an in or out point one frame later, a level, another shot: inspect_asset to find it) and make the change with compose_edit. Preview again and say what changed.',
    ],
  },
  {
    name: 'hand_to_editor',
    title: 'Hand the cut to an editor',
    description:
      'Write the cut as a timeline file an editor opens in Resolve, Premiere or Final Cut, and read their changes back. Uses compose_edit, export_edit, import_edit, preview_edit.',
    when: "Someone wants to finish the cut in DaVinci Resolve, Premiere or Final Cut, or has an editor's timeline to bring back.",
    args: [
      projectArg,
      {
        name: 'format',
        description: 'otio (OpenTimelineIO, the default), fcpxml (Final Cut, Resolve) or edl (CMX 3600)',
      },
    ],
    steps: ({ project_id, format }, local) => [
      `Hand the cut of project ${project_id} to an editor.`,
      `1. export_edit {edit_id, format: ${q(format ?? 'otio')}} (the edit_id compose_edit returned)${local ? '' : ' (media: "download" for files the editor can relink against, where allowed)'}; give the file's path and every warning.`,
      '2. When the editor sends their timeline back, import_edit reads it (media_map maps media by hand where names do not match): report what was mapped to which asset and every diagnostic, then preview_edit {edit_id} the result and compare it with the cut.',
    ],
  },
];
