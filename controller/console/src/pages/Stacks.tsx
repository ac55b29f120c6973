import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { ListQuery } from '../components/ListQuery';
import { Page } from '../components/Page';

/** Stacks: ordered services of templates. */
export default function Stacks() {
  const stacks = useQuery({ queryKey: ['stacks'], queryFn: () => unwrap(api.GET('/api/config/stacks')) });
  return (
    <Page title="Stacks">
      <ListQuery query={stacks} label="Stacks" empty="No stacks yet: a stack groups templates into services to deploy together." hide={['services', 'variables', 'created_by', 'updated_by']} />
    </Page>
  );
}
