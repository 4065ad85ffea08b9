// Signed, expiring upload links for callers over HTTP (import_media {upload}): what a link says (the upload's id, the
// project it goes into, the name it is imported as, whose it is, its size cap, until when) and its HMAC with the
// server's link secret. Made here for the tool; checked by http/uploads.ts, which takes the upload (tus) and imports
// it when complete. Pure: no I/O, no clock but the one handed in.
import { openClaim, signClaim } from './signed-claims.js';
import type { ImportedMedia } from '../backend/types.js';

/** What an upload link names, as signed. */
export interface UploadClaim {
  /** The upload's id (what import_media {upload_id} names). */
  id: string;
  project: string;
  /** The name the asset is imported as. */
  name: string;
  /** Whose it is: the caller's key (callerKeyOf), never a credential. */
  caller: string;
  /** The most bytes the upload may hold. */
  max: number;
  /** Unix seconds after which the link is refused. */
  expires: number;
}

/** Where an upload stands, as its caller sees it ('unknown' for another caller's too). */
export type UploadState =
  | { state: 'unknown' }
  | { state: 'waiting'; expiresAt: string }
  | { state: 'receiving'; received: number; total: number }
  | { state: 'failed'; reason: string }
  | { state: 'done'; project: string; media: ImportedMedia };

/** One caller's uploads, as the tool sees them. */
export interface Uploads {
  /** The most bytes an upload may hold on this server. */
  maxBytes: number;
  /** The origin upload links start with (what a view declares in its CSP connectDomains to reach them). */
  origin: string;
  /** A new upload link into a project, kept as waiting. */
  open(project: string, name: string, maxBytes: number): Promise<{ id: string; url: string; expiresAt: string }>;
  status(id: string): Promise<UploadState>;
}

/** The token of an upload link: its claim and the claim's HMAC. */
export function signUpload(secret: string, claim: UploadClaim): string {
  return signClaim(secret, 'upload', claim);
}

/**
 * What an upload link's token says, when its signature is the server's: `expired` when it is past its time.
 * Undefined for anything altered or not an upload link at all (answered alike: as an upload that never existed).
 */
export function readUpload(
  secret: string,
  token: string,
  nowMs: number,
): (UploadClaim & { expired: boolean }) | undefined {
  const claim = openClaim(secret, 'upload', token) as Partial<UploadClaim> | undefined;
  if (!claim) return undefined;
  if (
    typeof claim.id !== 'string' ||
    !/^[0-9a-f]{32}$/.test(claim.id) ||
    typeof claim.project !== 'string' ||
    typeof claim.name !== 'string' ||
    typeof claim.caller !== 'string' ||
    typeof claim.max !== 'number' ||
    typeof claim.expires !== 'number'
  )
    return undefined;
  return { ...(claim as UploadClaim), expired: nowMs >= claim.expires * 1000 };
}
