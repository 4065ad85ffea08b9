// What a checked edit is: an edit linted against its project's media, with the assets it uses and what was found of
// them (CheckedEdit). check-edit.ts makes one; previews, renders, exports and the jobs seam take it.
import type { Asset, Project } from '../api/models.js';
import type { AssetInfo, LintResult } from '../edit/lint.js';
import type { TimelineSummary } from '../edit/plan.js';
import type { MediaSource } from '../media/input.js';

export interface ProjectAsset extends AssetInfo {
  asset: Asset;
  source?: MediaSource;
}

export interface CheckedEdit extends LintResult {
  project: Project;
  projectId: string;
  assets: Map<string, ProjectAsset>;
  summary?: TimelineSummary;
  /** Checks that could not run, with the reason and the fix. */
  skipped: string[];
  /** What was decided along the way that is not a problem, e.g. which shot list a clip's shot came from. */
  notes: string[];
  /** The fade at every edit of the sound, ms (audio_fade_ms, or its default). */
  fadeMs: number;
  /** The id the edit is kept under, once it is ready (checkAndKeep). */
  editId?: string;
}
