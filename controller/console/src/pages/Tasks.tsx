import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { ListQuery } from '../components/ListQuery';
import { Page } from '../components/Page';

/** Scheduled tasks with their cron expression, last and next run. */
export default function Tasks() {
  const tasks = useQuery({ queryKey: ['tasks'], queryFn: () => unwrap(api.GET('/api/tasks/')) });
  return (
    <Page title="Scheduled tasks">
      <ListQuery query={tasks} label="Scheduled tasks" empty="No scheduled tasks yet: schedule a backup, snapshot or instance deployment with a cron expression." hide={['config', 'created_by']} />
    </Page>
  );
}
