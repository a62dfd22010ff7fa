/**
 * The server's clock. It never goes backwards within a process, and it starts no earlier than
 * the newest stored change, so updatedAt never decreases even if the system clock does (D-SYNC-2).
 */
export interface Clock {
  now(): number;
}

export class MonotonicClock implements Clock {
  private last: number;

  constructor(
    floor = 0,
    private readonly source: () => number = Date.now,
  ) {
    this.last = floor;
  }

  now(): number {
    const current = this.source();
    if (current > this.last) this.last = current;
    return this.last;
  }

  /** Raise the floor, e.g. to the newest updatedAt found in the database at start-up. */
  advanceTo(floor: number): void {
    if (floor > this.last) this.last = floor;
  }
}

export const iso = (ms: number): string => new Date(ms).toISOString();
