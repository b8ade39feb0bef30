/**
 * A read that many concurrent callers ask with the same key, shared among them without ever answering a caller
 * from a read that began before the caller asked. A caller arriving while no read of its key runs starts one;
 * callers arriving while one runs do not join it (its snapshot may predate them): they share the next read,
 * started as soon as the running one ends. So at most one read per key is in flight and one queued, and every
 * answer is as fresh as an unshared read would have been.
 */
export function sharedFreshRead<K, V>(read: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const running = new Map<K, Promise<V>>();
  const queued = new Map<K, Promise<V>>();
  const start = (key: K): Promise<V> => {
    const reading = read(key).finally(() => {
      if (running.get(key) === reading) running.delete(key);
    });
    running.set(key, reading);
    return reading;
  };
  return (key) => {
    const next = queued.get(key);
    if (next) return next;
    const current = running.get(key);
    if (!current) return start(key);
    const waiting = current.then(() => undefined, () => undefined).then(() => {
      queued.delete(key);
      return start(key);
    });
    queued.set(key, waiting);
    return waiting;
  };
}
