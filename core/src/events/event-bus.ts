import { EventEmitter } from 'node:events';
import type { EventMap } from './event-types.js';

export type EventListener<K extends keyof EventMap> = (event: EventMap[K]) => void | Promise<void>;

/**
 * In-process publish/subscribe for core events. Listeners run asynchronously
 * and a failing listener never breaks the publisher or other listeners; its
 * error goes to the error handler (the core logs it).
 */
export class EventBus {
  private readonly emitter = new EventEmitter();
  private onError: (err: unknown, topic: string) => void = () => {};

  constructor() {
    this.emitter.setMaxListeners(100);
  }

  setErrorHandler(handler: (err: unknown, topic: string) => void): void {
    this.onError = handler;
  }

  on<K extends keyof EventMap>(topic: K, listener: EventListener<K>): () => void {
    const wrapped = (event: EventMap[K]) => {
      try {
        const r = listener(event);
        if (r && typeof (r as Promise<void>).catch === 'function') {
          (r as Promise<void>).catch((err) => this.onError(err, topic));
        }
      } catch (err) {
        this.onError(err, topic);
      }
    };
    this.emitter.on(topic, wrapped);
    return () => this.emitter.off(topic, wrapped);
  }

  publish<K extends keyof EventMap>(topic: K, event: EventMap[K]): void {
    this.emitter.emit(topic, event);
  }

  listenerCount(topic: keyof EventMap): number {
    return this.emitter.listenerCount(topic);
  }
}
