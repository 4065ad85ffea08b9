// What an operator watches of the queue: jobs per kind and state (BullMQ's lists, read at each look), the oldest
// waiting job's age, and how long jobs waited and ran and which failed (heard from QueueEvents while this process
// runs). Every server sees the whole queue, not a share of it: its figures are the queue's, the same from any
// replica.
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOB_KINDS } from '../workflow/jobs.js';
import { PREFIX, QUEUE_NAME, connect } from './connection.js';
import { PREVIEW } from './preview-job.js';

/** The states shown; a prioritized job waits too (BullMQ keeps it in a list of its own). */
export const STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
export type State = (typeof STATES)[number];
const LISTS: Record<State, string[]> = {
  waiting: ['wait', 'prioritized'],
  active: ['active'],
  delayed: ['delayed'],
  failed: ['failed'],
};

/** Upper bounds (seconds) of the histograms' buckets: a cached preview in well under a second, a long one minutes. */
export const BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** A cumulative histogram: counts per bucket (each bucket counts what fell in it alone), their sum and count. */
export interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

export interface QueueSnapshot {
  /** Whether Redis answered this look (when not, the counts are absent, not zero). */
  up: boolean;
  /** Jobs by kind and state; a kind is the first part of its content-addressed id (preview-…, inspect-…). */
  jobs: { kind: string; state: State; count: number }[];
  /** Age of the oldest job not running yet (waiting or delayed), in seconds (0 when none). */
  oldestWaitingS: number;
  /** Completed jobs heard since this process started: seconds from a worker's start to its end, by kind. */
  durations: Map<string, Histogram>;
  /** The same jobs: seconds from being queued to a worker starting the attempt that finished. */
  waits: Map<string, Histogram>;
  /** Jobs that failed for good (no retry left, or not retried), heard since this process started, by kind. */
  failedTotal: Map<string, number>;
}

/** Ids listed per state at each look: past this (a queue in deep trouble) the rest count as kind "other". */
const LISTED = 10_000;
/** How long one look may wait for Redis (a scrape must not hang on a Redis that is away). */
const LOOK_MS = 2_000;

export const kindOf = (jobId: string): string => /^([a-z]+)-[0-9a-f]{16,}$/.exec(jobId)?.[1] ?? 'other';

export function observe(h: Map<string, Histogram>, kind: string, seconds: number): void {
  let entry = h.get(kind);
  if (!entry) h.set(kind, (entry = { counts: BUCKETS.map(() => 0).concat(0), sum: 0, count: 0 }));
  const i = BUCKETS.findIndex((b) => seconds <= b);
  entry.counts[i === -1 ? BUCKETS.length : i]!++;
  entry.sum += seconds;
  entry.count++;
}

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Every kind a job can be: each is written in every state, 0 included (an absent series is not a 0 to an alert). */
export const KINDS: readonly string[] = [...JOB_KINDS, PREVIEW];

/**
 * A state's jobs by kind, every kind there even at 0: the ids listed (kind from each), and those past the listed ones
 * counted as "other".
 */
export function countsByKind(ids: readonly string[], total: number): Map<string, number> {
  const byKind = new Map<string, number>(KINDS.map((k) => [k, 0]));
  for (const id of ids) byKind.set(kindOf(id), (byKind.get(kindOf(id)) ?? 0) + 1);
  if (total > ids.length) byKind.set('other', (byKind.get('other') ?? 0) + total - ids.length);
  return byKind;
}

export class QueueMetrics {
  private readonly conn: Redis;
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly durations = new Map<string, Histogram>();
  private readonly waits = new Map<string, Histogram>();
  private readonly failedTotal = new Map<string, number>(KINDS.map((k) => [k, 0]));

  constructor(url: string) {
    this.conn = connect(url, 'cutroom-server-metrics');
    this.conn.on('error', () => {});
    this.queue = new Queue(QUEUE_NAME, { connection: this.conn, prefix: PREFIX });
    this.queue.on('error', () => {});
    this.events = new QueueEvents(QUEUE_NAME, {
      connection: connect(url, 'cutroom-server-metrics-events'),
      prefix: PREFIX,
    });
    this.events.on('error', () => {});
    // The event carries no times: the job does (its attempt's start, its end); it is kept an hour after it ends.
    this.events.on('completed', ({ jobId }) => {
      void within(this.queue.getJob(jobId), LOOK_MS)
        .then((job) => {
          if (!job?.processedOn || !job.finishedOn) return;
          observe(this.durations, kindOf(jobId), Math.max(0, job.finishedOn - job.processedOn) / 1000);
          observe(this.waits, kindOf(jobId), Math.max(0, job.processedOn - job.timestamp) / 1000);
        })
        .catch(() => {});
    });
    this.events.on(
      'failed',
      ({ jobId }) => void this.failedTotal.set(kindOf(jobId), (this.failedTotal.get(kindOf(jobId)) ?? 0) + 1),
    );
  }

  /** The queue now: one round of reads, bounded in time (Redis away: `up` false, no counts). */
  async snapshot(): Promise<QueueSnapshot> {
    const heard = { durations: this.durations, waits: this.waits, failedTotal: this.failedTotal };
    try {
      return { up: true, ...(await within(this.look(), LOOK_MS)), ...heard };
    } catch {
      return { up: false, jobs: [], oldestWaitingS: 0, ...heard };
    }
  }

  private async look(): Promise<Pick<QueueSnapshot, 'jobs' | 'oldestWaitingS'>> {
    const jobs: QueueSnapshot['jobs'] = [];
    for (const state of STATES) {
      const [total, ids] = await Promise.all([
        this.queue.getJobCountByTypes(...(LISTS[state] as never[])),
        this.queue.getRanges(LISTS[state] as never[], 0, LISTED - 1),
      ]);
      for (const [kind, count] of countsByKind(ids, total)) jobs.push({ kind, state, count });
    }
    return { jobs, oldestWaitingS: await this.oldestWaiting() };
  }

  /**
   * The oldest job not running yet: waiting (the far end of the wait list, the prioritized ones), or delayed (a
   * retry's backoff, or a job put back for its caller's share, which is put back again and again while that caller
   * has its share running: a wait as real as any). Delayed jobs are ordered by when they are due, not by age: the
   * first few hundred due are looked at.
   */
  private async oldestWaiting(): Promise<number> {
    const ids = [
      ...(await this.queue.getRanges(['wait'], 0, 0, true)),
      ...(await this.queue.getRanges(['prioritized'], 0, 99)),
      ...(await this.queue.getRanges(['delayed'], 0, 299, true)),
    ];
    const jobs = await Promise.all(ids.map((id) => this.queue.getJob(id)));
    const oldest = Math.min(...jobs.map((j) => j?.timestamp ?? Infinity));
    return oldest === Infinity ? 0 : Math.max(0, (Date.now() - oldest) / 1000);
  }

  async close(): Promise<void> {
    // Bounded: with Redis away, BullMQ's close waits for a connection that may never come back.
    await within(Promise.allSettled([this.events.close(), this.queue.close()]), 3000).catch(() => {});
    this.conn.disconnect();
  }
}
