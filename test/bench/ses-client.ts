// The real SES client as the benches drive it alone (no Sluice around it): the `pipeline`
// figure's SDK-alone row and the `cost` figure's ESP call measured apart.
import { Agent } from 'node:http';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';

/** An SES client sending to `endpoint` (a sandbox) with `sockets` kept-alive connections, no retries. */
export function benchSesClient(endpoint: string, sockets: number): SESv2Client {
  return new SESv2Client({
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'BENCH', secretAccessKey: 'bench' },
    maxAttempts: 1,
    requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: sockets }) },
  });
}

/** Message `i` of a bench run (50 domains), tagged with a Sluice id as the adapter tags it when `tagged`. */
export function benchEmail(i: number, tagged = false): SendEmailCommand {
  return new SendEmailCommand({
    FromEmailAddress: 'bench@acme.test',
    Destination: { ToAddresses: [`r${i}@d${i % 50}.test`] },
    Content: { Simple: { Subject: { Data: 'bench' }, Body: { Text: { Data: 'hello' } } } },
    ...(tagged ? { EmailTags: [{ Name: 'sluice_id', Value: `m${i}` }] } : {}),
  });
}
