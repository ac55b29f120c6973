/**
 * A backup result carries its config once: the agent's transcript leaves out the device's answer
 * that became the config (shared/src/jobs/transcript.ts). The controller stores it that way and
 * puts the config back when it is read. The end-to-end check (the stored transcript holds the
 * placeholder, the one read shows the config, masked) is in test/configs/pull.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { TextTranscript } from '../../agent/src/jobs/context';
import { configPlaceholder, expandTranscript, mapAroundPlaceholders } from '../../shared/src/jobs/transcript';

const CONFIG = 'hostname r1\ninterface Gi0/1\n description uplink\n';

describe('a backup transcript without its config', () => {
  it('keeps the login, the commands sent and the notes, and names the config in place of the answer', () => {
    const t = new TextTranscript();
    t.write('received', 'Welcome\r\nr1#');
    t.write('info', 'cli backup over ssh');
    const mark = t.mark();
    t.write('sent', 'show running-config\n');
    t.write('received', `show running-config\r\nBuilding configuration...\r\n${CONFIG.replace(/\n/g, '\r\n')}r1#`);
    t.write('info', 'pager prompt answered with a space');
    t.elideReceived(mark, configPlaceholder('cli'));
    const text = t.text();
    expect(text).toBe(
      `Welcome\r\nr1## cli backup over ssh\n> show running-config\n${configPlaceholder('cli')}# pager prompt answered with a space\n`,
    );
    expect(text).not.toContain('interface Gi0/1');
    expect(expandTranscript(text, (m) => (m === 'cli' ? CONFIG : undefined))).toBe(
      `Welcome\r\nr1## cli backup over ssh\n> show running-config\n${CONFIG}# pager prompt answered with a space\n`,
    );
  });

  it('a device cannot forge a placeholder, a missing config is said so, and older transcripts pass as they are', () => {
    const t = new TextTranscript();
    t.write('received', `${configPlaceholder('cli')}`);
    expect(t.text()).not.toContain('\uE000');
    expect(expandTranscript(t.text(), () => 'secret config')).toBe(t.text());
    expect(expandTranscript(`> show run\n${configPlaceholder('structured')}`, () => undefined)).toBe(
      '> show run\n# (the structured configuration was not returned)\n',
    );
    const older = `> show running-config\n${CONFIG}`;
    expect(expandTranscript(older, () => 'x')).toBe(older);
  });

  it('an answer with nothing received leaves the transcript as it was', () => {
    const t = new TextTranscript();
    const mark = t.mark();
    t.write('sent', 'get-config');
    t.elideReceived(mark, configPlaceholder('structured'));
    expect(t.text()).toBe('> get-config\n');
  });

  it('is masked around its placeholders, which no secret can break', () => {
    const [cli, structured] = [configPlaceholder('cli'), configPlaceholder('structured')];
    const text = `> login cli-admin\n> show running-config\n${cli}> show configuration\n${structured}cli done`;
    const masked = mapAroundPlaceholders(text, (part) => part.replaceAll('cli', '***'));
    expect(masked).toBe(`> login ***-admin\n> show running-config\n${cli}> show configuration\n${structured}*** done`);
    expect(expandTranscript(masked, (m) => `[${m}]`)).toBe(
      '> login ***-admin\n> show running-config\n[cli]\n> show configuration\n[structured]\n*** done',
    );
    expect(mapAroundPlaceholders('no placeholder, cli', (part) => part.toUpperCase())).toBe('NO PLACEHOLDER, CLI');
  });
});
