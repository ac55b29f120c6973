/**
 * Stack render benchmark (`npm run bench -- render [--devices 1000] [--rounds 5]`).
 *
 * A controller on a fresh PostgreSQL database (this process), --devices devices, and a stack of
 * three services (system, interfaces with a loop, BGP with a loop and conditionals). The clock
 * runs around POST /api/config/stacks/:id/render with every service on every device and per-device
 * variables: request parsing, device and template reads, the sandboxed render in worker threads,
 * and the JSON answer of devices × 3 render jobs.
 *
 * Target (2-core machine): 1,000 devices × 3 services in ≤ 1 s.
 */
import { loadavg } from 'node:os';
import { benchController, option } from './controller';

export const SERVICES = [
  {
    name: 'system',
    target_path: '/system/config',
    source: `{"hostname": "{{ hostname }}", "domain-name": "{{ domain }}", "login-banner": "{{ banner | default('Authorized access only') }}",
 "ntp": [{% for server in ntp_servers %}{"address": "{{ server }}"}{% if not loop.last %}, {% endif %}{% endfor %}]}`,
  },
  {
    name: 'interfaces',
    target_path: '/interfaces',
    source: `{"interface": [{% for intf in interfaces %}
  {"name": "{{ intf.name }}", "config": {"description": "{{ intf.description | default('') | upper }}", \
"mtu": {{ intf.mtu | default(mtu) }}, "enabled": {{ 'true' if intf.enabled else 'false' }}}}{% if not loop.last %},{% endif %}
{% endfor %}]}`,
  },
  {
    name: 'bgp',
    target_path: '/network-instances/network-instance[name=default]/protocols',
    source: `{"bgp": {"global": {"as": {{ asn }}, "router-id": "{{ loopback }}"},
 "neighbors": [{% for n in neighbors %}{"neighbor-address": "{{ n.ip }}", "peer-as": {{ n.asn }}\
{% if n.password is defined %}, "auth-password": "{{ n.password }}"{% endif %}}{% if not loop.last %}, {% endif %}{% endfor %}]}}`,
  },
];

/** Per-device variables of the three services, as variable_values (keys are service positions). */
export function variableValues(deviceIds: string[]) {
  const deviceVars = (build: (i: number) => Record<string, unknown>) => Object.fromEntries(deviceIds.map((id, i) => [id, build(i)]));
  return {
    '0': {
      devices: deviceIds,
      shared_vars: { domain: 'dc1.example.net', ntp_servers: ['192.0.2.1', '192.0.2.2'] },
      device_vars: deviceVars((i) => ({ hostname: `leaf${i + 1}` })),
    },
    '1': {
      devices: deviceIds,
      shared_vars: { mtu: 9214 },
      device_vars: deviceVars((i) => ({
        interfaces: Array.from({ length: 8 }, (_, p) => ({
          name: `Ethernet${p + 1}`,
          description: `to spine${(p % 4) + 1} port ${i}`,
          enabled: p % 5 !== 4,
          ...(p === 0 ? { mtu: 1500 } : {}),
        })),
      })),
    },
    '2': {
      devices: deviceIds,
      shared_vars: { asn: 65000 },
      device_vars: deviceVars((i) => ({
        loopback: `10.255.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        neighbors: Array.from({ length: 4 }, (_, n) => ({
          ip: `10.${n}.${Math.floor(i / 250)}.${(i % 250) + 1}`,
          asn: 65100 + n,
          ...(n % 2 ? { password: 'bgp-secret' } : {}),
        })),
      })),
    },
  };
}

export async function run(args: string[] = []): Promise<void> {
  const devices = option(args, 'devices', 1000);
  const rounds = option(args, 'rounds', 5);
  const c = await benchController();
  try {
    const profile = (
      await c.call('POST', '/api/profiles', { name: 'bench', username: 'netops', password: 'bench-Device-pw', automation_transport: 'gnmi' })
    ).body;
    const csv = [
      'name,host,device_type',
      ...Array.from({ length: devices }, (_, i) => `leaf${i + 1},10.0.${Math.floor(i / 250)}.${(i % 250) + 1},vendor_eos`),
    ].join('\n');
    const imported = (await c.call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, csv, 'text/csv')).body;
    if (imported.imported !== devices) throw new Error(`imported ${imported.imported} of ${devices} devices`);
    const ids: string[] = (await c.db('devices').orderBy('name').select('id')).map((r: { id: string }) => r.id);
    const templates = [];
    for (const s of SERVICES) {
      templates.push(
        (
          await c.call('POST', '/api/config/templates', {
            name: s.name,
            platform: 'openconfig-gnmi',
            config_format: 'json',
            target_path: s.target_path,
            source: s.source,
          })
        ).body,
      );
    }
    const stack = (
      await c.call('POST', '/api/config/stacks', { name: 'fabric', services: templates.map((t, order) => ({ template_id: t.id, order })) })
    ).body;
    const body = JSON.stringify({ variable_values: variableValues(ids) });

    const render = async () => {
      const started = performance.now();
      const res = await c.call('POST', `/api/config/stacks/${stack.id}/render`, body);
      const seconds = (performance.now() - started) / 1000;
      const jobs = (res.body as { jobs: { rendered_config: string }[] }).jobs;
      for (const job of jobs) JSON.parse(job.rendered_config); // every payload is valid JSON
      return { seconds, jobs: jobs.length, bytes: res.bytes };
    };

    // Warm-up, not timed: render workers started, code paths compiled, templates cached.
    await render();
    await render();

    console.log(`render benchmark: ${devices} devices × ${SERVICES.length} services, request body ${(body.length / 1024).toFixed(0)} KiB`);
    console.log('round,seconds,render_jobs,jobs_per_s,response_kib');
    const times: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      const r = await render();
      times.push(r.seconds);
      console.log([round, r.seconds.toFixed(3), r.jobs, Math.round(r.jobs / r.seconds), (r.bytes / 1024).toFixed(0)].join(','));
    }
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} s, best ${sorted[0].toFixed(3)} s; machine load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('target: 1,000 devices × 3 services ≤ 1 s');
  } finally {
    await c.close();
  }
}
