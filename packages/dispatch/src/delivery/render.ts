import {
  SluiceError,
  compileContent,
  type CompiledContent,
  type DispatchJobData,
  type QueuedMessage,
} from '@sluice/core';
import type { Campaigns } from '@sluice/store';
import type { DeliveryContext } from './context.js';

/** Compiled contents kept per process (a campaign's content never changes once set). */
const MAX_CACHED = 256;

/** Renders an injected recipient's message from its campaign's content, at send time. */
export interface Renderer {
  /**
   * The message to send: an injected recipient's rendered from its campaign's content and
   * its merge data, any other as it is. A template that cannot render for this recipient
   * throws `render_failed` naming the field and the variable.
   */
  render(m: DispatchJobData): Promise<QueuedMessage>;
}

/** Creates the renderer of one worker process. */
export function createRenderer(campaigns: Pick<Campaigns, 'content'>): Renderer {
  const compiled = new Map<string, Promise<CompiledContent>>();

  function contentOf(campaignId: string): Promise<CompiledContent> {
    let c = compiled.get(campaignId);
    if (!c) {
      c = campaigns.content(campaignId).then((content) => {
        if (!content)
          throw new SluiceError('campaign_no_content', `campaign ${campaignId} has no content to render`, {
            path: 'campaignId',
          });
        return compileContent(content);
      });
      // A failed read is not kept: the next message asks again.
      c.catch(() => compiled.delete(campaignId));
      if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
      compiled.set(campaignId, c);
    }
    return c;
  }

  return {
    async render(m) {
      if (m.injected === undefined || m.campaignId === undefined) return m;
      const content = await contentOf(m.campaignId);
      return { ...m, ...content.render(m.injected.data) };
    },
  };
}

/**
 * The message to send, or undefined when it cannot render: then it has ended `rejected`
 * (family `content_rejected`, the reply naming the field and the variable), before any
 * attempt. A Redis failure reading the content throws: the job is tried again.
 */
export async function rendered(
  ctx: DeliveryContext,
  renderer: Renderer,
  m: DispatchJobData,
): Promise<DispatchJobData | undefined> {
  try {
    return { ...m, ...(await renderer.render(m)) };
  } catch (error) {
    if (!(error instanceof SluiceError) || (error.code !== 'render_failed' && error.code !== 'campaign_no_content'))
      throw error;
    await ctx.store.finalize(m.id, 'rejected', {
      campaignId: m.campaignId,
      reply: `not sent: ${error.message}`.slice(0, 500),
      outcome: 'content_rejected',
      from: ['queued', 'dispatched', 'retrying'],
    });
    ctx.logger.warn({ id: m.id, campaignId: m.campaignId, path: error.path }, `message not rendered: ${error.message}`);
    return undefined;
  }
}
