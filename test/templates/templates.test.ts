import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
let token: string;
let otherToken: string;

beforeAll(async () => {
  c = await startTestController();
  token = (await c.createOrgUser(['operator'])).token;
  otherToken = (await c.createOrgUser(['operator'])).token;
});
afterAll(async () => c?.close());

const INTERFACES = `hostname {{ hostname }}
{% for intf in interfaces %}
interface {{ intf.name }}
 mtu {{ mtu | default(1500) }}
{% endfor %}
{% if banner is defined %}
banner {{ banner }}
{% endif %}
`;

async function createTemplate(body: Record<string, unknown> = {}, as = token) {
  const res = await c.request('POST', '/api/config/templates', {
    token: as,
    body: { name: 'base', platform: 'vendor_eos-gnmi', config_format: 'cli', source: INTERFACES, ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('platforms', () => {
  it('lists the seeded platforms: one gNMI and one NETCONF per OS family, plus openconfig-gnmi and ietf-netconf', async () => {
    const res = await c.request('GET', '/api/config/platforms', { token });
    expect(res.status).toBe(200);
    const names = res.body.map((p: { name: string }) => p.name);
    expect(names).toEqual(
      expect.arrayContaining(['openconfig-gnmi', 'ietf-netconf', 'vendor_eos-gnmi', 'vendor_eos-netconf', 'vendor_junos-netconf', 'vendor_xr-gnmi']),
    );
    for (const p of res.body) {
      expect(p.name).toMatch(/^[a-z0-9_]+-(gnmi|netconf)$/);
      expect(p.name.endsWith(`-${p.transport}`)).toBe(true);
      expect(p).toMatchObject({
        id: expect.any(String),
        display_name: expect.any(String),
        default_port: expect.any(Number),
        capabilities: expect.any(Object),
        created_at: expect.any(String),
      });
      expect(p.config_format).toBe(p.transport === 'gnmi' ? 'json' : 'xml');
      expect(typeof p.capabilities.openconfig).toBe('boolean');
    }
    const one = await c.request('GET', `/api/config/platforms/${res.body[0].id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body[0]);
  });

  it('answers 404 for an unknown platform id and 400 for a malformed one', async () => {
    expect((await c.request('GET', '/api/config/platforms/00000000-0000-4000-8000-000000000000', { token })).status).toBe(404);
    expect((await c.request('GET', '/api/config/platforms/nope', { token })).status).toBe(400);
  });

  it('needs a token', async () => {
    expect((await c.request('GET', '/api/config/platforms')).status).toBe(401);
  });
});

describe('template CRUD', () => {
  it('creates a template with variables derived from its syntax tree', async () => {
    const t = await createTemplate({ description: 'interfaces', target_path: 'interfaces' });
    expect(t).toMatchObject({
      name: 'base',
      platform: 'vendor_eos-gnmi',
      config_format: 'cli',
      operation: 'replace',
      target_path: 'interfaces',
      current_version: 1,
      description: 'interfaces',
      source: INTERFACES,
    });
    expect(t.variables).toEqual([
      { name: 'hostname', type: 'string', required: true },
      { name: 'interfaces', type: 'list', required: true },
      { name: 'mtu', type: 'string', required: false },
      { name: 'banner', type: 'string', required: false },
    ]);
  });

  it('derives list, object, number and boolean types and sees through set, loop and macro names', async () => {
    const source = `{% set local = 1 %}{{ local }}
{% macro line(text, indent=2) %}{{ text }}{{ indent }}{% endmacro %}
{% for k, v in peers %}{{ loop.index }} {{ k }} {{ v }}{% endfor %}
{{ device.site }} {{ asn * 2 }}
{% if enable_bgp %}bgp{% endif %}
{% if not (vrf is undefined) %}{{ vrf }}{% endif %}
{{ (desc or "none") }} {{ line(name) }}`;
    const t = await createTemplate({ name: 'types', source });
    expect(t.variables).toEqual([
      { name: 'peers', type: 'list', required: true },
      { name: 'device', type: 'object', required: true },
      { name: 'asn', type: 'number', required: true },
      { name: 'enable_bgp', type: 'boolean', required: false },
      { name: 'vrf', type: 'string', required: false },
      { name: 'desc', type: 'string', required: false },
      { name: 'name', type: 'string', required: true },
    ]);
  });

  it('keeps a draft that does not parse, with no variables; render reports the line', async () => {
    const t = await createTemplate({ name: 'draft', source: 'a\nb {{ x y }}' });
    expect(t.variables).toEqual([]);
    const res = await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: { x: 1 } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Render error: line 2, column 8: expected variable end');
    expect(res.body).toMatchObject({ code: 'RENDER_ERROR', line: 2, column: 8 });
  });

  it('validates a source without saving it: the syntax error with its line and column, or the variables', async () => {
    const count = async () => (await c.request('GET', '/api/config/templates', { token })).body.length;
    const before = await count();
    const broken = await c.request('POST', '/api/config/templates/validate', { token, body: { source: 'a\nb {{ x y }}' } });
    expect(broken.status).toBe(200);
    expect(broken.body).toEqual({ valid: false, error: { message: 'expected variable end', line: 2, column: 8 }, variables: [] });
    const fixed = await c.request('POST', '/api/config/templates/validate', { token, body: { source: 'hostname {{ hostname }}' } });
    expect(fixed.body).toMatchObject({ valid: true, error: null, variables: [{ name: 'hostname', type: 'string', required: true }] });
    expect(await count()).toBe(before);
    expect((await c.request('POST', '/api/config/templates/validate', { token, body: { source: 'x', name: 'n' } })).status).toBe(400);
    expect((await c.request('POST', '/api/config/templates/validate', { body: { source: 'x' } })).status).toBe(401);
  });

  it('refuses an unknown platform, a format the transport cannot carry, missing or unknown fields and bad JSON', async () => {
    const bad = async (body: unknown, status = 400) => {
      const res = await c.request('POST', '/api/config/templates', { token, body });
      expect(res.status, res.text).toBe(status);
      expect(res.body.error).toEqual(expect.any(String));
      return res.body;
    };
    const base = { name: 'x', platform: 'vendor_eos-gnmi', config_format: 'json', source: '{}' };
    expect((await bad({ ...base, platform: 'os9-gnmi' })).code).toBe('UNKNOWN_PLATFORM');
    expect((await bad({ ...base, platform: 'ietf-netconf', config_format: 'json' })).code).toBe('TEMPLATE_FORMAT_MISMATCH');
    expect((await bad({ ...base, platform: 'openconfig-gnmi', config_format: 'xml' })).code).toBe('TEMPLATE_FORMAT_MISMATCH');
    await bad({ name: 'x', platform: 'ietf-netconf', config_format: 'xml' });
    await bad({ ...base, config_format: 'yaml' });
    await bad({ ...base, operation: 'patch' });
    await bad({ ...base, extra: 1 });
    await bad({ ...base, source: 42 });
    await bad({ ...base, name: '' });
    await bad([]);
    const raw = await c.request('POST', '/api/config/templates', { token, raw: '{"name":', contentType: 'application/json' });
    expect(raw.status).toBe(400);
    expect(raw.body.code).toBe('INVALID_JSON');
  });

  it('lists templates without source, filtered by platform and paged', async () => {
    await createTemplate({ name: 'nc', platform: 'ietf-netconf', config_format: 'xml', target_path: '/config', source: '<config>{{ x }}</config>' });
    const all = await c.request('GET', '/api/config/templates', { token });
    expect(all.status).toBe(200);
    expect(all.body.length).toBeGreaterThanOrEqual(4);
    expect(all.body[0]).not.toHaveProperty('source');
    const nc = await c.request('GET', '/api/config/templates?platform=ietf-netconf', { token });
    expect(nc.body.map((t: { name: string }) => t.name)).toEqual(['nc']);
    const page = await c.request('GET', '/api/config/templates?limit=1&offset=1', { token });
    expect(page.body).toHaveLength(1);
    expect(page.body[0].id).toBe(all.body[1].id);
    expect((await c.request('GET', '/api/config/templates?limit=0', { token })).status).toBe(400);
    expect((await c.request('GET', '/api/config/templates?limit=abc', { token })).status).toBe(400);
  });

  it('deletes a template (204), then answers 404', async () => {
    const t = await createTemplate({ name: 'gone' });
    const del = await c.request('DELETE', `/api/config/templates/${t.id}`, { token });
    expect(del.status).toBe(204);
    expect((await c.request('GET', `/api/config/templates/${t.id}`, { token })).status).toBe(404);
    expect((await c.request('DELETE', `/api/config/templates/${t.id}`, { token })).status).toBe(404);
    expect((await c.request('GET', `/api/config/templates/${t.id}/versions`, { token })).status).toBe(404);
  });
});

describe('template versions', () => {
  it('adds a version on a source change only; name and description changes do not', async () => {
    const t = await createTemplate({ name: 'v' });
    const renamed = await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { name: 'v2', description: 'changed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'v2', description: 'changed', current_version: 1 });
    const same = await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { source: INTERFACES } });
    expect(same.body.current_version).toBe(1);
    const changed = await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { source: 'hostname {{ name }}' } });
    expect(changed.body).toMatchObject({
      current_version: 2,
      source: 'hostname {{ name }}',
      variables: [{ name: 'name', type: 'string', required: true }],
    });
    const versions = await c.request('GET', `/api/config/templates/${t.id}/versions`, { token });
    expect(versions.status).toBe(200);
    expect(versions.body.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(versions.body[1]).toMatchObject({ version: 1, source: INTERFACES, created_by: expect.any(String), created_at: expect.any(String) });
    expect(versions.body[1].variables).toHaveLength(4);
    const v1 = await c.request('GET', `/api/config/templates/${t.id}/versions/1`, { token });
    expect(v1.status).toBe(200);
    expect(v1.body.source).toBe(INTERFACES);
    expect((await c.request('GET', `/api/config/templates/${t.id}/versions/9`, { token })).status).toBe(404);
    expect((await c.request('GET', `/api/config/templates/${t.id}/versions/zero`, { token })).status).toBe(400);
  });

  it('clears target_path with null and resets operation to replace with null', async () => {
    const t = await createTemplate({ name: 'ops', operation: 'merge', target_path: '/interfaces' });
    const res = await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { target_path: null, operation: null } });
    expect(res.body).toMatchObject({ target_path: null, operation: 'replace' });
    const merge = await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { operation: 'delete' } });
    expect(merge.body.operation).toBe('delete');
    // All fields optional (API.md): an empty update changes nothing, and makes no version.
    const same = await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: {} });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({
      name: 'ops',
      operation: 'delete',
      target_path: null,
      current_version: merge.body.current_version,
      source: merge.body.source,
    });
    expect((await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { config_format: 'xml' } })).body.code).toBe(
      'TEMPLATE_FORMAT_MISMATCH',
    );
    // cli templates render on any platform (deployments do not push them).
    expect((await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { platform: 'ietf-netconf' } })).body.platform).toBe(
      'ietf-netconf',
    );
  });
});

describe('replace and delete targets', () => {
  const create = (body: Record<string, unknown>) =>
    c.request('POST', '/api/config/templates', { token, body: { name: 'target', source: 'x', ...body } });
  const gnmi = { platform: 'openconfig-gnmi', config_format: 'json' };
  const netconf = { platform: 'ietf-netconf', config_format: 'xml' };

  it('refuses a gNMI or NETCONF replace (the default operation) or delete with no target_path, saying what to do; nothing is saved', async () => {
    const count = async () => (await c.db('config_templates').count('* as n').first())?.n;
    const before = await count();
    for (const [body, transport] of [
      [{ ...netconf }, 'NETCONF'],
      [{ ...netconf, operation: 'replace', target_path: null }, 'NETCONF'],
      [{ ...netconf, operation: 'delete' }, 'NETCONF'],
      [{ ...netconf, target_path: 'interfaces' }, 'NETCONF'],
      [{ ...gnmi }, 'gNMI'],
      [{ ...gnmi, operation: 'delete', target_path: '' }, 'gNMI'],
    ] as const) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('TARGET_PATH_REQUIRED');
      expect(res.body.error).toContain(transport);
      expect(res.body.error).toMatch(/^Refused: the template has operation (replace|delete) /);
    }
    expect((await create(netconf)).body.error).toBe(
      'Refused: the template has operation replace and no target_path, so the NETCONF push would replace each top-level element the ' +
        'template renders as a whole, removing whatever the template does not list under it. A replace needs a target_path naming the ' +
        'subtree it replaces, e.g. /interfaces/interface[name=eth0]; to add to the config without removing anything use operation merge',
    );
    expect(await count()).toEqual(before);
  });

  it('refuses a replace or delete of the root on both transports', async () => {
    for (const body of [
      { ...gnmi, target_path: '/' },
      { ...gnmi, target_path: 'openconfig:/' },
      { ...gnmi, operation: 'delete', target_path: '/' },
      { ...netconf, target_path: '/' },
    ]) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('ROOT_TARGET_REFUSED');
      expect(res.body.error).toContain(`on target_path '${body.target_path}', the root`);
    }
  });

  it('saves merges anywhere, cli templates without a path, and replaces that name their subtree', async () => {
    for (const body of [
      { ...gnmi, operation: 'merge' },
      { ...gnmi, operation: 'merge', target_path: '/' },
      { ...netconf, operation: 'merge' },
      { ...gnmi, target_path: '/interfaces/interface[name=eth0]' },
      { ...netconf, operation: 'delete', target_path: '/acls/acl[name=MGMT]' },
      { platform: 'ietf-netconf', config_format: 'cli' },
      { platform: 'openconfig-gnmi', config_format: 'cli', operation: 'delete', target_path: '/' },
    ]) {
      const res = await create(body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(201);
    }
  });

  it('refuses an update that leaves a replace or delete without its subtree, and keeps the template as it was', async () => {
    const t = (await create({ ...netconf, name: 'merge-me', operation: 'merge' })).body;
    const put = (body: Record<string, unknown>) => c.request('PUT', `/api/config/templates/${t.id}`, { token, body });
    for (const [body, code] of [
      [{ operation: 'replace' }, 'TARGET_PATH_REQUIRED'],
      [{ operation: null }, 'TARGET_PATH_REQUIRED'],
      [{ operation: 'delete', source: '<a>new</a>' }, 'TARGET_PATH_REQUIRED'],
      [{ operation: 'replace', target_path: '/' }, 'ROOT_TARGET_REFUSED'],
    ] as const) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe(code);
    }
    expect((await c.request('GET', `/api/config/templates/${t.id}`, { token })).body).toMatchObject({
      operation: 'merge',
      target_path: null,
      source: 'x',
      current_version: 1,
    });
    // With the subtree named in the same update, it is saved; clearing the path afterwards is refused.
    expect((await put({ operation: 'replace', target_path: '/interfaces/interface[name=eth0]' })).body).toMatchObject({
      operation: 'replace',
      target_path: '/interfaces/interface[name=eth0]',
    });
    expect((await put({ target_path: null })).body.code).toBe('TARGET_PATH_REQUIRED');
    // Moving a replace to the cli format (a label) is fine.
    expect((await put({ config_format: 'cli', target_path: null })).status).toBe(200);
  });
});

describe('render', () => {
  it('renders the current source or a given version', async () => {
    const t = await createTemplate({ name: 'r' });
    const vars = { hostname: 'leaf1', interfaces: [{ name: 'Ethernet1' }, { name: 'Ethernet2' }], banner: 'hi' };
    const res = await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: vars } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      rendered: 'hostname leaf1\ninterface Ethernet1\n mtu 1500\ninterface Ethernet2\n mtu 1500\nbanner hi\n',
      format: 'cli',
    });
    await c.request('PUT', `/api/config/templates/${t.id}`, { token, body: { source: 'hostname {{ hostname | upper }}' } });
    expect((await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: vars } })).body.rendered).toBe(
      'hostname LEAF1',
    );
    const old = await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: vars, version: 1 } });
    expect(old.body.rendered).toContain('interface Ethernet2');
    expect((await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { version: 7 } })).status).toBe(404);
  });

  it('answers 400 Render error naming the missing required variable, before rendering', async () => {
    const t = await createTemplate({ name: 'missing' });
    const res = await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: { interfaces: [] } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'REQUIRED_VARIABLE_MISSING',
      error: "Render error: required variable 'hostname' not provided",
      missing: ['hostname'],
    });
    const noBody = await c.request('POST', `/api/config/templates/${t.id}/render`, { token });
    expect(noBody.status).toBe(400);
  });

  it('answers 400 Render error for an unknown filter, a failing call and a malformed body', async () => {
    const t = await createTemplate({ name: 'filters', source: 'a\n{{ x | frobnicate }}' });
    const res = await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: { x: 1 } } });
    expect(res.body.error).toBe("Render error: line 2, column 8: unknown filter 'frobnicate'");
    const call = await createTemplate({ name: 'call', source: '{{ x() }}' });
    const called = await c.request('POST', `/api/config/templates/${call.id}/render`, { token, body: { variables: { x: 'text' } } });
    expect(called.status).toBe(400);
    expect(called.body.error).toMatch(/^Render error: line 1, column \d+: 'x' is not a function$/);
    expect((await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: [] } })).status).toBe(400);
    expect((await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { version: '1' } })).status).toBe(400);
  });
});

describe('values of CLI templates', () => {
  it('refuses a {{ }} value with a line break or a control character in a CLI template; | safe and macros write lines on purpose', async () => {
    const render = async (body: Record<string, unknown>, variables: Record<string, unknown>) => {
      const t = await createTemplate({ name: `lines-${Math.random().toString(36).slice(2, 8)}`, ...body });
      return c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables } });
    };
    const injected = { d: 'uplink\r\nno router bgp 65000' };
    const refused = await render({ source: 'interface Ethernet1\n description {{ d }}' }, injected);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^Render error: a value written by \{\{ \}\} holds a line break, .*\| safe$/);
    // Ctrl-Z would leave configuration mode mid-template.
    const ctrlZ = await render({ source: 'interface Ethernet1\n description {{ d }}' }, { d: 'uplink\u001a' });
    expect(ctrlZ.body.error).toMatch(/holds a control character, which a CLI session would take as a keystroke/);
    const safe = await render({ source: 'banner motd ^\n{{ text | safe }}\n^' }, { text: 'line one\nline two' });
    expect(safe.body.rendered).toBe('banner motd ^\nline one\nline two\n^');
    const macro = await render({ source: '{% macro intf(n) %}interface {{ n }}\n shutdown{% endmacro %}{{ intf("Ethernet1") }}' }, {});
    expect(macro.body.rendered).toBe('interface Ethernet1\n shutdown');
    const json = await render({ config_format: 'json', target_path: '/system/config', source: '{"d": {{ d | dump }}}' }, injected);
    expect(JSON.parse(json.body.rendered)).toEqual({ d: injected.d });
  });
});

describe('values of XML and JSON templates', () => {
  const render = async (body: Record<string, unknown>, variables: Record<string, unknown>) => {
    const t = await createTemplate({ name: `values-${Math.random().toString(36).slice(2, 8)}`, ...body });
    return c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables } });
  };
  const xml = { platform: 'ietf-netconf', config_format: 'xml', operation: 'merge' };
  const json = { config_format: 'json', target_path: '/interfaces', operation: 'merge' };
  // A description synced from NetBox that would delete an interface if its markup reached the edit.
  const description = 'R&D </description></interface><interface nc:operation="delete"><name>eth0</name>';

  it('refuses an XML value holding markup, so it cannot become part of the NETCONF edit; | escape writes it as text', async () => {
    const source = '<interfaces><interface><name>eth1</name><description>{{ d }}</description></interface></interfaces>';
    const refused = await render({ ...xml, source }, { d: description });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(
      "Render error: a value written by {{ }} holds '&', which an XML template would send as markup; write it as text with | escape, or as markup with | safe",
    );
    const escaped = await render({ ...xml, source: source.replace('{{ d }}', '{{ d | escape }}') }, { d: description });
    expect(escaped.body.rendered).toContain(
      '<description>R&amp;D &lt;/description&gt;&lt;/interface&gt;&lt;interface nc:operation=&quot;delete&quot;&gt;&lt;name&gt;eth0&lt;/name&gt;</description>',
    );
    // Quotes cannot end an attribute early (the same text to an XML parser); the template's own markup passes.
    const own = await render(
      { ...xml, source: '{% macro leaf(v) %}<m>{{ v }}</m>{% endmacro %}<a b="{{ q }}">{{ x | safe }}{{ leaf(q) }}</a>' },
      { x: '<mtu>9000</mtu>', q: `6" "a'` },
    );
    expect(own.body.rendered).toBe('<a b="6&quot; &quot;a&apos;"><mtu>9000</mtu><m>6&quot; &quot;a&apos;</m></a>');
    // | dump in an XML template is a value like any other.
    expect((await render({ ...xml, source: '<d>{{ o | dump | trim }}</d>' }, { o: { a: '<b/>' } })).body.error).toMatch(/holds '<'/);
  });

  it('refuses a JSON value that would end its string, so it cannot add keys; | dump writes a JSON value', async () => {
    const injected = 'uplink", "enabled": false, "x": "';
    const refused = await render({ ...json, source: '{"description": "{{ d }}"}' }, { d: injected });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(
      /^Render error: a value written by \{\{ \}\} holds a quote, which would end or break its JSON string; .*\| dump/,
    );
    for (const d of ['C:\\temp', 'two\nlines']) expect((await render({ ...json, source: '{"d": "{{ d }}"}' }, { d })).status).toBe(400);
    const dumped = await render(
      { ...json, source: '{"description": {{ d | dump }}, "mtu": {{ mtu }}, "vlans": {{ vlans | dump | trim }}}' },
      {
        d: injected,
        mtu: 9000,
        vlans: [10, 'v"20'],
      },
    );
    expect(JSON.parse(dumped.body.rendered)).toEqual({ description: injected, mtu: 9000, vlans: [10, 'v"20'] });
  });
});

describe('sandbox', () => {
  const marker = `/tmp/switchboard-sandbox-${process.pid}`;
  const payloads = [
    `{{ range.constructor("return process")().mainModule }}`,
    `{{ range.constructor("require('fs').writeFileSync('${marker}', 'x')")() }}`,
    `{{ ''.constructor.constructor("return process")() }}`,
    `{{ "".sub.constructor("return process")() }}`,
    `{{ cycler.constructor("return process")() }}`,
    `{{ joiner().constructor("return process")() }}`,
    `{% set f = range %}{{ f.constructor("return this")() }}`,
    `{% set k = "constr" ~ "uctor" %}{{ range[k]("return process")() }}`,
    `{{ range["constructor"]("return process")() }}`,
    `{{ x.__proto__.polluted }}`,
    `{% set p = x["__proto__"] %}{{ p }}`,
    `{{ __proto__ }}`,
    `{{ constructor }}`,
    `{{ x.constructor.assign(x.__proto__, {"polluted": 1}) }}`,
    `{{ range.call(null, 3) }}`,
    `{{ range.apply }}`,
    `{{ x.toString.constructor("return process")() }}`,
    `{{ [].map.constructor("return process")() }}`,
    `{% include "/etc/passwd" %}`,
    `{% import "/etc/passwd" as p %}`,
    `{% extends "/etc/hostname" %}`,
    `{% from "/etc/passwd" import root %}`,
    `{{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaa!" | replace(r/(a+)+$/, "") }}`,
    `{{ process }}`,
    `{{ global.process }}`,
    `{{ require("fs") }}`,
    `{{ this }}`,
    `{{ "abc".repeat(10000000) }}`,
  ];

  it.each(payloads)('%s fails or renders harmlessly, never executes', async (source) => {
    const t = await createTemplate({ name: 'payload', source });
    const res = await c.request('POST', `/api/config/templates/${t.id}/render`, { token, body: { variables: { x: { a: 1 } } } });
    expect([200, 400]).toContain(res.status);
    if (res.status === 400) expect(res.body.error).toMatch(/^Render error: /);
    else {
      expect(res.body.rendered).not.toMatch(/process|\[object|native code|function|root:|polluted/i);
    }
    expect(existsSync(marker)).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('stops a template that would run for ever or exhaust memory, and keeps serving', async () => {
    const loops = await createTemplate({
      name: 'loops',
      source: '{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}',
    });
    const res = await c.request('POST', `/api/config/templates/${loops.id}/render`, { token, body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Render error: .*loop iterations and calls/);

    const recursion = await createTemplate({ name: 'recursion', source: '{% macro f(n) %}{{ f(n) }}{{ f(n) }}{% endmacro %}{{ f(1) }}' });
    expect((await c.request('POST', `/api/config/templates/${recursion.id}/render`, { token, body: {} })).body.error).toMatch(/^Render error: /);

    const doubling = await createTemplate({
      name: 'doubling',
      source: '{% set s = "xxxxxxxx" %}{% for i in range(60) %}{% set s = s ~ s %}{% endfor %}{{ s | upper }}',
    });
    expect((await c.request('POST', `/api/config/templates/${doubling.id}/render`, { token, body: {} })).body.error).toMatch(/^Render error: /);

    const wide = await createTemplate({ name: 'wide', source: '{{ "a" | center(2000000000) }}' });
    const stopped = await c.request('POST', `/api/config/templates/${wide.id}/render`, { token, body: {} });
    expect(stopped.status).toBe(400);
    expect(stopped.body.error).toMatch(/^Render error: rendering (took longer than|used more than)/);

    const fine = await createTemplate({ name: 'fine', source: 'ok {{ x }}' });
    expect((await c.request('POST', `/api/config/templates/${fine.id}/render`, { token, body: { variables: { x: 1 } } })).body.rendered).toBe('ok 1');
  });
});

describe('organization scoping', () => {
  it('answers 404 to another organization on every :id route and lists nothing', async () => {
    const t = await createTemplate({ name: 'private' });
    const id = t.id;
    const calls: [string, string, unknown?][] = [
      ['GET', `/api/config/templates/${id}`],
      ['PUT', `/api/config/templates/${id}`, { name: 'stolen' }],
      ['DELETE', `/api/config/templates/${id}`],
      ['POST', `/api/config/templates/${id}/render`, { variables: {} }],
      ['GET', `/api/config/templates/${id}/versions`],
      ['GET', `/api/config/templates/${id}/versions/1`],
    ];
    for (const [method, path, body] of calls) {
      const res = await c.request(method, path, { token: otherToken, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('TEMPLATE_NOT_FOUND');
    }
    expect((await c.request('GET', '/api/config/templates', { token: otherToken })).body).toEqual([]);
    expect((await c.request('GET', `/api/config/templates/${id}`, { token })).body.name).toBe('private');
  });

  it('needs the devices.access permission', async () => {
    const auditor = await c.createOrgUser(['auditor']);
    expect((await c.request('GET', '/api/config/templates', { token: auditor.token })).status).toBe(403);
    expect((await c.request('GET', '/api/config/platforms', { token: auditor.token })).status).toBe(403);
  });
});
