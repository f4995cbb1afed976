/**
 * The server of `tabrl serve`: Node's http server with OpenEnv's routes (GET /health, /schema,
 * /metadata, /state; the stateless POST /reset and /step) and, at /ws, one `ServeSession` per
 * WebSocket connection (the `ws` package). It keeps the limits: the session cap, the frame size
 * (ws's maxPayload, so an oversized frame is refused from its header, never buffered), the
 * requests a client may queue, the bytes a client that does not read may leave unsent, idle
 * sessions, and the bearer token. A session's requests are answered one at a time, in order, so a
 * slow or broken client holds up only its own session.
 *
 * It does not load environments or parse flags (src/cli/serve.ts does), and knows the episode only
 * through `ServeSession`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { errorMessage } from '../../common/error-message.ts';
import { describe } from './observation.ts';
import { ReplyOutbox } from './reply-outbox.ts';
import { ObservationReplyWriter } from './reply-text.ts';
import { ServeSession, type ServedEnvironment } from './session.ts';
import { ACTION_SCHEMA, OBSERVATION_SCHEMA, STATE_SCHEMA, WireError, type WireErrorCode } from './wire.ts';

/** The largest frame (and POST body) a client may send by default: 16 MiB, the isolated process's message limit. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 2 ** 20;
/** Requests one session may have waiting behind the one being answered. */
const MAX_QUEUED_REQUESTS = 16;
/** Reply bytes a client may leave unread by default before its session is dropped (a client that never reads). */
const DEFAULT_MAX_UNREAD_BYTES = 64 * 2 ** 20;

/** What the server is told at start. */
export interface ServeServerOptions {
  served: ServedEnvironment;
  host: string;
  /** 0 picks a free port. */
  port: number;
  maxSessions: number;
  /** A session that sends nothing for this long (while no request of it runs) is closed; undefined: never. */
  sessionTimeoutMs?: number;
  /** Clients must send `Authorization: Bearer <token>` (all routes but /health) when set. */
  token?: string;
  maxFrameBytes?: number;
  /** Reply bytes a client may leave unread (beyond what the kernel buffers) before its socket is dropped; default 64 MiB. */
  maxUnreadBytes?: number;
  /** GET /metadata's answer. */
  metadata: { name: string; description: string; version: string; readme_content: string };
}

/** A listening server. */
export interface ServeServer {
  /** http://HOST:PORT */
  readonly url: string;
  readonly port: number;
  /** Sessions open now: WebSocket sessions and stateless POST /reset or /step requests in progress (what --max-sessions caps). */
  readonly activeSessions: number;
  /** Stops taking connections, lets requests in progress finish for up to `graceMs`, fails the rest with EXECUTION_ERROR, closes every socket. */
  close(graceMs?: number): Promise<void>;
}

interface Connection {
  ws: WebSocket;
  session: ServeSession;
  observationWriter: ObservationReplyWriter;
  /** Frames received and not yet answered, oldest first; the first is being answered while `busy`. */
  waiting: { data: RawData; isBinary: boolean }[];
  busy: boolean;
  /** Settled once nothing is waiting: made only when the server closes and waits for it. */
  idle: { promise: Promise<void>; resolve(): void } | undefined;
  lastActivity: number;
}

