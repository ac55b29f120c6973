import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { RunQuery, Task, TaskBody, TaskChanges, TaskQuery, TaskRun } from './schemas';
import { TASK_PERMISSION } from './service';

declare module '../config' {
  interface ControllerConfig {
    /** Scheduler tunables; tests lower them. */
    tasks?: { tickMs?: number };
  }
}

const tags = ['tasks'];
const permission = TASK_PERMISSION;

/** Scheduled tasks under /api/tasks: deployment (an instance), snapshot, backup; cron; last and next run. */
export async function taskRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { tasks } = app.services;

  app.get(
    '/',
    {
      config: { permission },
      schema: { tags, summary: 'Scheduled tasks', querystring: TaskQuery, response: { 200: Type.Array(Task), ...errorResponses(400, 401, 403) } },
    },
    async (request) => {
      const { type, limit = 100, offset = 0 } = request.query;
      return tasks.store.list(caller(request).orgId, limit, offset, type ? { type } : {});
    },
  );

  app.post(
    '/',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Schedule a deployment (instance_id), snapshot (snapshot_id) or backup (device_filter) on a cron expression',
        body: TaskBody,
        response: { 201: Task, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(await tasks.create(caller(request), request.body)),
  );

  app.get(
    '/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'One scheduled task with its last and next run',
        params: IdParams,
        response: { 200: Task, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => tasks.get(caller(request).orgId, request.params.id),
  );

  app.put(
    '/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Change a scheduled task (its type stays)',
        params: IdParams,
        body: TaskChanges,
        response: { 200: Task, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => tasks.update(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/:id',
    {
      config: { permission },
      schema: { tags, summary: 'Delete a scheduled task', params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      await tasks.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/:id/runs',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Runs of a task, newest first',
        params: IdParams,
        querystring: RunQuery,
        response: { 200: Type.Array(TaskRun), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const task = await tasks.get(caller(request).orgId, request.params.id);
      return tasks.store.runs(task.id, request.query.limit ?? 100, request.query.offset ?? 0);
    },
  );
}
