// The workflows as skills (the MCP Skills extension, SEP-2640, through the SDK's SkillsExtension): the same know-how
// as the prompts (know-how.ts), each a SKILL.md under skill://cutroom/<name>/, with its arguments as placeholders.
// A host that loads skills on demand reads one when a request calls for it; nothing sits in the tool descriptions.
import type { McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension, skillEntry, type Skill, type SkillSource } from '@modelcontextprotocol/server/ext/skills';
import { WORKFLOWS, type Workflow } from './know-how.js';

const PREFIX = 'cutroom';
const BASE = 'skill://';
const kebab = (name: string) => name.replaceAll('_', '-');

/** A workflow's SKILL.md: frontmatter (name, description) and the steps, with <placeholders> for its arguments. */
export function skillMarkdown(w: Workflow, local: boolean): string {
  const placeholders = Object.fromEntries(w.args.map((a) => [a.name, `<${a.name}>`]));
  const args = w.args.map((a) => `- \`${a.name}\`${a.required ? '' : ' (optional)'}: ${a.description}`);
  // YAML: the description quoted as JSON, which YAML reads as a double-quoted string.
  return [
    '---',
    `name: ${kebab(w.name)}`,
    `description: ${JSON.stringify(`${w.when} ${w.description}`)}`,
    '---',
    `# ${w.title}`,
    '',
    w.when,
    '',
    '## What you need',
    ...args,
    '',
    '## Steps',
    ...w.steps(placeholders, local),
    '',
    'Every failure comes back as an error result that says what to do next; long results say in left_out what they leave out.',
    '',
  ].join('\n');
}

/** The skills of one backend kind, built once (their digests are computed asynchronously). */
function source(local: boolean): SkillSource {
  const files = new Map(WORKFLOWS.map((w) => [`${BASE}${PREFIX}/${kebab(w.name)}/SKILL.md`, skillMarkdown(w, local)]));
  let entries: Promise<Skill[]> | undefined;
  const all = () =>
    (entries ??= Promise.all(
      WORKFLOWS.map((w) =>
        skillEntry(
          `${PREFIX}/${kebab(w.name)}`,
          { 'SKILL.md': files.get(`${BASE}${PREFIX}/${kebab(w.name)}/SKILL.md`)! },
          { baseUri: BASE },
        ),
      ),
    ));
  return {
    list: async () => ({ skills: await all() }),
    get: async (uri) => (await all()).find((s) => s.uri === uri),
    read: async (uri) => {
      const text = files.get(uri);
      return text === undefined ? undefined : { text, mimeType: 'text/markdown' };
    },
  };
}

const extensions = new Map<boolean, SkillsExtension>();

/** Serves the workflows as skills on this server (one extension per backend kind, shared by every server). */
export function register(server: McpServer, opts: { local: boolean }): void {
  let ext = extensions.get(opts.local);
  if (!ext) {
    ext = new SkillsExtension({ source: source(opts.local), baseUri: BASE });
    extensions.set(opts.local, ext);
  }
  ext.attach(server);
}
