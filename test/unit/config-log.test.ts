import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childEnvironment, loadConfig } from '../../src/config.js';
import { addSecret, createLogger, redact } from '../../src/log.js';
import { VERSION } from '../../src/version.js';

describe('config', () => {
  it('serves HTTP with --http (or --port or --host), on loopback by default', () => {
    expect(loadConfig({}).http).toBeUndefined();
    expect(loadConfig({}, ['--http']).http).toEqual({
      port: 8808,
      host: '127.0.0.1',
      token: undefined,
      allowedOrigins: [],
      allowedHosts: [],
      useServerKey: false,
      noAuth: false,
      maxBodyMb: 16,
      callerFfmpeg: 2,
      drainMs: 30000,
      linkTtlS: 3600,
      uploadMaxMb: 4096,
      uploadTtlS: 86_400,
    });
    expect(loadConfig({}, ['--port', '9000', '--host=0.0.0.0']).http).toMatchObject({ port: 9000, host: '0.0.0.0' });
    // The variables set the address; only the command line switches from stdio (a client's env never does).
    expect(loadConfig({ CUTROOM_HTTP_PORT: '7000' }).http).toBeUndefined();
    expect(loadConfig({ CUTROOM_HTTP_PORT: '7000', CUTROOM_HTTP_HOST: '::1' }, ['--http']).http).toMatchObject({
      port: 7000,
      host: '::1',
    });
    expect(loadConfig({ CUTROOM_HTTP_PORT: '7000' }, ['--http', '--port', '7001']).http?.port).toBe(7001);
    expect(
      loadConfig(
        { CUTROOM_HTTP_ALLOWED_ORIGINS: 'https://a.example, https://b.example', CUTROOM_HTTP_USE_SERVER_KEY: 'true' },
        ['--http'],
      ).http,
    ).toMatchObject({ allowedOrigins: ['https://a.example', 'https://b.example'], useServerKey: true });
    // Origins are compared as a browser sends them: written with a trailing slash, upper case or a default port,
    // they still match; a path, a wildcard or another scheme is refused at start.
    expect(
      loadConfig(
        { CUTROOM_HTTP_ALLOWED_ORIGINS: 'HTTPS://App.Example.com/,http://a.example:80,http://b.example:8080' },
        ['--http'],
      ).http?.allowedOrigins,
    ).toEqual(['https://app.example.com', 'http://a.example', 'http://b.example:8080']);
    for (const bad of ['*', 'https://a.example/app', 'app.example.com', 'file:///tmp', 'https://a.example?x=1']) {
      expect(() => loadConfig({ CUTROOM_HTTP_ALLOWED_ORIGINS: bad }, ['--http']), bad).toThrow(
        /CUTROOM_HTTP_ALLOWED_ORIGINS lists origins such as https:\/\/app\.example\.com/,
      );
    }
    expect(() => loadConfig({}, ['--serve'])).toThrow(
      /unknown argument --serve: cutroom takes --http \[--port N\] \[--host H\]/,
    );
    expect(() => loadConfig({}, ['--port'])).toThrow(/--port needs a value/);
    expect(() => loadConfig({}, ['--port', '70000'])).toThrow(/CUTROOM_HTTP_PORT \(--port\) must be at most 65535/);
    expect(() => loadConfig({ CUTROOM_HTTP_TOKEN: 'short' }, ['--http'])).toThrow(
      /CUTROOM_HTTP_TOKEN must be at least 16 visible ASCII characters/,
    );
    // A token no client could send as a bearer is refused at start, not by a 401 on every request.
    for (const token of ['correct horse battery staple', 'pässwörd-ünïcode-1234', 'tab\tseparated-token-1234']) {
      expect(() => loadConfig({ CUTROOM_HTTP_TOKEN: token }, ['--http']), token).toThrow(
        /without spaces \(it is sent as Authorization: Bearer <token>\)/,
      );
    }
    expect(loadConfig({ CUTROOM_HTTP_TOKEN: 'A1b2-C3d4_E5f6.G7h8~' }, ['--http']).http?.token).toBe(
      'A1b2-C3d4_E5f6.G7h8~',
    );
  });

  it('has sensible defaults', () => {
    expect(loadConfig({ HOME: '/home/u' })).toEqual({
      backend: 'local',
      dataDir: '/home/u/.local/share/cutroom',
      allowedDirs: [process.cwd()],
      apiUrl: 'https://api.video-jungle.com',
      authHeader: 'x-api-key',
      timeoutMs: 30000,
      logLevel: 'info',
      apiKey: undefined,
      renderWaitMs: 45000,
      renderPollMs: 1000,
      cacheDir: '/home/u/.cache/cutroom',
      maxFfmpeg: 2,
      ffmpegMaxInputs: 16,
      previewKeep: 20,
      previewMaxMb: 2048,
      resourcePartBytes: 3145728,
      queueLogMs: 60000,
      fetch: { allowHttp: false, allowAddresses: [], dnsServers: [], maxMb: 4096, timeoutS: 1800, stallS: 30 },
    });
    expect(loadConfig({ XDG_CACHE_HOME: '/x/cache' }).cacheDir).toBe('/x/cache/cutroom');
    expect(loadConfig({ XDG_DATA_HOME: '/x/data' }).dataDir).toBe('/x/data/cutroom');
    expect(loadConfig({ VJ_API_KEY: 'k' }).backend).toBe('remote');
    expect(loadConfig({ VJ_API_KEY: 'k', VJ_BACKEND: 'local' }).backend).toBe('local');
    expect(loadConfig({ CUTROOM_ALLOWED_DIRS: '/a:/b/c' }).allowedDirs).toEqual(['/a', '/b/c']);
    expect(() => loadConfig({ VJ_BACKEND: 'cloud' })).toThrow(/VJ_BACKEND must be local or remote/);
    expect(() => loadConfig({ CUTROOM_DATA_DIR: 'data' })).toThrow(/CUTROOM_DATA_DIR must be an absolute path/);
    expect(() => loadConfig({ CUTROOM_CACHE_DIR: 'relative/dir' })).toThrow(
      /CUTROOM_CACHE_DIR must be an absolute path/,
    );
    expect(() => loadConfig({ CUTROOM_MAX_FFMPEG: '0' })).toThrow(/CUTROOM_MAX_FFMPEG must be at least 1/);
    expect(loadConfig({ CUTROOM_RENDER_POLL_MS: '250' }).renderPollMs).toBe(250);
    expect(() => loadConfig({ CUTROOM_RENDER_POLL_MS: '5' })).toThrow(/CUTROOM_RENDER_POLL_MS must be at least 20/);
    expect(loadConfig({ CUTROOM_RESOURCE_PART_BYTES: '49152' }).resourcePartBytes).toBe(49152);
    expect(() => loadConfig({ CUTROOM_RESOURCE_PART_BYTES: '999' })).toThrow(
      /CUTROOM_RESOURCE_PART_BYTES must be at least 3072/,
    );
    expect(() => loadConfig({ CUTROOM_RESOURCE_PART_BYTES: String(4 * 1024 * 1024) })).toThrow(
      /CUTROOM_RESOURCE_PART_BYTES must be at most 3145728/,
    );
    expect(() => loadConfig({ CUTROOM_RESOURCE_PART_BYTES: '65536' })).toThrow(
      /CUTROOM_RESOURCE_PART_BYTES must be a multiple of 3/,
    );
  });
  it('reads every variable and trims the base URL', () => {
    const c = loadConfig({
      VJ_API_KEY: ' k-123 ',
      VJ_API_URL: 'http://127.0.0.1:9/api/',
      VJ_AUTH_HEADER: 'Bearer',
      VJ_TIMEOUT_MS: '1500',
      CUTROOM_LOG_LEVEL: 'debug',
    });
    expect(c).toMatchObject({
      apiKey: 'k-123',
      apiUrl: 'http://127.0.0.1:9/api',
      authHeader: 'bearer',
      timeoutMs: 1500,
      logLevel: 'debug',
    });
    expect(
      loadConfig({ FFMPEG_PATH: '/opt/ff/ffmpeg', FFPROBE_PATH: '/opt/ff/ffprobe', PATH: '/usr/bin' }),
    ).toMatchObject({ ffmpegPath: '/opt/ff/ffmpeg', ffprobePath: '/opt/ff/ffprobe', searchPath: '/usr/bin' });
  });
  it('refuses bad values with a message naming the variable, never the value', () => {
    expect(() => loadConfig({ VJ_TIMEOUT_MS: 'soon' })).toThrow(/VJ_TIMEOUT_MS must be a whole number/);
    expect(() => loadConfig({ VJ_TIMEOUT_MS: '5' })).toThrow(/VJ_TIMEOUT_MS must be at least 100/);
    expect(() => loadConfig({ CUTROOM_RENDER_WAIT_MS: '90000' })).toThrow(
      /CUTROOM_RENDER_WAIT_MS must be at most 55000/,
    );
    expect(() => loadConfig({ VJ_AUTH_HEADER: 'cookie' })).toThrow(/VJ_AUTH_HEADER must be x-api-key or bearer/);
    expect(() => loadConfig({ VJ_API_URL: 'secret-looking-value' })).toThrow(/VJ_API_URL must be/);
    try {
      loadConfig({ VJ_API_URL: 'secret-looking-value' });
    } catch (e) {
      expect(String(e)).not.toContain('secret-looking-value');
    }
  });
  it('takes the job queue from CUTROOM_QUEUE_URL, and `worker` runs its jobs (only with one)', () => {
    expect(loadConfig({}).queueUrl).toBeUndefined();
    expect(loadConfig({ CUTROOM_QUEUE_URL: 'redis://:pw@10.0.0.5:6379/2' }).queueUrl).toBe(
      'redis://:pw@10.0.0.5:6379/2',
    );
    expect(() => loadConfig({ CUTROOM_QUEUE_URL: 'http://10.0.0.5' })).toThrow(
      /CUTROOM_QUEUE_URL must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    expect(() => loadConfig({}, ['worker'])).toThrow(/cutroom worker runs the job queue's jobs: set CUTROOM_QUEUE_URL/);
    const w = loadConfig({ CUTROOM_QUEUE_URL: 'redis://127.0.0.1:6379', CUTROOM_WORKER_CONCURRENCY: '3' }, ['worker']);
    expect(w.worker).toEqual({
      concurrency: 3,
      lockMs: 15_000,
      drainMs: 30_000,
      healthHost: '127.0.0.1',
      healthPort: undefined,
    });
    expect(
      loadConfig({ CUTROOM_QUEUE_URL: 'redis://127.0.0.1:6379', CUTROOM_WORKER_HEALTH_PORT: '9090' }, ['worker'])
        .worker!.healthPort,
    ).toBe(9090);
    expect(w.http).toBeUndefined();
    expect(loadConfig({ CUTROOM_QUEUE_URL: 'redis://127.0.0.1:6379' }, ['worker']).worker!.concurrency).toBeGreaterThan(
      0,
    );
    expect(() => loadConfig({ CUTROOM_QUEUE_URL: 'redis://127.0.0.1:6379' }, ['worker', '--http'])).toThrow(
      /cutroom worker takes no arguments but --help/,
    );
    // The URL may hold Redis' password: no child is given it.
    expect(childEnvironment({ CUTROOM_QUEUE_URL: 'redis://:pw@h', PATH: '/bin' })).toEqual({ PATH: '/bin' });
  });

  it("reads the settings of running a queue: /healthz of workers, /metrics' token", () => {
    const q = { CUTROOM_QUEUE_URL: 'redis://127.0.0.1:6379' };
    expect(
      loadConfig({ ...q, CUTROOM_WORKER_HEALTH_PORT: '8809', CUTROOM_WORKER_HEALTH_HOST: '0.0.0.0' }, ['worker'])
        .worker,
    ).toMatchObject({ healthPort: 8809, healthHost: '0.0.0.0' });
    expect(loadConfig(q, ['worker']).worker!.healthPort).toBeUndefined();
    expect(() => loadConfig({ ...q, CUTROOM_WORKER_HEALTH_PORT: '70000' }, ['worker'])).toThrow(
      /CUTROOM_WORKER_HEALTH_PORT must be at most 65535/,
    );
    expect(loadConfig({ CUTROOM_METRICS_TOKEN: 'm'.repeat(16) }, ['--http']).http!.metricsToken).toBe('m'.repeat(16));
    expect(() => loadConfig({ CUTROOM_METRICS_TOKEN: 'short' }, ['--http'])).toThrow(
      /CUTROOM_METRICS_TOKEN must be at least 16/,
    );
    expect(childEnvironment({ CUTROOM_METRICS_TOKEN: 'm'.repeat(16), PATH: '/bin' })).toEqual({ PATH: '/bin' });
  });

  it('takes the object store from CUTROOM_S3_* (with a queue), never echoing a value; children get no AWS credentials', () => {
    const q = { CUTROOM_QUEUE_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig(q).s3).toBeUndefined();
    const c = loadConfig({
      ...q,
      CUTROOM_S3_BUCKET: 'cutroom-previews',
      CUTROOM_S3_ENDPOINT: 'http://minio:9000/',
      CUTROOM_S3_PREFIX: '/team/prod/',
      AWS_SECRET_ACCESS_KEY: 'sekrit-value',
    });
    expect(c.s3).toEqual({
      bucket: 'cutroom-previews',
      region: 'us-east-1',
      endpoint: 'http://minio:9000',
      prefix: 'team/prod/',
      hide: ['sekrit-value'],
    });
    expect(loadConfig({ ...q, CUTROOM_S3_BUCKET: 'b-1', CUTROOM_S3_REGION: 'eu-west-3' }).s3).toMatchObject({
      region: 'eu-west-3',
      prefix: '',
    });
    expect(() => loadConfig({ CUTROOM_S3_BUCKET: 'cutroom-previews' })).toThrow(
      /CUTROOM_S3_BUCKET .* needs CUTROOM_QUEUE_URL/,
    );
    expect(() => loadConfig({ ...q, CUTROOM_S3_ENDPOINT: 'http://minio:9000' })).toThrow(
      /CUTROOM_S3_ENDPOINT is set but CUTROOM_S3_BUCKET is not/,
    );
    expect(() => loadConfig({ ...q, CUTROOM_S3_BUCKET: 'Bad_Bucket' })).toThrow(
      /CUTROOM_S3_BUCKET must be a bucket name/,
    );
    expect(() => loadConfig({ ...q, CUTROOM_S3_BUCKET: 'b-1', CUTROOM_S3_PREFIX: 'a/../b' })).toThrow(
      /CUTROOM_S3_PREFIX must be folder names/,
    );
    expect(() => loadConfig({ ...q, CUTROOM_S3_BUCKET: 'b-1', CUTROOM_S3_PREFIX: 'a b' })).toThrow(
      /CUTROOM_S3_PREFIX must be folder names/,
    );
    // Credentials belong in AWS_*: an endpoint carrying them is refused, and not shown.
    try {
      loadConfig({ ...q, CUTROOM_S3_BUCKET: 'b-1', CUTROOM_S3_ENDPOINT: 'http://key:hunter2-secret@minio:9000' });
      expect.unreachable();
    } catch (e) {
      expect(String(e)).toMatch(/CUTROOM_S3_ENDPOINT must be an http\(s\) URL without credentials/);
      expect(String(e)).not.toContain('hunter2-secret');
    }
    expect(
      childEnvironment({ AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't', PATH: '/bin' }),
    ).toEqual({ PATH: '/bin' });
  });

  it('keeps src/version.ts equal to package.json', () => {
    expect(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version).toBe(VERSION);
  });
});

describe('logging', () => {
  it('drops signed URL queries and registered secrets', () => {
    addSecret('sk-live-abcdef');
    expect(redact('GET https://b.s3.amazonaws.com/k.mp4?AWSAccessKeyId=A&Signature=S&Expires=1 failed')).toBe(
      'GET https://b.s3.amazonaws.com/k.mp4?[redacted] failed',
    );
    expect(redact('key sk-live-abcdef leaked')).toBe('key [redacted] leaked');
  });
  it('writes at or above its level only', () => {
    const lines: string[] = [];
    const log = createLogger('warn', (l) => lines.push(l));
    log.info('quiet');
    log.warn('loud');
    expect(lines).toEqual(['cutroom warn: loud\n']);
  });
  it('announces where it listens whatever the level, redacted like any line', () => {
    const lines: string[] = [];
    const log = createLogger('error', (l) => lines.push(l));
    log.info('quiet');
    log.announce('listening on http://127.0.0.1:8808/mcp?token=abc');
    expect(lines).toEqual(['cutroom: listening on http://127.0.0.1:8808/mcp?[redacted]\n']);
  });
});
