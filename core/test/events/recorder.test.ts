import 'reflect-metadata';
import t from 'tap';
import { EventBus } from '../../src/events/event-bus.js';
import { EventRecorder, estimateEventBytes } from '../../src/event-manager/recorder.js';
import type { FerryConfig } from '../../src/config/schema.js';
import type { FsEvent, LogEvent } from '../../src/events/event-types.js';

const recorder = (em: { recorder_size?: number; recorder_max_bytes?: number }) => {
  const bus = new EventBus();
  const r = new EventRecorder(bus, { event_manager: em } as unknown as FerryConfig);
  r.start();
  return { bus, r };
};
const fsEvent = (i: number, path = `/f${i}.txt`) => ({ timestamp: i, action: 'upload', username: 'u', virtual_path: path, status: 1 }) as unknown as FsEvent;

t.test('keeps at most recorder_size events per kind, the newest', async (t) => {
  const { bus, r } = recorder({ recorder_size: 3, recorder_max_bytes: 1 << 20 });
  for (let i = 1; i <= 5; i++) bus.publish('fs', fsEvent(i));
  bus.publish('log', { timestamp: 9, event: 1, username: 'u' } as unknown as LogEvent);
  t.same(
    r.query('fs', 0, 100).map((e) => e.timestamp),
    [3, 4, 5],
  );
  t.equal(r.usage().fs.events, 3);
  t.equal(r.usage().log.events, 1, 'kinds are bounded separately');
  t.same(
    r.query('fs', 4, 4).map((e) => e.timestamp),
    [4],
    'bounds are inclusive',
  );
});

t.test('keeps at most recorder_max_bytes of estimated memory per kind', async (t) => {
  const long = '/' + 'x'.repeat(10_000);
  const per = estimateEventBytes(fsEvent(0, long));
  t.ok(per > 20_000, 'a 10,000-character path counts two bytes per character');
  const { bus, r } = recorder({ recorder_size: 1000, recorder_max_bytes: per * 4 });
  for (let i = 1; i <= 50; i++) bus.publish('fs', fsEvent(i, long));
  const u = r.usage().fs;
  t.equal(u.events, 4, 'events beyond the byte budget are dropped, oldest first');
  t.ok(u.bytes <= per * 4);
  t.same(
    r.query('fs', 0, 100).map((e) => e.timestamp),
    [47, 48, 49, 50],
  );
  // small events after large ones: the budget is counted per event, not per slot
  for (let i = 51; i <= 60; i++) bus.publish('fs', fsEvent(i));
  t.equal(r.usage().fs.events, 13, 'freed bytes make room for many small events');
  t.equal(r.query('fs', 0, 100).at(-1)!.timestamp, 60);
});

t.test('an event larger than the whole budget is still kept alone', async (t) => {
  const { bus, r } = recorder({ recorder_size: 10, recorder_max_bytes: 300 });
  bus.publish('fs', fsEvent(1, '/' + 'y'.repeat(1000)));
  t.equal(r.usage().fs.events, 1);
  bus.publish('fs', fsEvent(2, '/' + 'y'.repeat(1000)));
  t.same(
    r.query('fs', 0, 10).map((e) => e.timestamp),
    [2],
  );
});

t.test('0 turns it off; stop unsubscribes', async (t) => {
  for (const em of [{ recorder_size: 0 }, { recorder_max_bytes: 0 }]) {
    const { bus, r } = recorder(em);
    bus.publish('fs', fsEvent(1));
    t.equal(r.usage().fs.events, 0, JSON.stringify(em));
  }
  const { bus, r } = recorder({});
  bus.publish('fs', fsEvent(1));
  r.stop();
  bus.publish('fs', fsEvent(2));
  t.equal(r.usage().fs.events, 1);
});

t.test('a full ring drops the oldest in order, across its compactions, and its storage stays bounded', async (t) => {
  const { bus, r } = recorder({ recorder_size: 100, recorder_max_bytes: 1 << 20 });
  const slots = () => (r as unknown as { rings: { fs: { events: unknown[] } } }).rings.fs.events.length;
  let most = 0;
  for (let i = 1; i <= 1234; i++) {
    bus.publish('fs', fsEvent(i));
    most = Math.max(most, slots());
    if (i % 97 === 0 || i === 1234) {
      const got = r.query('fs', 0, 1e9).map((e) => e.timestamp);
      const want = Array.from({ length: Math.min(i, 100) }, (_, k) => i - Math.min(i, 100) + 1 + k);
      if (JSON.stringify(got) !== JSON.stringify(want)) t.fail(`after ${i} events: ${got.slice(0, 3)}... instead of ${want.slice(0, 3)}...`);
    }
  }
  t.equal(r.usage().fs.events, 100);
  t.equal(r.usage().fs.bytes, 100 * estimateEventBytes(fsEvent(1234)), 'the bytes of the events held, no more');
  t.same(
    r.query('fs', 1200, 1202).map((e) => e.timestamp),
    [1200, 1201, 1202],
  );
  t.ok(most <= 201, `at most twice the ring's size in slots (${most})`);
});
