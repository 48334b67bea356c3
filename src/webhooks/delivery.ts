// The deliverer (docs/api.md §6.3), run by every worker process beside the job worker (src/server.ts):
// claims due deliveries under a lease (delivery-store.ts), POSTs each event signed with its endpoint's
// secrets, and records the outcome: delivered, due again after a backoff with jitter, or failed for good
// once its 3 days are over. An endpoint is failing from its first failure and disabled after 3 days of
// failures without a success. Time comes from `clock`, so tests move it by hand.
//
// Fair between organisations (issue 51): the deliverer keeps up to DELIVERY_SLOTS deliveries in flight
// and claims again as soon as one ends, so a slow delivery holds its own slot and no other; the claim
// lets an endpoint have PER_ENDPOINT_IN_FLIGHT at once and an organisation (per mode)
// PER_ORGANISATION_IN_FLIGHT, going round the organisations; and an endpoint whose attempt got no answer
// (a timeout, a refused connection) has its breaker opened: no attempt until a back-off has passed, then
// one at a time until one is answered.
import type { Sql } from '../db/connection.js';
import {
  type ClaimedDelivery,
  claimDeliveries,
  recordAttemptFailed,
  recordDelivered,
} from './delivery-store.js';
import { closeBreaker, markEndpointFailed, markEndpointHealthy, openBreaker } from './endpoint-store.js';
import type { SendEvent } from './sender.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';

/** How long an event is retried, and how long an endpoint may fail before it is disabled. */
export const RETRY_WINDOW_MS = 3 * 24 * 3600 * 1000;
/** The first retry's delay; each later one doubles it, up to RETRY_DELAY_MAX_MS. */
export const RETRY_DELAY_FIRST_MS = 60_000;
export const RETRY_DELAY_MAX_MS = 6 * 3600 * 1000;
/** A delivery's lease: well past the 10 s a POST may take (sender.ts), so only a dead worker loses it. */
export const DELIVERY_LEASE_MS = 60_000;
/**
 * Deliveries in flight at once in one process. A delivery waiting for its answer costs a socket and no
 * CPU; with the limits below, four organisations whose receivers all hang take 32 of them for 10 s and
 * leave none, so one more than that is held back only until the first of them times out.
 */
export const DELIVERY_SLOTS = 32;
/** In flight at once to one endpoint (every worker's counted), and to one whose last attempt got no answer. */
export const PER_ENDPOINT_IN_FLIGHT = 4;
/** In flight at once to one organisation's endpoints of one mode, every worker's counted. */
export const PER_ORGANISATION_IN_FLIGHT = 8;

/**
 * The delay after failed attempt `attempt` (1, 2, …): 1 min doubling to at most 6 h, with equal jitter
 * (between half and all of it) so that endpoints coming back are not hit by every retry at once.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const full = Math.min(RETRY_DELAY_FIRST_MS * 2 ** Math.max(0, attempt - 1), RETRY_DELAY_MAX_MS);
  return Math.round(full * (0.5 + random() / 2));
}

export interface DelivererLogger {
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}

export interface DelivererDeps {
  sql: Sql;
  clock: () => Date;
  send: SendEvent;
  workerId: string;
  random?: () => number;
  /** Deliveries in flight at most in this deliverer (DELIVERY_SLOTS). */
  concurrency?: number;
  /** The claim's limits (PER_ENDPOINT_IN_FLIGHT, PER_ORGANISATION_IN_FLIGHT). */
  perEndpoint?: number;
  perOrganisation?: number;
  leaseMs?: number;
  /** Idle wait between claims when nothing wakes the deliverer. */
  pollMs?: number;
  logger?: DelivererLogger | undefined;
  /** Work each round does first (the batch checks of src/webhooks/batch-completions.ts). */
  beforeRound?: (() => Promise<unknown>) | undefined;
}

export interface DeliveryRound {
  delivered: number;
  failed: number;
}

export interface WebhookDeliverer {
  /** Claims what is due at the clock's now and delivers it; resolves when every claimed one is recorded. */
  deliverDue(): Promise<DeliveryRound>;
  /**
   * Keeps deliveries in flight until stop(): claims what is due into the free slots at once, again when a
   * delivery ends, when `wake` is called, and every pollMs.
   */
  start(): void;
  wake(): void;
  /**
   * Stops claiming and waits for the deliveries in flight, at most `timeoutMs` when given (a shutdown's
   * SHUTDOWN_TIMEOUT_SECONDS): a delivery still in flight then is left to its lease and sent again by
   * another round, with the same event id (at least once).
   */
  stop(options?: { timeoutMs?: number | undefined }): Promise<void>;
}

/** The secrets that sign now: the current one, and the previous one during its 24 h after a rotation. */
function signingSecrets(delivery: ClaimedDelivery, now: Date): string[] {
  const previous = delivery.previousSecret;
  const until = delivery.previousSecretExpiresAt;
  return previous && until && until > now ? [delivery.secret, previous] : [delivery.secret];
}

