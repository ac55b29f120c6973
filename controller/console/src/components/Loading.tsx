import { Center, Loader } from '@mantine/core';

/** What a page shows while its code or session is on its way. */
export const loading = (
  <Center h={200}>
    <Loader aria-label="Loading" />
  </Center>
);