/** Starts the server and resolves once it listens. */
export async function startServeServer(options: ServeServerOptions): Promise<ServeServer> {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const connections = new Set<Connection>();
  /** The episodes of stateless POST /reset and /step requests in progress: they hold a rollout too, so they count as sessions. */
  const stateless = new Set<ServeSession>();
  const activeSessions = () => connections.size + stateless.size;
  const capacityError = () =>
    new WireError('CAPACITY_REACHED', `the server holds its maximum of ${options.maxSessions} sessions; try again later or start it with a larger --max-sessions`, {
      active_sessions: activeSessions(),
      max_sessions: options.maxSessions,
    });
  let closing = false;
  const outbox = new ReplyOutbox<WebSocket>(writeReply);

  const http = createServer((request, response) => {
    handleHttp(request, response).catch((error: unknown) => sendJson(response, 500, { detail: errorMessage(error) }));
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxFrameBytes });

  async function handleHttp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/health' && request.method === 'GET') return sendJson(response, 200, { status: 'healthy' });
    if (!authorized(request, options.token)) return sendJson(response, 401, { detail: 'missing or wrong bearer token: send the header "Authorization: Bearer <token>"' });
    const route = `${request.method} ${path}`;
    if (route === 'GET /schema') return sendJson(response, 200, { action: ACTION_SCHEMA, observation: OBSERVATION_SCHEMA, state: STATE_SCHEMA });
    if (route === 'GET /metadata') return sendJson(response, 200, options.metadata);
    if (route === 'GET /state') return sendJson(response, 200, new ServeSession(options.served).state());
    if (route === 'POST /reset' || route === 'POST /step') {
      if (closing) return sendJson(response, 503, { detail: 'the server is shutting down' });
      const body = await readJsonBody(request, maxFrameBytes);
      if (body instanceof WireError) return sendJson(response, httpStatusOf(body.code), { detail: body.message, code: body.code });
      if (activeSessions() >= options.maxSessions) {
        const full = capacityError();
        return sendJson(response, httpStatusOf(full.code), { detail: full.message, code: full.code, ...full.extra });
      }
      const session = new ServeSession(options.served);
      stateless.add(session);
      try {
        if (route === 'POST /reset') return sendJson(response, 200, await session.reset(body));
        // A stateless step plays the first turn of a fresh episode: the body's reset fields pick the task.
        const { action, timeout_s: _timeout, request_id: _id, ...reset } = (body ?? {}) as Record<string, unknown>;
        await session.reset(reset);
        return sendJson(response, 200, await session.step(action));
      } catch (error) {
        if (error instanceof WireError) return sendJson(response, httpStatusOf(error.code), { detail: error.message, code: error.code });
        throw error;
      } finally {
        session.close();
        stateless.delete(session);
      }
    }
    if (['/health', '/schema', '/metadata', '/state', '/reset', '/step', '/ws'].includes(path)) return sendJson(response, 405, { detail: `${request.method} is not allowed on ${path}` });
    return sendJson(response, 404, { detail: `no route ${path}; the routes are GET /health, /schema, /metadata, /state, POST /reset, /step, and WebSocket /ws` });
  }

  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    };
    if (path !== '/ws') return refuse(404, 'Not Found');
    if (!authorized(request, options.token)) return refuse(401, 'Unauthorized');
    if (closing) return refuse(503, 'Service Unavailable');
    wss.handleUpgrade(request, socket, head, (ws) => accept(ws));
  });

  function accept(ws: WebSocket): void {
    ws.on('error', () => {});
    if (activeSessions() >= options.maxSessions) {
      ws.send(errorReply(capacityError()));
      ws.close(1013, 'capacity reached');
      return;
    }
    const connection: Connection = {
      ws,
      session: new ServeSession(options.served),
      observationWriter: new ObservationReplyWriter(),
      waiting: [],
      busy: false,
      idle: undefined,
      lastActivity: Date.now(),
    };
    connections.add(connection);
    ws.on('message', (data, isBinary) => onMessage(connection, data, isBinary));
    ws.on('close', () => {
      connections.delete(connection);
      connection.session.close('the client disconnected');
    });
  }

  function onMessage(connection: Connection, data: RawData, isBinary: boolean): void {
    connection.lastActivity = Date.now();
    if (connection.waiting.length >= MAX_QUEUED_REQUESTS) {
      send(connection, errorReply(new WireError('SESSION_ERROR', `more than ${MAX_QUEUED_REQUESTS} requests are waiting; send one request and wait for its reply before the next`)));
      closeSocket(connection.ws, 1008, 'too many requests waiting');
      return;
    }
    connection.waiting.push({ data, isBinary });
    if (!connection.busy) void answerInTurn(connection);
  }

  /** Answers the connection's waiting frames one at a time, in order, until none is left. */
  async function answerInTurn(connection: Connection): Promise<void> {
    connection.busy = true;
    while (connection.waiting.length > 0) {
      const { data, isBinary } = connection.waiting[0]!;
      try {
        const reply = await answer(connection, data, isBinary);
        if (reply !== undefined) send(connection, reply);
      } catch (error) {
        // answer() turns every failure into an error reply; this is for a bug in it, so the session still answers the frames behind.
        send(connection, errorReply(new WireError('EXECUTION_ERROR', `the server failed on a request: ${errorMessage(error)}`)));
      } finally {
        connection.waiting.shift();
        connection.lastActivity = Date.now();
      }
    }
    connection.busy = false;
    connection.idle?.resolve();
    connection.idle = undefined;
  }

  /** Resolves once the connection has answered every frame it received. */
  function whenIdle(connection: Connection): Promise<void> {
    if (!connection.busy) return Promise.resolve();
    if (!connection.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((settle) => (resolve = settle));
      connection.idle = { promise, resolve };
    }
    return connection.idle.promise;
  }

  /** The text of the reply to one frame; undefined for a close, which has none. */
  async function answer(connection: Connection, data: RawData, isBinary: boolean): Promise<string | undefined> {
    let request: unknown;
    try {
      if (isBinary) throw new Error('a binary frame; send JSON as a text frame');
      request = JSON.parse(rawText(data));
    } catch (error) {
      return errorReply(new WireError('INVALID_JSON', `the frame is not valid JSON (${errorMessage(error)}); send {"type": "...", "data": {...}}`));
    }
    if (typeof request !== 'object' || request === null || Array.isArray(request) || typeof (request as { type?: unknown }).type !== 'string') {
      return errorReply(new WireError('VALIDATION_ERROR', `a request is a JSON object with a "type" (reset, step, state, mcp, close), got ${describe(request)}`));
    }
    const { type, data: payload } = request as { type: string; data?: unknown };
    try {
      switch (type) {
        case 'reset':
          return connection.observationWriter.write(await connection.session.reset(payload));
        case 'step':
          return connection.observationWriter.write(await connection.session.step(payload));
        case 'state':
          return JSON.stringify({ type: 'state', data: connection.session.state() });
        case 'mcp':
          return JSON.stringify({ type: 'mcp', data: mcpReply(payload, options.served.tools ?? []) });
        case 'close':
          connection.session.close();
          closeSocket(connection.ws, 1000, 'closed by the client');
          return undefined;
        default:
          return errorReply(new WireError('UNKNOWN_TYPE', `unknown request type "${type.slice(0, 40)}"; the types are reset, step, state, mcp and close`));
      }
    } catch (error) {
      if (error instanceof WireError) return errorReply(error);
      return errorReply(new WireError('EXECUTION_ERROR', `the server failed on a ${type} request: ${errorMessage(error)}`));
    }
  }

  /** Queues a reply's text, to be written with the others of this turn (reply-outbox.ts). */
  function send(connection: Connection, text: string): void {
    if (connection.ws.readyState !== WebSocket.OPEN) return;
    outbox.queue(connection.ws, text);
  }

  function writeReply(ws: WebSocket, text: string): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > (options.maxUnreadBytes ?? DEFAULT_MAX_UNREAD_BYTES)) {
      // The client has not read megabytes of replies: drop it rather than hold them all.
      ws.terminate();
      return;
    }
    ws.send(text);
  }

  /** Closes a socket after writing the replies queued for it (and the rest of the batch). */
  function closeSocket(ws: WebSocket, code: number, reason: string): void {
    outbox.flush();
    ws.close(code, reason);
  }

  const reaper =
    options.sessionTimeoutMs === undefined
      ? undefined
      : setInterval(
          () => {
            const now = Date.now();
            for (const connection of connections) {
              if (!connection.busy && now - connection.lastActivity > options.sessionTimeoutMs!) {
                connection.session.close('the session was idle too long');
                closeSocket(connection.ws, 1000, `idle for more than ${Math.round(options.sessionTimeoutMs! / 1000)} s`);
              }
            }
          },
          Math.min(1000, Math.max(50, options.sessionTimeoutMs / 4)),
        );
  reaper?.unref();

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const hostInUrl = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    url: `http://${hostInUrl}:${port}`,
    port,
    get activeSessions() {
      return activeSessions();
    },
    async close(graceMs = 5000) {
      if (closing) return;
      closing = true;
      if (reaper) clearInterval(reaper);
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      const inFlight = Promise.all([...connections].map(whenIdle));
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        inFlight,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
      // Whatever still runs ends now: its waiting step fails with EXECUTION_ERROR.
      for (const connection of connections) connection.session.close('the server is shutting down');
      for (const session of stateless) session.close('the server is shutting down');
      await Promise.race([Promise.all([...connections].map(whenIdle)), delay(1000)]);
      for (const connection of connections) closeSocket(connection.ws, 1001, 'the server is shutting down');
      await Promise.race([Promise.all([...connections].map((connection) => new Promise((resolve) => connection.ws.once('close', resolve)))), delay(1000)]);
      for (const connection of connections) connection.ws.terminate();
      http.closeAllConnections();
      await stopped;
    },
  };
}

