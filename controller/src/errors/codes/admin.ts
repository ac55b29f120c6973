import type { ErrorSpec } from '../spec';

export const adminErrors = {
  USER_NOT_FOUND: { status: 404, message: 'User not found', doc: "No user with that id in the caller's organization." },
  RESERVED_USERNAME: {
    status: 400,
    message: 'This username is the name of a system account and cannot be used',
    doc:
      'Creating a user, or a first LDAP or OIDC sign-in that would create one, with a system account name (root, daemon, www-data, admin, ' +
      "systemd-*, _apt, ...; the list is in controller/src/auth/reserved-usernames.ts): an SSH certificate's principal is the username.",
  },
  USERNAME_TAKEN: { status: 409, message: 'A user with this username already exists', doc: 'Usernames are unique across the platform.' },
  ORG_NAME_TAKEN: { status: 409, message: 'An organization with this name already exists', doc: 'Organization names are unique.' },
  INVALID_ORG_NAME: {
    status: 400,
    message: 'An organization name needs at least one character other than spaces',
    doc: 'POST /api/admin/organizations or a rename with a name that is empty after trimming.',
  },
  UNKNOWN_ROLE: { status: 400, message: 'Unknown role', doc: 'A role name outside the built-in roles.' },
  UNKNOWN_SETTING: { status: 400, message: 'Unknown setting', doc: 'PUT /api/admin/settings named a key that does not exist.' },
  INVALID_SETTING: { status: 400, message: 'Invalid setting value', doc: 'A setting value has the wrong type or range.' },
  CANNOT_DISABLE_SELF: { status: 400, message: 'You cannot disable or demote your own account', doc: 'Prevents locking every administrator out.' },
} satisfies Record<string, ErrorSpec>;
