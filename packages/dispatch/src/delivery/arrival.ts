import { setTimeout as sleep } from 'node:timers/promises';
import type { DispatchJobData } from '@sluice/core';
import type { DeliveryContext } from './context.js';
import { arrivalLayers } from './precheck.js';
import type { OnStep } from './steps.js';

/** No room at the arrival gate: the request is given up before its final bytes, nothing counted. */
export class NoRoom extends Error {
  constructor(
    /** When to look again. */
    readonly waitMs: number,
    /** Why, for the record's last outcome when admission is asked again. */
    readonly why: string,
  ) {
    super(why);
  }
}

/**
 * The arrival gate, just before a send's final bytes (the adapter's gate, before the
 * `submit` mark): the send is counted at every layer a provider or receiver counts arrivals
 * at, and goes only while each keeps rate + burst in any second, however late the message
 * is for its slot (a stall leaves room behind it; late sends and on-time ones never add up
 * past it). A short wait for the room (within `worker.lateAfterMs`) is spent here, the
 * request held before its final bytes.
 *
 * Placing the send this late, not before the provider call, keeps what lies between the
 * count and the arrival to the mark's round trip: the SDK's work (a signature, the body)
 * comes before it. A send that still comes out later than its place by more than half the
 * jitter slack (its process stalled or starved while it waited) asks again, its first place
 * left counted: room lost, never a second over. No room, or late twice: {@link NoRoom}.
 */
export async function takePlace(ctx: DeliveryContext, m: DispatchJobData, onStep?: OnStep): Promise<void> {
  const { clock, config, limiter } = ctx;
  const slackMs = config.jitterSlackMs / 2;
  for (let asks = 1; ; asks++) {
    const asked = clock();
    const room = await limiter.arrive({
      layers: arrivalLayers(ctx, m),
      aheadMs: config.worker.lateAfterMs,
      priority: m.priority,
    });
    if (room.outcome === 'beyond') throw new NoRoom(room.waitMs, `no room at the ${room.layer} for ${room.waitMs} ms`);
    onStep?.('placed', m.id);
    if (room.waitMs > 0) await sleep(room.waitMs);
    const lateMs = clock() - (asked + room.waitMs);
    if (slackMs === 0 || lateMs <= slackMs) return;
    if (asks === 2) throw new NoRoom(1, `late for its place at the arrival gate by ${lateMs} ms, twice`);
  }
}
