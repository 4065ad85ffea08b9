// Zod models of the service's resources (service-interface.md, section 2).
// Lenient on purpose: the doc does not say which response fields are guaranteed, so only the ids we
// cannot work without are required, unknown fields pass through, and nulls are tolerated everywhere.
import { z } from 'zod';

const text = z.string().nullish();

/** ISO 8601 date-time without a zone offset, with microseconds, e.g. 2024-05-01T12:34:56.123456 (UTC). */
export const ServiceTimestamp = z.string();

export const AssetSchema = z.looseObject({
  id: z.string(),
  keyname: text,
  url: text,
  download_url: text,
  asset_path: text,
  asset_type: text,
  created_at: ServiceTimestamp.nullish(),
  status: text,
  uploaded: z.boolean().nullish(),
});
export type Asset = z.infer<typeof AssetSchema>;

export const ProjectSchema = z.looseObject({
  id: z.string(),
  name: text,
  description: text,
  data: z.unknown().optional(),
  created_at: ServiceTimestamp.nullish(),
  owner_id: text,
  asset_count: z.number().nullish(),
  assets: z.array(AssetSchema).nullish(),
});
export type Project = z.infer<typeof ProjectSchema>;

export const InputSchema = z.looseObject({
  id: z.union([z.number(), z.string()]).nullish(),
  name: text,
  type: text,
  label: text,
  example: text,
  placeholder: text,
});
export type ScriptInput = z.infer<typeof InputSchema>;

export const GraphNodeSchema = z.looseObject({
  id: z.string(),
  type: text,
  data: z.looseObject({ job: text, data: z.unknown().optional(), face: text, name: text }).nullish(),
});
export const GraphEdgeSchema = z.looseObject({
  id: z.string().nullish(),
  source: z.string(),
  target: z.string(),
});
export const GraphSchema = z.looseObject({
  nodes: z.array(GraphNodeSchema).nullish(),
  edges: z.array(GraphEdgeSchema).nullish(),
});
export type Graph = z.infer<typeof GraphSchema>;

export const ScriptSchema = z.looseObject({
  id: z.string(),
  name: text,
  project_id: text,
  // The interface doc's model calls it a string, yet responses carry a list of objects: accept both.
  inputs: z.union([z.array(InputSchema), z.string()]).nullish(),
  value: GraphSchema.nullish(),
  manuscript: z.unknown().optional(),
  manuscript_persona: z.unknown().optional(),
  created_at: ServiceTimestamp.nullish(),
  project: z.unknown().optional(),
});
export type Script = z.infer<typeof ScriptSchema>;

/** The doc does not show the list envelope: accept a bare array or the usual wrappers. */
export function unwrapList(body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (body && typeof body === 'object') {
    for (const key of ['items', 'projects', 'results', 'data', 'scripts']) {
      const v = (body as Record<string, unknown>)[key];
      if (Array.isArray(v)) return v;
    }
  }
  return undefined;
}

/** Parses a zone-less service timestamp as UTC. Returns undefined when it is not a date. */
export function parseServiceTimestamp(value: string | null | undefined): Date | undefined {
  if (!value) return undefined;
  const hasZone = /(Z|[+-]\d\d:?\d\d)$/i.test(value);
  // Date keeps milliseconds only; cut microseconds so every engine parses it.
  const trimmed = value.replace(/(\.\d{3})\d+/, '$1');
  const d = new Date(hasZone ? trimmed : `${trimmed}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** Formats a date the way the service does: UTC, no zone offset, microseconds. */
export function formatServiceTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000`;
}

/** The expiry of a signed link, from its epoch `Expires` (or X-Amz-Date + X-Amz-Expires) query. */
export function signedUrlExpiry(url: string | null | undefined): Date | undefined {
  if (!url) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const q = u.searchParams;
  const epoch = q.get('Expires') ?? q.get('expires');
  if (epoch && /^\d+$/.test(epoch)) return new Date(Number(epoch) * 1000);
  const amzDate = q.get('X-Amz-Date');
  const amzExpires = q.get('X-Amz-Expires');
  if (amzDate && amzExpires && /^\d{8}T\d{6}Z$/.test(amzDate) && /^\d+$/.test(amzExpires)) {
    const iso = `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`;
    return new Date(Date.parse(iso) + Number(amzExpires) * 1000);
  }
  return undefined;
}

/** What a create-edit answer tells us. The doc shows only `url`; ids are read where the service gives them. */
export interface RenderReceipt {
  asset_id?: string;
  edit_id?: string;
  url?: string;
  status?: string;
}

export function parseRenderReceipt(body: unknown): RenderReceipt {
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const nested = b.asset && typeof b.asset === 'object' ? (b.asset as Record<string, unknown>) : undefined;
  const explicitAsset = str(b.asset_id) ?? str(nested?.id);
  // With no asset_id, the answer is the asset itself ("an asset with a url field") and its id is the asset's.
  const assetId = explicitAsset ?? str(b.id);
  const editId = str(b.edit_id) ?? (explicitAsset ? str(b.id) : undefined);
  const receipt: RenderReceipt = {};
  if (assetId) receipt.asset_id = assetId;
  if (editId) receipt.edit_id = editId;
  const url = str(b.url) ?? str(nested?.url);
  if (url) receipt.url = url;
  const status = str(b.status) ?? str(nested?.status);
  if (status) receipt.status = status;
  return receipt;
}
