import { Anchor, Text } from '@mantine/core';
import { Link } from 'wouter';
import { Page } from '../components/Page';

export default function NotFound() {
  return (
    <Page title="Page not found">
      <Text>
        There is no console page at this address.{' '}
        <Anchor component={Link} href="/">
          Go to the Sites overview
        </Anchor>
        .
      </Text>
    </Page>
  );
}
