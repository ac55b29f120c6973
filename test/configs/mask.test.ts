import { describe, expect, it } from 'vitest';
import { MASK, maskSecrets } from '../../controller/src/configs/mask';

describe('maskSecrets', () => {
  it('masks the device credentials wherever they appear, longest first', () => {
    expect(maskSecrets('login netops/hunter2-long then hunter2', ['hunter2', 'hunter2-long'])).toBe(`login netops/${MASK} then ${MASK}`);
  });

  it('masks the values of secret config lines, with their type digit kept', () => {
    const text = [
      'enable secret 5 $1$abcd$xyz',
      'snmp-server community public RO',
      ' authentication-key "$9$x y"',
      '  key-string 7 0822455D0A16',
    ].join('\n');
    expect(maskSecrets(text, []).split('\n')).toEqual([
      `enable secret 5 ${MASK}`,
      `snmp-server community ${MASK} RO`,
      ` authentication-key ${MASK}`,
      `  key-string 7 ${MASK}`,
    ]);
  });

  it('never reaches onto the next line, and leaves key fingerprints alone', () => {
    const notes = '# host key SHA256:Nq8V0mXwVtD3uQ (ssh-ed25519) matches the pinned key\nnetops authenticated as netops (password)';
    expect(maskSecrets(notes, [])).toBe(notes);
    expect(maskSecrets('secret\n  hostname r1', [])).toBe('secret\n  hostname r1');
  });
});
