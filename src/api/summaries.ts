// Compact views of the service's models for agents, and their zod schemas (one source for tool output
// schemas and resource bodies). Small on purpose: clients refuse tool results over ~25k tokens.
import { z } from 'zod';
import { classifyAsset } from '../edit/lint.js';
import { type Asset, type Graph, type Project, type Script, parseServiceTimestamp, signedUrlExpiry } from './models.js';

export const projectUri = (projectId: string) => `vj://projects/${projectId}`;
export const scriptUri = (projectId: string, scriptId: string) => `vj://projects/${projectId}/scripts/${scriptId}`;

// Unknown values are left out rather than null: single-type schemas are the most portable across clients.
const optText = z.string().optional();

export const ProjectSummarySchema = z.object({
  id: z.string().describe('Project id (UUID)'),
  name: optText,
  description: optText,
  created_at: optText.describe('Creation time, ISO 8601 in UTC'),
  asset_count: z.number().optional().describe('Number of assets, as the service counts them'),
  resource_uri: z.string().describe('Resource with the full project and its assets'),
});
export type ProjectSummary = z.infer<typeof ProjectSummarySchema>;

export const AssetViewSchema = z.object({
  id: z.string(),
  name: optText,
  kind: z.enum(['video', 'audio', 'image']).optional(),
  render: z.boolean().optional(),
  duration_seconds: z.number().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
  asset_type: optText,
  status: optText,
  uploaded: z.boolean().optional(),
  created_at: optText,
  url: optText.describe('Signed link to the media; it expires (see links_expire_at)'),
  download_url: optText,
  links_expire_at: optText,
});
export type AssetView = z.infer<typeof AssetViewSchema>;

export const ProjectDetailSchema = ProjectSummarySchema.extend({
  owner_id: optText,
  assets: z.array(AssetViewSchema),
  assets_total: z.number(),
  assets_offset: z.number().describe('Index of the first asset shown'),
  next_asset_offset: z.number().optional(),
  links_expire_at: optText.describe('Earliest expiry among the signed links shown'),
});
export type ProjectDetail = z.infer<typeof ProjectDetailSchema>;

export const ScriptInputViewSchema = z.object({
  name: optText,
  label: optText,
  type: optText,
  example: optText,
  placeholder: optText,
});

export const ScriptSummarySchema = z.object({
  id: z.string(),
  name: optText,
  inputs: z.array(ScriptInputViewSchema).describe('What a new generation needs'),
  graph: z.object({
    nodes: z.number(),
    edges: z.number(),
    steps: z.array(z.string()).describe('Steps in dependency order, "n. name [job]"'),
  }),
  resource_uri: z.string().describe('Resource with the whole graph as JSON and an outline'),
});
export type ScriptSummary = z.infer<typeof ScriptSummarySchema>;

/** Names are shown, not trusted: one from a service is cut short. */
const MAX_NAME = 200;
const clip = (v: string) => (v.length > MAX_NAME ? `${v.slice(0, MAX_NAME - 1)}…` : v);

/** The file name a signed download link asks the browser to save as (response-content-disposition), if any. */
function attachmentName(link: string | null | undefined): string | undefined {
  if (!link) return undefined;
  let disposition: string | null;
  try {
    disposition = new URL(link).searchParams.get('response-content-disposition');
  } catch {
    return undefined;
  }
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition ?? '');
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!).trim() || undefined;
  } catch {
    return m[1]!.trim() || undefined;
  }
}

/**
 * What a person calls an asset: the name it was imported or rendered under (a local record's original_name, the name
 * cutroom remembers giving a render, a name the service gives), else the file name in its storage path or the one its
 * download link saves as. Undefined when nothing names it.
 */
export function assetName(a: Asset): string | undefined {
  const rec = a as Asset & { name?: unknown; original_name?: unknown };
  if (typeof rec.name === 'string' && rec.name.trim()) return clip(rec.name.trim());
  if (typeof rec.original_name === 'string' && rec.original_name.trim()) return clip(rec.original_name.trim());
  const path = a.asset_path?.split(/[\\/]/).pop() || attachmentName(a.download_url);
  return path ? clip(path) : undefined;
}

