// The Backend over the service's HTTP API.
import { ServiceClient, type ServiceClientOptions } from '../api/client.js';
import { parseRenderReceipt } from '../api/models.js';
import type { Edit } from '../edit/model.js';
import type { Backend, CallOptions, CreateProjectInput } from './types.js';

export class RemoteBackend implements Backend {
  readonly kind = 'remote' as const;
  readonly description: string;
  readonly client: ServiceClient;

  constructor(opts: ServiceClientOptions) {
    this.client = new ServiceClient(opts);
    this.description = `the service at ${new URL(opts.baseUrl).origin}`;
  }

  async listProjects(limit: number | undefined, call?: CallOptions) {
    return { projects: await this.client.listProjects(limit, call) };
  }
  getProject(projectId: string, call?: CallOptions) {
    return this.client.getProject(projectId, call);
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
  async createEdit(projectId: string, edit: Edit, call?: CallOptions) {
    return parseRenderReceipt(await this.client.createEdit(projectId, edit, call));
  }
  close() {
    return this.client.close();
  }
}
