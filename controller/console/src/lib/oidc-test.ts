import type { paths } from '../api/schema';

type OidcTestReport = paths['/api/auth/oidc/test']['post']['responses'][200]['content']['application/json'];

/** The OIDC test button's result line: what was found, or why discovery failed, and the warnings. */
export function oidcTestSummary(report: OidcTestReport): { ok: boolean; text: string } {
  const found = Object.entries(report.endpoints)
    .filter(([, url]) => url)
    .map(([name, url]) => `${name} ${url}`);
  const parts = [`OIDC: ${report.message}.`];
  if (report.ok) parts.push(`Endpoints: ${found.join(', ')}.`, `Register ${report.callback_url} as a redirect URI at the provider.`);
  for (const warning of report.warnings) parts.push(`Warning: ${warning}.`);
  return { ok: report.ok, text: parts.join(' ') };
}
