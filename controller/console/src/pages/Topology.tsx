import { Box, Group, Select, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import cytoscape, { type Core } from 'cytoscape';
import { useEffect, useRef, useState } from 'react';
import { useLocation } from 'wouter';
import { api, unwrap } from '../api/client';
import { Empty, ErrorNote, Page } from '../components/Page';
import { siteOptions, useSites } from '../lib/sites';

const PALETTE = ['#4263eb', '#2f9e44', '#e8590c', '#ae3ec9', '#1098ad', '#f08c00', '#c2255c', '#5c940d'];

/** A stable colour per site; external neighbors are grey. */
export function siteColour(siteId: string | null, kind: string): string {
  if (kind === 'external') return '#868e96';
  if (!siteId) return '#495057';
  let hash = 0;
  for (const ch of siteId) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

/** The neighbor graph: pan, zoom, search, click a device to open it; coloured by site. */
export default function Topology() {
  const [siteId, setSiteId] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const sites = useSites();
  const [, navigate] = useLocation();
  const graph = useQuery({
    queryKey: ['topology', siteId],
    queryFn: () => unwrap(api.GET('/api/topology', { params: { query: siteId ? { site_id: siteId } : {} } })),
  });
  const container = useRef<HTMLDivElement>(null);
  const cy = useRef<Core | null>(null);

  useEffect(() => {
    if (!container.current || !graph.data) return;
    const instance = cytoscape({
      container: container.current,
      elements: [
        ...graph.data.nodes.map((n) => ({ data: { id: n.id, label: n.name, deviceId: n.device_id, colour: siteColour(n.site_id, n.kind) } })),
        ...graph.data.links.map((l, i) => ({
          data: { id: `link-${i}`, source: l.source, target: l.target, dashed: l.confirmed ? 'solid' : 'dashed' },
        })),
      ],
      style: [
        { selector: 'node', style: { label: 'data(label)', 'background-color': 'data(colour)', 'font-size': 10, color: '#868e96' } },
        { selector: 'edge', style: { width: 1.5, 'line-color': '#adb5bd', 'line-style': 'data(dashed)' as never } },
        { selector: '.match', style: { 'border-width': 4, 'border-color': '#fab005' } },
      ],
      layout: { name: 'cose', animate: false },
    });
    instance.on('tap', 'node', (event) => {
      const deviceId = event.target.data('deviceId') as string | null;
      if (deviceId) navigate(`/devices/${deviceId}`);
    });
    cy.current = instance;
    return () => instance.destroy();
  }, [graph.data, navigate]);

  useEffect(() => {
    const instance = cy.current;
    if (!instance) return;
    instance.nodes().removeClass('match');
    if (!search.trim()) return;
    const found = instance.nodes().filter((n) => String(n.data('label')).toLowerCase().includes(search.toLowerCase()));
    found.addClass('match');
    if (found.length) instance.fit(found, 80);
  }, [search, graph.data]);

  const nodes = graph.data?.nodes ?? [];
  return (
    <Page title="Topology">
      <Group>
        <Select label="Site" clearable placeholder="All sites" data={siteOptions(sites.data)} value={siteId} onChange={setSiteId} w={220} />
        <TextInput label="Find a device" value={search} onChange={(e) => setSearch(e.currentTarget.value)} />
      </Group>
      <ErrorNote error={graph.error} />
      {graph.data && nodes.length === 0 && <Empty>No neighbors known yet: enable polling on devices or use Poll now on a device page.</Empty>}
      <Box
        ref={container}
        h={520}
        style={{ border: '1px solid var(--mantine-color-default-border)', display: nodes.length ? 'block' : 'none' }}
        aria-label="Topology graph"
        role="img"
      />
      {nodes.length > 0 && (
        <details>
          <summary>
            <Text span size="sm">
              {nodes.length} nodes, {graph.data?.links.length ?? 0} links (as a table)
            </Text>
          </summary>
          <Table fz="xs" aria-label="Topology links">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>From</Table.Th>
                <Table.Th>Interface</Table.Th>
                <Table.Th>To</Table.Th>
                <Table.Th>Interface</Table.Th>
                <Table.Th>Seen by</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {graph.data?.links.map((l, i) => {
                const name = (id: string) => nodes.find((n) => n.id === id)?.name ?? id;
                return (
                  <Table.Tr key={i}>
                    <Table.Td>{name(l.source)}</Table.Td>
                    <Table.Td>{l.source_interface}</Table.Td>
                    <Table.Td>{name(l.target)}</Table.Td>
                    <Table.Td>{l.target_interface}</Table.Td>
                    <Table.Td>
                      {l.protocols.join(', ')}
                      {l.confirmed ? ' (both ends)' : ''}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </details>
      )}
    </Page>
  );
}
