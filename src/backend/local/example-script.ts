// The example script attached to new local projects: the prompt-to-video flow of the interface doc.
export const EXAMPLE_SCRIPT_NAME = 'Prompt to video (example)';

export const EXAMPLE_INPUTS = [
  {
    id: 1,
    name: 'prompt',
    type: 'text',
    label: 'What the video is about',
    example: 'a calm morning at a mountain lake',
    placeholder: 'Describe the video',
  },
  {
    id: 2,
    name: 'voice',
    type: 'text',
    label: 'Narrator',
    example: 'a warm, unhurried voice',
    placeholder: 'Describe the narration voice',
  },
];

const STEPS: [string, string, string][] = [
  ['project-flow', 'project flow', 'Project flow'],
  ['custom-prompt', 'render custom prompt', 'Render custom prompt'],
  ['tts', 'text to speech', 'Text to speech'],
  ['stt', 'speech to text with time markers', 'Speech to text with time markers'],
  ['images', 'generate images from text', 'Images from text'],
  ['video', 'generate video from assets', 'Video from assets'],
];

export function exampleGraph() {
  return {
    nodes: STEPS.map(([id, job, name]) => ({ id, type: 'custom', data: { job, data: `{{${id}}}`, face: id, name } })),
    edges: STEPS.slice(1).map(([id], i) => ({ id: `${STEPS[i]![0]}->${id}`, source: STEPS[i]![0], target: id })),
  };
}