/**
 * A render of an edit: marked `render: true` by the backend (the local backend's generated_video assets, which only
 * its renders make; on a service, the assets cutroom remembers rendering, since the service calls every asset it
 * generates generated_video).
 */
export const isRender = (a: Asset) => (a as { render?: unknown }).render === true;

/** What the asset is: video, audio or image, by its type, else by what is known of its media. */
export function assetKind(a: Asset): 'video' | 'audio' | 'image' | undefined {
  const facts = a as { width?: unknown; duration_ms?: unknown; has_audio?: unknown };
  const kind = classifyAsset(a.asset_type);
  if (kind !== 'unknown') return kind;
  if (typeof facts.width === 'number')
    return typeof facts.duration_ms === 'number' && facts.duration_ms > 0 ? 'video' : 'image';
  if (facts.has_audio === true) return 'audio';
  return undefined;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

const iso = (v: string | null | undefined) => parseServiceTimestamp(v)?.toISOString() ?? v ?? undefined;

export function summarizeProject(p: Project): ProjectSummary {
  return {
    id: p.id,
    // A name is what a service says it is: held to a name's length in every listing.
    name: p.name ? clip(p.name) : undefined,
    description: p.description ?? undefined,
    created_at: iso(p.created_at),
    asset_count: p.asset_count ?? p.assets?.length ?? undefined,
    resource_uri: projectUri(p.id),
  };
}

/**
 * An asset as an agent sees it. Its facts (duration_ms, width, height) are read from the asset where a backend or
 * workflow/asset-facts.ts put them: what is known, never measured here.
 */
export function viewAsset(a: Asset): AssetView {
  const expiry = signedUrlExpiry(a.url) ?? signedUrlExpiry(a.download_url);
  const facts = a as { duration_ms?: unknown; width?: unknown; height?: unknown };
  const durationMs = num(facts.duration_ms);
  const width = num(facts.width);
  const height = num(facts.height);
  const name = assetName(a);
  const kind = assetKind(a);
  return {
    id: a.id,
    ...(name ? { name } : {}),
    ...(kind ? { kind } : {}),
    ...(isRender(a) ? { render: true } : {}),
    ...(durationMs ? { duration_seconds: durationMs / 1000 } : {}),
    ...(width && height ? { width, height } : {}),
    asset_type: a.asset_type ?? undefined,
    status: a.status ?? undefined,
    uploaded: a.uploaded ?? undefined,
    created_at: iso(a.created_at),
    url: a.url ?? undefined,
    download_url: a.download_url ?? undefined,
    links_expire_at: expiry?.toISOString() ?? undefined,
  };
}

/** One line per asset: name, kind, duration and size, then the id (and the status when it is not ready). */
export function assetLine(a: AssetView): string {
  const facts = [
    a.render ? 'render' : (a.kind ?? a.asset_type ?? 'asset'),
    a.duration_seconds !== undefined ? `${+a.duration_seconds.toFixed(3)} s` : undefined,
    a.width && a.height ? `${a.width}x${a.height}` : undefined,
  ].filter(Boolean);
  const status = a.status && a.status !== 'uploaded' ? ` (${a.status})` : '';
  return `- ${a.name ?? '(unnamed)'} — ${facts.join(', ')} — ${a.id}${status}`;
}

/** The project with the assets from `offset` on, at most `limit` of them; next_asset_offset when more follow. */
export function detailProject(p: Project, offset = 0, limit = 50): ProjectDetail {
  const all = p.assets ?? [];
  const shown = all.slice(offset, offset + limit).map(viewAsset);
  const expiries = shown
    .map((a) => a.links_expire_at)
    .filter((x): x is string => !!x)
    .sort();
  const next = offset + shown.length;
  return {
    ...summarizeProject(p),
    owner_id: p.owner_id ?? undefined,
    assets: shown,
    assets_total: all.length,
    assets_offset: offset,
    ...(next < all.length ? { next_asset_offset: next } : {}),
    links_expire_at: expiries[0] ?? undefined,
  };
}

export interface OutlineStep {
  order: number;
  id: string;
  name: string;
  job: string;
  after: string[];
}

/**
 * Orders a script's graph by its edges (Kahn's algorithm, stable in node order). Nodes caught in a cycle
 * are appended in their original order, flagged by `cycle`, rather than dropped.
 */
export function outlineGraph(graph: Graph | null | undefined): { steps: OutlineStep[]; cycle: boolean } {
  const nodes = graph?.nodes ?? [];
  const edges = (graph?.edges ?? []).filter((e) => e.source !== e.target);
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  const next = new Map<string, string[]>();
  const prev = new Map<string, string[]>();
  for (const e of edges) {
    if (!index.has(e.source) || !index.has(e.target)) continue;
    indegree.set(e.target, (indegree.get(e.target) ?? 0) + 1);
    next.set(e.source, [...(next.get(e.source) ?? []), e.target]);
    prev.set(e.target, [...(prev.get(e.target) ?? []), e.source]);
  }
  const label = (id: string) => {
    const n = nodes[index.get(id) ?? -1];
    return n?.data?.name || n?.data?.job || id;
  };
  const ready = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  const ordered: string[] = [];
  while (ready.length) {
    ready.sort((a, b) => (index.get(a) ?? 0) - (index.get(b) ?? 0));
    const id = ready.shift()!;
    ordered.push(id);
    for (const t of next.get(id) ?? []) {
      const d = (indegree.get(t) ?? 0) - 1;
      indegree.set(t, d);
      if (d === 0) ready.push(t);
    }
  }
  const cycle = ordered.length < nodes.length;
  if (cycle) for (const n of nodes) if (!ordered.includes(n.id)) ordered.push(n.id);
  const steps = ordered.map((id, i) => {
    const n = nodes[index.get(id)!]!;
    return {
      order: i + 1,
      id,
      name: n.data?.name || id,
      job: n.data?.job || n.type || 'unknown',
      after: (prev.get(id) ?? []).map(label),
    };
  });
  return { steps, cycle };
}

const MAX_STEPS_LISTED = 40;

export function summarizeScript(s: Script, projectId: string): ScriptSummary {
  const inputs = Array.isArray(s.inputs) ? s.inputs : [];
  const { steps } = outlineGraph(s.value);
  const lines = steps.slice(0, MAX_STEPS_LISTED).map((st) => `${st.order}. ${st.name} [${st.job}]`);
  if (steps.length > MAX_STEPS_LISTED)
    lines.push(`… ${steps.length - MAX_STEPS_LISTED} more in ${scriptUri(projectId, s.id)}`);
  return {
    id: s.id,
    name: s.name ?? undefined,
    inputs: inputs.map((i) => ({
      name: i.name ?? undefined,
      label: i.label ?? undefined,
      type: i.type ?? undefined,
      example: i.example ?? undefined,
      placeholder: i.placeholder ?? undefined,
    })),
    graph: { nodes: s.value?.nodes?.length ?? 0, edges: s.value?.edges?.length ?? 0, steps: lines },
    resource_uri: scriptUri(s.project_id ?? projectId, s.id),
  };
}

/** A readable outline of a script for its resource: inputs, then the steps in dependency order. */
export function scriptOutlineMarkdown(s: Script): string {
  const { steps, cycle } = outlineGraph(s.value);
  const inputs = Array.isArray(s.inputs) ? s.inputs : [];
  const out = [`# ${s.name ?? s.id}`, '', '## Inputs'];
  if (!inputs.length) out.push('(none)');
  for (const i of inputs)
    out.push(
      `- ${i.name ?? '?'} (${i.type ?? 'text'})${i.label ? `: ${i.label}` : ''}${i.example ? ` — e.g. "${i.example}"` : ''}`,
    );
  out.push('', '## Steps, in dependency order');
  if (!steps.length) out.push('(the graph has no steps)');
  for (const st of steps)
    out.push(`${st.order}. ${st.name} — ${st.job}${st.after.length ? ` (after ${st.after.join(', ')})` : ''}`);
  if (cycle)
    out.push('', 'Note: the graph has a cycle; the steps caught in it are listed last, in their stored order.');
  return out.join('\n');
}
