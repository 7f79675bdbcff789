import type { ServerResponse } from 'node:http';
import { ScenarioError } from '../scenario.js';
import type { Arrival, SandboxContext } from './context.js';
import { parseJson, sendJson, sendSesError, sendText } from './http.js';

/**
 * The `/_sandbox/*` endpoints, for processes other than the one that created the sandbox.
 * Returns false when the route is not one of them.
 */
export function inspect(ctx: SandboxContext, route: string, arrival: Arrival, res: ServerResponse): boolean {
  switch (route) {
    case 'GET /_sandbox/health':
      sendJson(res, 200, { ok: true });
      return true;
    case 'GET /_sandbox/accepted':
      if (ctx.recorder.keepsMessages) sendJson(res, 200, ctx.recorder.accepted());
      else sendJson(res, 409, { message: 'this sandbox runs with --keep counts: see GET /_sandbox/stats' });
      return true;
    case 'GET /_sandbox/stats':
      sendJson(res, 200, ctx.recorder.stats());
      return true;
    case 'GET /_sandbox/webhook-keys':
      sendJson(res, 200, ctx.webhookKeys());
      return true;
    case 'GET /_sandbox/sns/cert.pem': {
      const pem = ctx.webhookKeys().snsCertificate;
      if (pem === undefined) sendSesError(res, 404, 'NotFoundException', 'No SNS certificate: is openssl installed?');
      else sendText(res, 200, 'application/x-pem-file', pem);
      return true;
    }
    case 'GET /_sandbox/scenario':
      sendJson(res, 200, ctx.scenario());
      return true;
    case 'POST /_sandbox/reset':
      ctx.reset();
      sendJson(res, 200, { ok: true });
      return true;
    case 'PUT /_sandbox/scenario': {
      const json = parseJson(arrival.body);
      if (!json.ok) {
        sendSesError(res, 400, 'BadRequestException', 'Request body is not valid JSON.');
        return true;
      }
      try {
        ctx.setScenario(json.value);
      } catch (error) {
        if (!(error instanceof ScenarioError)) throw error;
        sendJson(res, 400, { error: error.code, message: error.message, path: error.path });
        return true;
      }
      sendJson(res, 200, { ok: true });
      return true;
    }
    default:
      return false;
  }
}
