import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SluiceError, tokenWeakness, type SluiceConfig } from '@sluice/core';

/** Who a request is from: the actor its token stands for (`dev` without authentication). */
export type Actor = string;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every request it lets through. */
    actor: Actor;
  }
}

/** A host only this machine can reach. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h.startsWith('::ffff:127.');
}

/**
 * Decides at start whether the admin app may run: with tokens, or without only when
 * `devNoAuth` is set and it listens on loopback. Throws `invalid_config` naming the field.
 * Every token must pass `tokenWeakness` (32+ characters, about 128 bits by its characters,
 * not a pattern): the config schema checks it already, and this again for a config built
 * in code, since a guessable token is an open admin app.
 */
export function checkAuthConfig(admin: SluiceConfig['admin']): { open: boolean } {
  admin.tokens.forEach((t, i) => {
    const weakness = tokenWeakness(t.token);
    // The path and the actor, never the token.
    if (weakness !== undefined) {
      throw new SluiceError('invalid_config', `admin.tokens.${i}.token (actor ${t.actor}): ${weakness}`, {
        path: `admin.tokens.${i}.token`,
      });
    }
  });
  if (admin.devNoAuth && !isLoopback(admin.host)) {
    throw new SluiceError(
      'invalid_config',
      `admin.devNoAuth: allowed only on a loopback host, not ${admin.host}; set admin.tokens (or SLUICE_ADMIN_TOKENS)`,
      { path: 'admin.devNoAuth' },
    );
  }
  if (admin.tokens.length === 0 && !admin.devNoAuth) {
    throw new SluiceError(
      'invalid_config',
      'admin.tokens: the admin app refuses to start without tokens; set admin.tokens or SLUICE_ADMIN_TOKENS=actor:token (32+ characters, ~128 bits: openssl rand -base64 32), or admin.devNoAuth on a loopback host',
      { path: 'admin.tokens' },
    );
  }
  return { open: admin.tokens.length === 0 };
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** The token a request presents: `Authorization: Bearer <token>`, or HTTP Basic with the token as password. */
function presented(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const [scheme, value = ''] = header.split(/\s+/, 2);
  if (scheme?.toLowerCase() === 'bearer') return value;
  if (scheme?.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? undefined : decoded.slice(colon + 1);
  }
  return undefined;
}

/**
 * Refuses, before routing, every request without a valid token: Bull Board's pages, its
 * static assets and its API, the dashboard and the JSON API alike (Fastify runs a root
 * `onRequest` hook for every route registered after it, and for the not-found handler).
 * Tokens are compared as SHA-256 digests with `timingSafeEqual`, every token each time,
 * so neither a token's length nor its first differing byte shows in the time taken.
 *
 * A browser authenticates with HTTP Basic (any user name, the token as password): the
 * 401 carries a Basic challenge, so it asks once and sends the credentials with every
 * request after. Because a browser sends them by itself, state-changing requests from
 * another origin are refused (403), which keeps another site from pausing a campaign
 * through a logged-in browser.
 */
export function registerAuth(server: FastifyInstance, admin: SluiceConfig['admin']): void {
  const { open } = checkAuthConfig(admin);
  const tokens = admin.tokens.map((t) => ({ actor: t.actor, digest: digest(t.token) }));
  server.decorateRequest('actor', '');

  const refuse = (reply: FastifyReply): FastifyReply =>
    reply
      .code(401)
      .header('www-authenticate', 'Basic realm="Sluice admin", charset="UTF-8"')
      .send({
        error: {
          code: 'unauthenticated',
          message: 'send Authorization: Bearer <token> (or HTTP Basic with the token as password)',
        },
      });

  server.addHook('onRequest', async (req, reply) => {
    if (!['GET', 'HEAD', 'OPTIONS'].includes(req.method) && crossSite(req)) {
      return reply
        .code(403)
        .send({ error: { code: 'cross_origin', message: 'state-changing requests must come from this origin' } });
    }
    if (open) {
      req.actor = 'dev';
      return;
    }
    const token = presented(req);
    if (token === undefined) return refuse(reply);
    const d = digest(token);
    let actor: string | undefined;
    for (const t of tokens) {
      if (timingSafeEqual(d, t.digest) && actor === undefined) actor = t.actor;
    }
    if (actor === undefined) return refuse(reply);
    req.actor = actor;
  });
}

function crossSite(req: FastifyRequest): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    try {
      return new URL(origin).host !== req.headers.host;
    } catch {
      return true;
    }
  }
  if (origin === 'null') return true;
  const site = req.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
}
