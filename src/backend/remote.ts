// The Backend over the service's HTTP API (api/). The service names assets by storage key: the assets cutroom
// rendered there are named by the file names cutroom gave them (remembered-assets.ts).
import { ServiceClient, type ServiceClientOptions } from '../api/client.js';
import { parseRenderReceipt, type Project } from '../api/models.js';
import type { Edit } from '../edit/model.js';
import { forService } from '../edit/service-form.js';
import type { RememberedAssets } from './remembered-assets.js';
import type { Backend, CallOptions, CreateProjectInput, RenderOptions } from './types.js';

export class RemoteBackend implements Backend {
  readonly kind = 'remote' as const;
  readonly description: string;
  readonly client: ServiceClient;

  /** `remembered`: where the names cutroom gives the service's assets (its renders' file names) are kept. */
  constructor(
    opts: ServiceClientOptions,
    private readonly remembered?: RememberedAssets,
  ) {
    this.client = new ServiceClient(opts);
    this.description = `the service at ${new URL(opts.baseUrl).origin}`;
  }

  async listProjects(limit: number | undefined, call?: CallOptions) {
    return { projects: await this.client.listProjects(limit, call) };
  }
  async getProject(projectId: string, call?: CallOptions): Promise<Project> {
    const project = await this.client.getProject(projectId, call);
    if (!this.remembered || !project.assets?.length) return project;
    // The name cutroom gave an asset wins over the service's fields (its storage key).
    const known = await this.remembered.recall(project.assets.map((a) => a.id));
    if (!known.size) return project;
    return {
      ...project,
      assets: project.assets.map((a) => {
        const r = known.get(a.id);
        return r ? { ...a, name: r.name, ...(r.render ? { render: true } : {}) } : a;
      }),
    };
  }
  createProject(input: CreateProjectInput, call?: CallOptions) {
    return this.client.createProject(input, call);
  }
  deleteProject(projectId: string, call?: CallOptions) {
    return this.client.deleteProject(projectId, call);
  }
  listScripts(projectId: string, limit: number | undefined, call?: CallOptions) {
    return this.client.listScripts(projectId, limit, call);
  }
  async createEdit(projectId: string, edit: Edit, call?: CallOptions, render: RenderOptions = {}) {
    // cutroom's own mix fields are not the service's: what it can carry is folded in, the rest left out (render_edit
    // says which in its warnings).
    const receipt = parseRenderReceipt(
      await this.client.createEdit(projectId, forService(edit, render.sources).edit, call),
    );
    if (receipt.asset_id && edit.video_output_filename)
      await this.remembered?.remember(receipt.asset_id, { name: edit.video_output_filename, render: true });
    return receipt;
  }
  close() {
    return this.client.close();
  }
}
