import type { FastifyReply } from 'fastify';

/**
 * Every refusal has one shape, `{ error: { code, message, field? } }` (`field`: the path of
 * the bad field in what the ESP sent, for a malformed event), with a code that stays
 * stable for whoever reads the ESP's delivery logs. Never a key or a signature in it.
 */
export function refuse(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  field?: string,
): FastifyReply {
  return reply.code(status).send({ error: field === undefined ? { code, message } : { code, message, field } });
}

/** HTTP status of each verification failure of `@sluice/events`. */
export const STATUS_OF: Record<string, number> = {
  malformed: 400,
  too_many_events: 413,
  bad_signature: 401,
  stale: 401,
  forbidden_cert_url: 403,
  forbidden_topic: 403,
  forbidden_subscribe_url: 403,
  // Ours to retry: the ESP sends it again and we try to fetch again.
  certificate_unavailable: 503,
};
