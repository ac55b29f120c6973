import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { ListQuery } from '../components/ListQuery';
import { Page } from '../components/Page';

/** Templates with their platform, format and current version. */
export default function Templates() {
  const templates = useQuery({ queryKey: ['templates'], queryFn: () => unwrap(api.GET('/api/config/templates')) });
  return (
    <Page title="Templates">
      <ListQuery query={templates} label="Templates" empty="No templates yet: create one through POST /api/config/templates." hide={['source', 'variables', 'created_by', 'updated_by']} />
    </Page>
  );
}
