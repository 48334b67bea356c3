// A TCP proxy to a PostgreSQL server that reads the client's side of the wire protocol: it records the
// statements that pass (Execute of the extended protocol, or a simple Query, with the text of their
// Parse), and it can cut the connection at the Nth statement from a mark: before the statement reaches
// the server, or after the server received it but before its answer reaches the client. The fault
// tests use it to lose the connection at each statement of a transaction.
import { connect, createServer, type Server, type Socket } from 'node:net';

export type CutMoment = 'before' | 'after';

export interface StatementProxy {
  url: string;
  /** Statements since the last mark, in order. */
  statements(): string[];
  /** Starts counting from zero (and recording) now. */
  mark(): void;
  /**
   * Cuts the connection that sends the statement numbered `index` (0-based, from the mark). Several cuts
   * may be pending at once, each at its own statement.
   */
  cutAt(index: number, moment: CutMoment): void;
  /** The text of the statement the last cut happened at, once it happened. */
  cutStatement(): string | null;
  close(): Promise<void>;
}

interface ClientState {
  buffer: Buffer;
  started: boolean;
  /** Statement texts by prepared statement name ('' is the unnamed one). */
  prepared: Map<string, string>;
  bound: string;
}

function cstring(buffer: Buffer, offset: number): [string, number] {
  const end = buffer.indexOf(0, offset);
  return [buffer.toString('utf8', offset, end), end + 1];
}

/** Splits the client's bytes into messages; returns each message's statement text when it executes one. */
function* clientMessages(state: ClientState): Generator<{ bytes: Buffer; executes: string | null }> {
  for (;;) {
    if (!state.started) {
      // The startup message (or an SSL request) has no type byte.
      if (state.buffer.length < 4) return;
      const length = state.buffer.readInt32BE(0);
      if (state.buffer.length < length) return;
      const bytes = state.buffer.subarray(0, length);
      state.buffer = state.buffer.subarray(length);
      if (bytes.readInt32BE(4) !== 80877103) state.started = true;
      yield { bytes, executes: null };
      continue;
    }
    if (state.buffer.length < 5) return;
    const length = state.buffer.readInt32BE(1) + 1;
    if (state.buffer.length < length) return;
    const bytes = state.buffer.subarray(0, length);
    state.buffer = state.buffer.subarray(length);
    yield { bytes, executes: statementOf(state, bytes) };
  }
}

function statementOf(state: ClientState, bytes: Buffer): string | null {
  const type = String.fromCharCode(bytes[0]!);
  if (type === 'P') {
    const [name, next] = cstring(bytes, 5);
    state.prepared.set(name, cstring(bytes, next)[0]);
  } else if (type === 'B') {
    const [, next] = cstring(bytes, 5);
    state.bound = state.prepared.get(cstring(bytes, next)[0]) ?? '?';
  } else if (type === 'E') {
    return state.bound;
  } else if (type === 'Q') {
    return cstring(bytes, 5)[0];
  }
  return null;
}

export async function startStatementProxy(databaseUrl: string): Promise<StatementProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let recorded: string[] = [];
  let cuts: { index: number; moment: CutMoment }[] = [];
  let cutText: string | null = null;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const state: ClientState = { buffer: Buffer.alloc(0), started: false, prepared: new Map(), bound: '' };
    let dropAnswers = false;
    const destroy = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      state.buffer = Buffer.concat([state.buffer, chunk]);
      for (const message of clientMessages(state)) {
        if (message.executes !== null) {
          const index = recorded.length;
          recorded.push(message.executes);
          const cut = cuts.find((pending) => pending.index === index);
          if (cut) {
            cutText = message.executes;
            const moment = cut.moment;
            cuts = cuts.filter((pending) => pending !== cut);
            if (moment === 'before') return destroy();
            // The rest of this exchange (Sync) goes too, so the server runs the statement; its answer
            // never reaches the client.
            dropAnswers = true;
          }
        }
        upstream.write(message.bytes);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (dropAnswers) return destroy();
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    statements: () => [...recorded],
    mark() {
      recorded = [];
      cutText = null;
    },
    cutAt(index, moment) {
      cuts.push({ index, moment });
    },
    cutStatement: () => cutText,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
