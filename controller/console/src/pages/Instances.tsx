import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { ListQuery } from '../components/ListQuery';
import { Page } from '../components/Page';

/** Saved instances: a stack with its targets and variable values, deployable again. */
export default function Instances() {
  const instances = useQuery({ queryKey: ['instances'], queryFn: () => unwrap(api.GET('/api/config/instances')) });
  return (
    <Page title="Instances">
      <ListQuery query={instances} label="Instances" empty="No instances yet: save a stack with its targets and values to deploy it again or on a schedule." hide={['variable_values', 'target_devices']} />
    </Page>
  );
}