/** The JSON-RPC answer to an `mcp` request: `tools/list` gives the environment's tools; other methods are not offered. */
function mcpReply(payload: unknown, tools: readonly { function: { name: string; description: string; parameters: Record<string, unknown> } }[]): unknown {
  const request = (typeof payload === 'object' && payload !== null ? payload : {}) as { id?: unknown; method?: unknown };
  const id = request.id ?? null;
  if (request.method === 'tools/list') {
    return { jsonrpc: '2.0', id, result: { tools: tools.map((tool) => ({ name: tool.function.name, description: tool.function.description, input_schema: tool.function.parameters })) } };
  }
  const method = typeof request.method === 'string' ? request.method.slice(0, 60) : describe(request.method);
  return { jsonrpc: '2.0', id, error: { code: -32601, message: `method ${method} is not offered; this server answers tools/list (call tools with a step: {"type":"call_tool",...})` } };
}

/** The text of an error reply. */
function errorReply(error: WireError): string {
  return JSON.stringify({ type: 'error', data: { message: error.message, code: error.code, ...error.extra } });
}

function httpStatusOf(code: WireErrorCode): number {
  return code === 'VALIDATION_ERROR' ? 422 : code === 'INVALID_JSON' ? 400 : code === 'EXECUTION_ERROR' ? 500 : code === 'CAPACITY_REACHED' ? 503 : 409;
}

/** Whether the request carries the bearer token (always, when there is none). */
function authorized(request: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const header = request.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** The request body as JSON (undefined when empty), or the WireError to answer with: over `maxBytes` it stops reading at once. */
function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    request.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        done = true;
        // The rest is read and dropped, never held.
        resolve(new WireError('VALIDATION_ERROR', `the body is over the limit of ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    request.on('error', () => {});
    request.on('end', () => {
      if (done) return;
      done = true;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch (error) {
        resolve(new WireError('INVALID_JSON', `the body is not valid JSON (${errorMessage(error)})`));
      }
    });
  });
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
