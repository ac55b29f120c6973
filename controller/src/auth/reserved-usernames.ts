/**
 * Usernames no account may be created with: names of system accounts on the servers that trust
 * Switchboard's SSH CA. A user certificate's only principal is the username (ssh-certificates.ts),
 * so on a server that trusts the CA without an AuthorizedPrincipalsFile, a user called `root`
 * would sign in as root there. One CA serves every organization, so one organization's
 * administrator must not be able to mint such a name. (Servers must still map principals to
 * accounts with AuthorizedPrincipalsFile: docs/auth.md, "SSH user certificates".)
 *
 * Matched case-insensitively, like usernames themselves (users_username_lower).
 */
export const RESERVED_USERNAMES: ReadonlySet<string> = new Set([
  // Debian's base-passwd (uid 0-99 and nobody), and its usual service accounts.
  'root',
  'daemon',
  'bin',
  'sys',
  'sync',
  'games',
  'man',
  'lp',
  'mail',
  'news',
  'uucp',
  'proxy',
  'www-data',
  'backup',
  'list',
  'irc',
  'gnats',
  'nobody',
  'sshd',
  'messagebus',
  'syslog',
  'postgres',
  'mysql',
  'postfix',
  'nslcd',
  'openldap',
  'bind',
  'ntp',
  'chrony',
  'dnsmasq',
  'tss',
  'uuidd',
  'tcpdump',
  'polkitd',
  'avahi',
  'statd',
  'redis',
  // Red Hat family system accounts.
  'adm',
  'halt',
  'shutdown',
  'operator',
  'ftp',
  // Default sudo-capable login users of cloud and distribution images: as good as root there.
  'admin',
  'ubuntu',
  'debian',
  'ec2-user',
  'centos',
  'fedora',
  'rocky',
  'almalinux',
  'cloud-user',
  'azureuser',
  'opc',
  'core',
  'alpine',
  'vagrant',
  'pi',
]);

/** Name prefixes of system accounts: systemd's dynamic and service users, Debian's `_apt`-style accounts. */
export const RESERVED_USERNAME_PREFIXES: readonly string[] = ['systemd-', '_'];

export function isReservedUsername(username: string): boolean {
  const name = username.trim().toLowerCase();
  return RESERVED_USERNAMES.has(name) || RESERVED_USERNAME_PREFIXES.some((prefix) => name.startsWith(prefix));
}

const WHY = "(root, daemon, www-data, admin, systemd-*, _apt, ...) on servers that trust Switchboard's SSH certificates";

/** Why a new account may not have this name, and what to do instead. */
export function reservedUsernameMessage(username: string): string {
  return `The username '${username}' is the name of a system account ${WHY}; choose another name, such as 'jdoe'`;
}

/** Why a first LDAP or OIDC sign-in under this name is refused (no account is created for it). */
export function reservedSignInMessage(username: string, provider: string): string {
  return (
    `Sign-in refused: the username '${username}' from ${provider} is the name of a system account ${WHY}, so no account is created ` +
    'for it; sign in with an account of another name'
  );
}
