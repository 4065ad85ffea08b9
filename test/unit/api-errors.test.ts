import { describe, expect, it } from 'vitest';
import { describeErrorBody, httpError } from '../../src/api/errors.js';
import { jitteredBackoff, parseRetryAfter } from '../../src/api/client.js';

describe('error bodies', () => {
  it('reads detail as a string', () => {
    expect(describeErrorBody('{"detail":"Project not found"}', 'application/json')).toBe('Project not found');
  });
  it('reads a FastAPI-style validation list as "where: what"', () => {
    const body = JSON.stringify({
      detail: [
        { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
        { loc: ['query', 'limit'], msg: 'Input should be a valid integer' },
      ],
    });
    expect(describeErrorBody(body, 'application/json')).toBe(
      'body.name: Field required; query.limit: Input should be a valid integer',
    );
  });
  it('reduces HTML to its title, never markup', () => {
    const html =
      '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><script>x()</script></body></html>';
    expect(describeErrorBody(html, 'text/html')).toBe('502 Bad Gateway');
    expect(describeErrorBody('<html><body><p>Down   for\nmaintenance</p></body></html>', 'text/html')).toBe(
      'Down for maintenance',
    );
  });
  it('passes plain text on one line and gives nothing for an empty body', () => {
    expect(describeErrorBody('upstream\nconnect error', 'text/plain')).toBe('upstream connect error');
    expect(describeErrorBody('   ', 'text/plain')).toBeUndefined();
  });
  it('cuts very long messages', () => {
    expect(describeErrorBody('x'.repeat(5000))!.length).toBeLessThanOrEqual(300);
  });
  it('builds one error with the status and the service message', () => {
    const e = httpError(422, '{"detail":[{"loc":["body","name"],"msg":"Field required"}]}', 'application/json');
    expect(e.status).toBe(422);
    expect(e.message).toBe('the service answered 422 (unprocessable entity): body.name: Field required');
  });
});

describe('retry timing', () => {
  it('honours Retry-After in seconds or as a date, capped at a minute', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('9999')).toBe(60_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
  it('backs off exponentially with jitter in [cap/2, cap]', () => {
    expect(jitteredBackoff(100, 0, () => 0)).toBe(50);
    expect(jitteredBackoff(100, 2, () => 1)).toBe(400);
    expect(jitteredBackoff(100, 3, () => 0.5)).toBe(600);
  });
});