/** Sends one claimed delivery and records its outcome, if the lease is still this worker's. */
async function deliverOne(deps: DelivererDeps, delivery: ClaimedDelivery): Promise<boolean> {
  const { sql, clock, workerId } = deps;
  const random = deps.random ?? Math.random;
  const sentAt = clock();
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const signature = signatureHeader(signingSecrets(delivery, sentAt), timestamp, delivery.body);
  const sent = await deps.send({
    url: delivery.url,
    body: delivery.body,
    headers: { [SIGNATURE_HEADER]: signature },
  });
  const now = clock();
  const outcome = { status: sent.status, error: sent.error };
  if (sent.ok) {
    await sql.begin(async (tx) => {
      if (await recordDelivered(tx, delivery, workerId, outcome, now)) {
        await markEndpointHealthy(tx, delivery.endpointId);
        await closeBreaker(tx, delivery.endpointId);
      }
    });
    return true;
  }
  const retryAt = new Date(now.getTime() + retryDelayMs(delivery.attempts, random));
  const giveUpAt = delivery.createdAt.getTime() + RETRY_WINDOW_MS;
  await sql.begin(async (tx) => {
    const mine = await recordAttemptFailed(
      tx,
      delivery,
      workerId,
      { ...outcome, retryAt: retryAt.getTime() <= giveUpAt ? retryAt : null },
      now,
    );
    if (!mine) return;
    const reason = `every delivery failed for 3 days; the last: ${sent.error ?? 'no answer'}`;
    await markEndpointFailed(tx, delivery.endpointId, now, { afterMs: RETRY_WINDOW_MS, reason });
    // No answer at all: the receiver is down or hangs, and its other deliveries would fare no better.
    if (sent.status === null) {
      const pause = { firstMs: RETRY_DELAY_FIRST_MS, maxMs: RETRY_DELAY_MAX_MS, jitter: 0.5 + random() / 2 };
      await openBreaker(tx, delivery.endpointId, now, pause);
    } else {
      await closeBreaker(tx, delivery.endpointId);
    }
  });
  return false;
}

export function makeWebhookDeliverer(deps: DelivererDeps): WebhookDeliverer {
  const { sql, clock, workerId } = deps;
  const silent: DelivererLogger = { warn() {}, error() {} };
  const logger = deps.logger ?? silent;
  const slots = deps.concurrency ?? DELIVERY_SLOTS;
  const inFlight = new Set<Promise<boolean>>();
  let running: Promise<void> | null = null;
  let stopping = false;
  let wakeUp: (() => void) | null = null;
  let woken = false;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  /** Claims into the free slots and starts each delivery; the promises of their outcomes. */
  async function claimAndSend(): Promise<Array<Promise<boolean>>> {
    await deps.beforeRound?.();
    const room = slots - inFlight.size;
    if (room <= 0) return [];
    const claimed = await claimDeliveries(sql, {
      workerId,
      n: room,
      leaseMs: deps.leaseMs ?? DELIVERY_LEASE_MS,
      now: clock(),
      perEndpoint: deps.perEndpoint ?? PER_ENDPOINT_IN_FLIGHT,
      perOrganisation: deps.perOrganisation ?? PER_ORGANISATION_IN_FLIGHT,
    });
    return claimed.map((delivery) => {
      const sending = deliverOne(deps, delivery).catch((error: unknown) => {
        // Its lease runs out and another round sends it again.
        logger.error({ err: error, event_id: delivery.eventId }, 'webhook delivery not recorded');
        return false;
      });
      inFlight.add(sending);
      void sending.then(() => {
        inFlight.delete(sending);
        // A slot is free, and the endpoint or organisation may have room again: claim at once.
        wake();
      });
      return sending;
    });
  }

  async function deliverDue(): Promise<DeliveryRound> {
    const outcomes = await Promise.all(await claimAndSend());
    const delivered = outcomes.filter(Boolean).length;
    return { delivered, failed: outcomes.length - delivered };
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      woken = false;
      try {
        await claimAndSend();
      } catch (error) {
        logger.warn({ err: error, worker_id: workerId }, 'webhook claim failed');
      }
      if (stopping || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deps.pollMs ?? 1000);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
    await Promise.all(inFlight);
  }

  return {
    deliverDue,
    start() {
      running ??= loop();
    },
    wake,
    async stop(options = {}) {
      stopping = true;
      wakeUp?.();
      if (running === null || options.timeoutMs === undefined) return void (await running);
      let timer: NodeJS.Timeout | undefined;
      const timeUp = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, options.timeoutMs);
      });
      await Promise.race([running, timeUp]);
      clearTimeout(timer);
    },
  };
}
