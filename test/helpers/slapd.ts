/**
 * A real LDAP server for tests: Debian's slapd with its own slapd.conf, mdb database and TLS
 * certificate in a temp dir, listening on free loopback ports (ldap:// with StartTLS, and
 * ldaps://). Entries are loaded with ldapadd, as an operator would.
 *
 * Failures throw with a message saying what is missing or what slapd logged.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, listensOn, stopProcess, waitFor } from './net';

export { freePort, stopProcess, waitFor };

const SLAPD = '/usr/sbin/slapd';
const LDAPADD = '/usr/bin/ldapadd';
const OPENSSL = '/usr/bin/openssl';
const SCHEMA = '/etc/ldap/schema';
const MODULES = '/usr/lib/ldap';
const run = promisify(execFile);

export const LDAP_BASE_DN = 'dc=switchboard,dc=test';
/** A read-only service account: it may search, never read passwords. */
export const LDAP_SERVICE = { dn: `cn=reader,${LDAP_BASE_DN}`, password: 'reader-secret-pw' };

export interface LdapUser {
  uid: string;
  password: string;
  cn?: string;
  mail?: string;
  /** Organizational unit under the base DN (default people). */
  ou?: string;
}

export interface SlapdServer {
  /** ldap://127.0.0.1:PORT (plain; StartTLS offered). */
  url: string;
  /** ldaps://127.0.0.1:PORT. */
  ldapsUrl: string;
  /** PEM of the CA that signed slapd's certificate. */
  caPem: string;
  baseDn: string;
  addUsers(users: LdapUser[]): Promise<void>;
  logs(): string;
  close(): Promise<void>;
}

function userLdif(user: LdapUser): string {
  const ou = user.ou ?? 'people';
  return [
    `dn: uid=${user.uid},ou=${ou},${LDAP_BASE_DN}`,
    'objectClass: inetOrgPerson',
    `uid: ${user.uid}`,
    `cn: ${user.cn ?? user.uid}`,
    `sn: ${user.uid}`,
    ...(user.mail ? [`mail: ${user.mail}`] : []),
    `userPassword: ${user.password}`,
    '',
  ].join('\n');
}

/** A throwaway CA (ca.crt) and a server certificate for 127.0.0.1 and localhost signed by it. */
async function makeTlsFiles(dir: string): Promise<void> {
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => run(OPENSSL, args);
  await ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=Switchboard test LDAP CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  );
  await ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
  );
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  await ssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
    '-out',
    f('server.crt'),
  );
}

/** Starts slapd with a base DN, ou=people and ou=staff, and the read-only service account. */
export async function startSlapd(): Promise<SlapdServer> {
  const missing = [SLAPD, LDAPADD, OPENSSL, join(MODULES, 'back_mdb.so')].filter((p) => !existsSync(p));
  if (missing.length > 0) throw new Error(`LDAP tests need ${missing.join(', ')}: install with "apt-get install -y slapd ldap-utils"`);

  const dir = mkdtempSync(join(tmpdir(), 'sb-slapd-'));
  mkdirSync(join(dir, 'db'), { mode: 0o700 });
  await makeTlsFiles(dir);

  const rootDn = `cn=admin,${LDAP_BASE_DN}`;
  const rootPw = 'root-secret-pw';
  const conf = [
    ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include ${SCHEMA}/${s}.schema`),
    `modulepath ${MODULES}`,
    'moduleload back_mdb',
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    `TLSCACertificateFile ${join(dir, 'ca.crt')}`,
    `TLSCertificateFile ${join(dir, 'server.crt')}`,
    `TLSCertificateKeyFile ${join(dir, 'server.key')}`,
    'database mdb',
    `suffix "${LDAP_BASE_DN}"`,
    `rootdn "${rootDn}"`,
    `rootpw ${rootPw}`,
    `directory ${join(dir, 'db')}`,
    'maxsize 10485760',
    'access to attrs=userPassword by anonymous auth by self write by * none',
    'access to * by users read by * none',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'slapd.conf'), conf);

  const [port, ldapsPort] = [await freePort(), await freePort()];
  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
  let output = '';
  const slapd = spawn(SLAPD, ['-f', join(dir, 'slapd.conf'), '-h', `${url}/ ${ldapsUrl}/`, '-d', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  slapd.stdout.on('data', (d) => (output += String(d)));
  slapd.stderr.on('data', (d) => (output += String(d)));
  const logs = () => `--- slapd output ---\n${output.split('\n').slice(-40).join('\n')}`;
  const close = async (): Promise<void> => {
    await stopProcess(slapd);
    rmSync(dir, { recursive: true, force: true });
  };

  const ldapadd = async (ldif: string): Promise<void> => {
    const file = join(dir, `add-${Date.now()}-${Math.random().toString(16).slice(2)}.ldif`);
    writeFileSync(file, ldif);
    try {
      await run(LDAPADD, ['-x', '-H', url, '-D', rootDn, '-w', rootPw, '-f', file]);
    } catch (err) {
      throw new Error(`ldapadd failed: ${(err as { stderr?: string }).stderr ?? String(err)}\n${logs()}`);
    }
  };

  try {
    await waitFor('slapd', () => listensOn(slapd.pid!, port) && listensOn(slapd.pid!, ldapsPort), slapd, logs);
    await ldapadd(
      [
        `dn: ${LDAP_BASE_DN}`,
        'objectClass: dcObject',
        'objectClass: organization',
        'o: Switchboard test',
        'dc: switchboard',
        '',
        `dn: ${LDAP_SERVICE.dn}`,
        'objectClass: organizationalRole',
        'objectClass: simpleSecurityObject',
        'cn: reader',
        `userPassword: ${LDAP_SERVICE.password}`,
        '',
        `dn: ou=people,${LDAP_BASE_DN}`,
        'objectClass: organizationalUnit',
        'ou: people',
        '',
        `dn: ou=staff,${LDAP_BASE_DN}`,
        'objectClass: organizationalUnit',
        'ou: staff',
        '',
      ].join('\n'),
    );
  } catch (err) {
    await close();
    throw err;
  }

  return {
    url,
    ldapsUrl,
    caPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    baseDn: LDAP_BASE_DN,
    addUsers: (users) => ldapadd(users.map(userLdif).join('\n')),
    logs,
    close,
  };
}
