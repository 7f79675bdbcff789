import type { PriorityClass } from '@sluice/core';

/**
 * Local permits over the connection slots this process holds. Critical mail may use
 * every permit; other classes leave a quarter of them (at most `maxCriticalReserve`)
 * free, so an OTP never waits behind a newsletter in this process.
 */
export class SlotGate {
  #capacity = 0;
  #inUse = 0;
  readonly #waiters: { priority: PriorityClass; resolve: () => void }[] = [];

  constructor(private readonly maxCriticalReserve: number) {}

  /** Called when the number of slots held changes. */
  resize(capacity: number): void {
    this.#capacity = capacity;
    this.#pump();
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** Waits for a permit; returns its release function. */
  async acquire(priority: PriorityClass): Promise<() => void> {
    await new Promise<void>((resolve) => {
      this.#waiters.push({ priority, resolve });
      this.#pump();
    });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse--;
      this.#pump();
    };
  }

  #limit(priority: PriorityClass): number {
    if (priority === 'critical') return this.#capacity;
    return this.#capacity - Math.min(this.maxCriticalReserve, Math.floor(this.#capacity / 4));
  }

  #pump(): void {
    // Critical first, then arrival order.
    this.#waiters.sort((a, b) => Number(b.priority === 'critical') - Number(a.priority === 'critical'));
    for (let i = 0; i < this.#waiters.length;) {
      const w = this.#waiters[i]!;
      if (this.#inUse < this.#limit(w.priority)) {
        this.#inUse++;
        this.#waiters.splice(i, 1);
        w.resolve();
      } else {
        i++;
      }
    }
  }
}
