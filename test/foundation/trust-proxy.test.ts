import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../controller/src/config';

const withProxy = (value: string | undefined) =>
  loadConfig({ SWITCHBOARD_SECRET_KEY: 'a'.repeat(64), SWITCHBOARD_DATA_DIR: '/tmp/sb-trust-proxy-test', SWITCHBOARD_TRUST_PROXY: value }).trustProxy;

describe('SWITCHBOARD_TRUST_PROXY', () => {
  it('is off unless set', () => {
    for (const value of [undefined, '', 'off', 'false', '0']) expect(withProxy(value)).toBe(false);
  });

  it('takes a hop count or a list of proxy addresses, CIDR ranges and named ranges', () => {
    expect(withProxy('2')).toBe(2);
    expect(withProxy('10.0.0.5, 10.1.0.0/16,fd00::/8, loopback')).toEqual(['10.0.0.5', '10.1.0.0/16', 'fd00::/8', 'loopback']);
  });

  it('refuses "trust everyone" and anything it cannot read, naming the setting', () => {
    for (const value of ['true', 'on', '10.0.0.300', '10.0.0.0/33', 'proxy.example.com', '11']) {
      expect(() => withProxy(value), value).toThrow(ConfigError);
      expect(() => withProxy(value), value).toThrow(/SWITCHBOARD_TRUST_PROXY/);
    }
  });
});
