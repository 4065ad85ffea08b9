// The hosted fetcher's address rules (api/url-fetch.ts): what import_media {url} may connect to.
import { describe, expect, it } from 'vitest';
import { addressAllowed, allowList } from '../../src/api/url-fetch.js';

const none = allowList([]);

describe('addressAllowed', () => {
  it('refuses private, loopback, link-local, shared, metadata and reserved addresses, in either family', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '64:ff9b::a9fe:a9fe',
    ])
      expect(addressAllowed(a, none), a).toBe(false);
  });
  it('lets public addresses through', () => {
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(addressAllowed(a, none), a).toBe(true);
  });
  it("lets through only what the operator's exceptions name", () => {
    const allowed = allowList(['127.0.0.1/32', '10.9.0.0/16']);
    expect(addressAllowed('127.0.0.1', allowed)).toBe(true);
    expect(addressAllowed('127.0.0.2', allowed)).toBe(false);
    expect(addressAllowed('10.9.3.4', allowed)).toBe(true);
    expect(addressAllowed('10.8.3.4', allowed)).toBe(false);
    expect(addressAllowed('169.254.169.254', allowed)).toBe(false);
  });
});
