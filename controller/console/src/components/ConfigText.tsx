import { Box, CopyButton, Button, Group, TextInput } from '@mantine/core';
import { useState } from 'react';

/** A stored config with line numbers, a search that shows only matching lines, and copy. */
export function ConfigText({ text }: { text: string }) {
  const [search, setSearch] = useState('');
  const lines = text.split('\n').map((line, i) => ({ no: i + 1, line }));
  const needle = search.toLowerCase();
  const shown = needle ? lines.filter((l) => l.line.toLowerCase().includes(needle)) : lines;
  return (
    <Box>
      <Group mb="xs">
        <TextInput size="xs" aria-label="Search in config" placeholder="Search" value={search} onChange={(e) => setSearch(e.currentTarget.value)} />
        <CopyButton value={text}>
          {({ copied, copy }) => (
            <Button size="xs" variant="light" onClick={copy}>
              {copied ? 'Copied' : 'Copy'}
            </Button>
          )}
        </CopyButton>
      </Group>
      <Box component="pre" fz="xs" style={{ overflow: 'auto', maxHeight: 480, margin: 0 }} data-testid="config-text">
        {shown.map((l) => (
          <div key={l.no}>
            <span style={{ display: 'inline-block', width: 48, opacity: 0.6, userSelect: 'none' }}>{l.no}</span>
            {l.line}
          </div>
        ))}
      </Box>
    </Box>
  );
}
