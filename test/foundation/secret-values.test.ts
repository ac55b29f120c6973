/**
 * How the agent (what it reports) and the controller (what it shows) find secret values in text:
 * one pattern (shared/src/secrets/value-pattern.ts), so both mask the same places. Short values
 * are found only as whole words, credentials and long values anywhere.
 */
import { describe, expect, it } from 'vitest';
import { makeMask } from '../../agent/src/jobs/context';
import { SecretVariables } from '../../controller/src/stacks/secret-variables';

const credentials = { username: 'admin', password: 'Pa55word!' };

describe('secret values in text', () => {
  it('the agent masks a short secret variable as a whole word only, credentials and long values anywhere', () => {
    const mask = makeMask(credentials, ['md5', '100', 'LongSecretValue']);
    expect(mask('authentication hmac-md5-96 key md5')).toBe('authentication hmac-md5-96 key ********');
    expect(mask('ip address 10.0.100.1 255.255.255.0')).toBe('ip address 10.0.100.1 255.255.255.0');
    expect(mask("rejected 'snmp-server community 100 RO'")).toBe("rejected 'snmp-server community ******** RO'");
    expect(mask('key xLongSecretValuex and Pa55word!Pa55word!')).toBe('key x********x and ****************');
  });

  it('the controller hides the same places, each with its keyed mask', () => {
    const secrets = new SecretVariables((v) => `<m:${v.length}>`);
    expect(secrets.hide('authentication hmac-md5-96 key md5', ['md5'])).toBe('authentication hmac-md5-96 key <m:3>');
    expect(secrets.hide('10.0.100.1 and 100', ['100', 'on'])).toBe('10.0.100.1 and <m:3>');
  });

  it('a stored value comes back for its mask only under a variable of the same name', () => {
    const secrets = new SecretVariables((v) => `<secret:${Buffer.from(v).toString('hex').slice(0, 8).padEnd(8, '0')}>`);
    const stored = { '0': { shared_vars: { enable_secret: 'En4ble', snmp_community: 'C0mm' } } };
    const shown = secrets.shown(stored);
    // Reordered (another service position), the same name: kept.
    expect(secrets.kept({ '1': { shared_vars: { enable_secret: shown['0'].shared_vars.enable_secret } } }, stored, 'v')).toEqual({
      '1': { shared_vars: { enable_secret: 'En4ble' } },
    });
    // Moved under another name: refused, it would put one secret where a template may show it.
    expect(() => secrets.kept({ '0': { shared_vars: { snmp_community: shown['0'].shared_vars.enable_secret } } }, stored, 'v')).toThrow(
      /v\.0\.shared_vars\.snmp_community holds the mask .* which stands for no value stored under that name/,
    );
  });
});
