// The HTTP client against the local test service: what the service saw is the assertion.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { ServiceError } from '../../src/api/errors.js';
import { FakeService } from '../fixtures/service.mjs';

let service: FakeService;
let client: ServiceClient;
const make = (extra: Partial<ConstructorParameters<typeof ServiceClient>[0]> = {}) =>
  new ServiceClient({
    baseUrl: service.url,
    apiKey: service.apiKey,
    authHeader: 'x-api-key',
    timeoutMs: 5000,
    retryBaseDelayMs: 10,
    ...extra,
  });

beforeAll(async () => {
  service = await new FakeService().start();
  client = make();
});
afterAll(async () => {
  await client.close();
  await service.stop();
});
beforeEach(() => service.reset());

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected the call to fail');
}

describe('ServiceClient', () => {
  it('sends the key as X-API-Key and the limit as a query parameter', async () => {
    for (let i = 0; i < 3; i++) service.addProject({ name: `p${i}` });
    const projects = await client.listProjects(2);
    expect(projects).toHaveLength(2);
    expect(service.requests[0]).toMatchObject({ method: 'GET', path: '/projects', query: { limit: '2' } });
    expect(service.requests[0]!.headers['x-api-key']).toBe(service.apiKey);
  });

  it('sends a bearer token when told to', async () => {
    const bearerService = await new FakeService({ authHeader: 'bearer' }).start();
    const c = new ServiceClient({
      baseUrl: bearerService.url,
      apiKey: bearerService.apiKey,
      authHeader: 'bearer',
      timeoutMs: 5000,
    });
    await c.listProjects(undefined);
    expect(bearerService.requests[0]!.headers.authorization).toBe(`Bearer ${bearerService.apiKey}`);
    expect(bearerService.requests[0]!.headers['x-api-key']).toBeUndefined();
    await c.close();
    await bearerService.stop();
  });

  it('reuses its connections: consecutive calls open no new ones', async () => {
    const c = make();
    await c.listProjects(1);
    await c.listProjects(1);
    const warm = service.connections ?? 0;
    for (let i = 0; i < 10; i++) await c.listProjects(1);
    expect(service.connections).toBe(warm);
    await c.close();
  });

  it('turns 401 into an error with the status and the service message', async () => {
    const c = make({ apiKey: 'wrong' });
    const e = await failure(c.listProjects(undefined));
    expect(e.status).toBe(401);
    expect(e.detail).toBe('Could not validate credentials');
    await c.close();
  });

  it('retries GETs on 503 and 429, honouring Retry-After', async () => {
    service.fail({ status: 503, body: 'busy' }, { times: 1 });
    service.fail({ status: 429, body: '{"detail":"slow down"}', headers: { 'retry-after': '1' } }, { times: 1 });
    const started = Date.now();
    await client.listProjects(undefined);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(service.requests.filter((r) => r.method === 'GET')).toHaveLength(3);
  });

  it('gives up after 3 retries and reports the last failure', async () => {
    service.fail(
      { status: 502, contentType: 'text/html', body: '<html><title>502 Bad Gateway</title></html>' },
      { times: 10 },
    );
    const e = await failure(client.listProjects(undefined));
    expect(e.status).toBe(502);
    expect(e.message).not.toMatch(/</);
    expect(service.requests).toHaveLength(4);
  });

  it('retries GETs when the connection is cut', async () => {
    service.fail({ reset: true }, { times: 2 });
    await client.listProjects(undefined);
    expect(service.requests).toHaveLength(3);
  });

  it('never retries a POST or a DELETE', async () => {
    service.fail({ status: 503, body: '{"detail":"down"}' }, { times: 5 });
    const e = await failure(client.createProject({ name: 'x', description: '' }));
    expect(e.status).toBe(503);
    expect(e.maybeApplied).toBe(true);
    const p = service.addProject();
    await failure(client.deleteProject(p.id));
    expect(service.requests.filter((r) => r.method !== 'GET')).toHaveLength(2);
  });

  it('does not retry 4xx other than 429', async () => {
    const e = await failure(client.getProject('00000000-0000-4000-8000-000000000000'));
    expect(e.status).toBe(404);
    expect(service.requests).toHaveLength(1);
  });

  it('stops at the overall timeout, retries included', async () => {
    const c = make({ timeoutMs: 400 });
    // Each answer would take 5 s: only the 0.4 s deadline can end the call well before that.
    service.fail({ delayMs: 5000, status: 200, body: '[]' }, { times: 5 });
    const started = Date.now();
    const e = await failure(c.listProjects(undefined));
    expect(e.kind).toBe('timeout');
    expect(e.message).toBe('the service did not answer within 0.4 s');
    expect(Date.now() - started).toBeLessThan(3500);
    await c.close();
  });

  it('reports a service that is not there as a network error naming VJ_API_URL', async () => {
    const c = new ServiceClient({
      baseUrl: 'http://127.0.0.1:1',
      authHeader: 'x-api-key',
      timeoutMs: 2000,
      retryBaseDelayMs: 10,
    });
    const e = await failure(c.listProjects(undefined));
    expect(e.kind).toBe('network');
    expect(e.message).toMatch(/ECONNREFUSED.*VJ_API_URL/);
    await c.close();
  });

  it('refuses a 2xx answer that is not the documented shape', async () => {
    service.fail({ status: 200, body: '{"hello":"world"}' });
    const e = await failure(client.listProjects(undefined));
    expect(e.kind).toBe('invalid_response');
  });

  it('aborts when the caller cancels', async () => {
    service.fail({ delayMs: 2000, status: 200, body: '[]' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const e = await failure(client.listProjects(undefined, { signal: ac.signal }));
    expect(e.kind).toBe('cancelled');
  });

  it('keeps a path prefix of the base URL', async () => {
    const c = new ServiceClient({
      baseUrl: `${service.url}/v1`,
      apiKey: service.apiKey,
      authHeader: 'x-api-key',
      timeoutMs: 2000,
    });
    await failure(c.listProjects(undefined));
    expect(service.requests[0]!.path).toBe('/v1/projects');
    await c.close();
  });
});
