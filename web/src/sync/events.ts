import type { EngineEvent } from './types.js';

/** This tab's listeners (SyncEngine.subscribe): what changed, the status, notices, presence. */
export class EngineEvents {
  private readonly listeners = new Set<(event: EngineEvent) => void>();

  subscribe(listener: (event: EngineEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: EngineEvent) {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        // One broken listener must not stop the others or the sync.
        console.error(error);
      }
    }
  }
}
