// devflow-gate-cordis: a devflow admission gate for @deepseek-ai/cordis that forwards every
// transition attempt to a devflow-gate admission server (POST /v1/admit, docs/server.md).
//
// On the `devflow/transition` waterfall, like the upstream agent gate:
//  - the server allows → await next(); when the rest of the waterfall admits too, append the
//    server's checks to the returned decision (checks accumulate on the way back); a
//    downstream veto passes back unchanged;
//  - the server vetoes → return the veto unchanged; when it failed closed (`park`), queue the
//    park with ctx.devflow.transition(…) WITHOUT awaiting it (the deadlock rule: the waterfall
//    runs inside the card's serial turn, so awaiting a write on the same card would wait for
//    the very transition that is waiting for it);
//  - the server unreachable, slower than timeoutMs, or answering anything unexpected, or any
//    exception on the way → veto naming the fault, and park: a missing gate never waves a move
//    through;
//  - the server busy (HTTP 503: its queue is full, or it is draining for a stop) → veto naming
//    it, and NO park: the server asked for a retry, the card is not at fault (trial20 3a);
//  - an attempt that is itself a park (to `blocked`) never queues another park: it is vetoed
//    like any other when the server cannot decide, and that is all (trial15 W1: the park of a
//    park of a park … ran ~700 times a second while the server was down). One attempt makes at
//    most one park, and so at most two admission requests (docs/decisions.md);
//  - the plugin's own config unusable (no socket or url, a url it cannot use, a timeoutMs node
//    cannot wait, a token file it cannot read or the server would not match) → the plugin still
//    loads, logs an error, and vetoes every attempt naming the problem, without a park: a gate
//    whose config is wrong closes, it never leaves the waterfall ungated (trial20 3d);
//  - a unix socket owned by a uid other than `serverUid` (default: this process's uid) → the
//    token and the attempt are not sent, and the attempt is vetoed without a park (trial20 3c).
import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { readFileSync } from 'node:fs'
import { lstat, realpath, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { request as httpRequest } from 'node:http'

/** An actor of the devflow journal. */
export interface DevActor {
  kind: 'human' | 'agent' | 'command'
  name?: string
  session?: string
}

/** One gate check recorded in the committed journal entry. */
export interface GateCheck {
  by: DevActor
  verdict: 'allowed'
  summary?: string
}

/** What every policy of the waterfall sees. */
export interface TransitionAttempt {
  id: string
  from: string
  to: string
  expectedRevision: number
  by: DevActor
  reason?: string
  root: string
  at: string
}

export type TransitionDecision =
  | { allowed: true, approvedBy?: DevActor, checks?: GateCheck[] }
  | { allowed: false, reason: string }

/** The request the devflow store resolves and commits. */
export interface TransitionRequest {
  id: string
  to: string
  expectedRevision: number
  by: DevActor
  reason?: string
  root?: string
}

/** The part of the devflow store service this plugin uses. */
export interface DevflowStore {
  transition(request: TransitionRequest): Promise<{ ok: boolean, message?: string, code?: string }>
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    devflow: DevflowStore
  }
  interface Events {
    'devflow/transition'(
      attempt: TransitionAttempt,
      next: () => Promise<TransitionDecision> | TransitionDecision,
    ): Promise<TransitionDecision> | TransitionDecision
  }
}

export const name = 'devflow-gate-cordis'
export const inject = ['devflow']

/** Where the admission server listens (exactly one of socket / url) and how long to wait. */
export interface Config {
  /** Path of the server's unix socket, e.g. /run/devflow-gate/gate.sock. */
  socket?: string
  /** Base URL of a TCP listener, e.g. http://127.0.0.1:8417. */
  url?: string
  /** File holding the bearer token the server was started with (--token-file). */
  tokenFile?: string
  /** The uid that must own `socket` (devflow-gate serve's uid; root's always may); default this process's uid. */
  serverUid?: number
  /**
   * The whole admission's budget in ms, 1 to 2147483647; sent as X-Devflow-Deadline-Ms less a
   * margin (deadlineFor).
   */
  timeoutMs: number
}

/** The largest timeoutMs: node's timers and the server's X-Devflow-Deadline-Ms stop there. */
export const MAX_TIMEOUT_MS = 2147483647

/**
 * The X-Devflow-Deadline-Ms sent for a `timeoutMs`: a margin below it (a tenth, at least 50 ms
 * and at most 1000 ms; at least 1 ms is sent), so that the server's answer at its deadline (an
 * attempt still queued behind the card's attempt in flight is vetoed then, not parked) arrives
 * before this plugin gives up waiting, which parks (trial20b 1b-3: with the deadline equal to
 * timeoutMs the plugin's timer fired first and parked the card the server's row said was not
 * parked). The margin is capped so the default timeoutMs (610000) still leaves a check of the
 * default checkTimeoutMs (600000) room to start.
 */
export function deadlineFor(timeoutMs: number): number {
  const margin = Math.min(1000, Math.max(50, Math.floor(timeoutMs / 10)))
  return Math.max(1, timeoutMs - margin)
}

/**
 * What is wrong with `url` for this plugin, or undefined when it can be used: it must parse, be
 * plain `http:` (the server speaks HTTP/1.1 without TLS; a unix socket goes in `socket`), carry
 * no user or password (the token goes in `tokenFile`), and name no path, query or fragment
 * (the server answers at `/v1/admit`; a prefix such as `http://h/gate/` would be dropped).
 * Checked by apply() when the plugin loads (trial15 R4: such urls loaded, then every attempt
 * threw); an unusable url closes the gate (trial20 3d).
 */
export function urlProblem(url: string): string | undefined {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return `url ${JSON.stringify(url)} is not a URL; write http://HOST:PORT`
  }
  if (u.protocol !== 'http:') {
    return `url ${JSON.stringify(url)} uses ${JSON.stringify(u.protocol)}; devflow-gate serve speaks plain http:// ` +
      '(a unix socket goes in "socket")'
  }
  if (u.username || u.password) {
    return `url ${JSON.stringify(url)} carries a user or password; put the bearer token in "tokenFile"`
  }
  if (u.pathname !== '/' || u.search || u.hash) {
    return `url ${JSON.stringify(url)} has a path, query or fragment; devflow-gate serve answers at /v1/admit ` +
      'of its own root, so write only http://HOST:PORT'
  }
  return undefined
}

// Types only: what the schema refuses, cordis refuses before apply() runs, and the plugin never
// loads, so the waterfall would run without it. Every other check is configProblem()'s, in
// apply(), which closes the gate instead (trial20 3d).
export const Config: Schema<Config> = Schema.object({
  socket: Schema.string().description('unix socket path of devflow-gate serve'),
  url: Schema.string().description('base URL of a devflow-gate serve TCP listener: http://HOST:PORT'),
  tokenFile: Schema.string().description('file holding the bearer token (devflow-gate serve --token-file)'),
  serverUid: Schema.number().description('uid that must own the socket; default the uid of this process'),
  timeoutMs: Schema.number().default(610000)
    .description('admission budget in ms (1 to 2147483647), sent as the deadline less a margin (a tenth, 50 to 1000 ms): keep it 1000 ms above the longest checkTimeoutMs'),
})

/**
 * The bearer token in `text` (a token file's content) read as `devflow-gate serve --token-file`
 * reads it: the whole file without its trailing CR, LF and spaces. Undefined when that token is
 * empty, or not one run of visible ASCII characters (a second line, a leading space, a tab, a
 * non-ASCII byte): the server would keep those and answer 401 to the token the plugin can send
 * (trial20 4d-1, 4d-2).
 */
export function tokenOf(text: string): string | undefined {
  const token = text.replace(/[\r\n ]+$/, '')
  return /^[\x21-\x7e]+$/.test(token) ? token : undefined
}

/**
 * What makes `config` unusable, or its token (when it has a tokenFile). Checked by apply(): an
 * unusable config closes the gate, it does not leave the plugin unloaded.
 */
export function configProblem(config: Config): { problem: string } | { token?: string } {
  const fail = (problem: string) => ({ problem })
  if (!!config.socket === !!config.url) return fail('set exactly one of "socket" or "url"')
  if (config.url) {
    const problem = urlProblem(config.url)
    if (problem) return fail(problem)
  }
  const t = config.timeoutMs
  if (!Number.isInteger(t) || t < 1 || t > MAX_TIMEOUT_MS) {
    return fail(`timeoutMs ${JSON.stringify(t)} is not a whole number of ms from 1 to ${MAX_TIMEOUT_MS} ` +
      '(node cannot wait longer, and the server refuses a longer X-Devflow-Deadline-Ms)')
  }
  if (config.serverUid !== undefined) {
    if (!config.socket) return fail('serverUid applies to a "socket" only: the owner of a TCP port cannot be checked')
    if (!Number.isInteger(config.serverUid) || config.serverUid < 0) {
      return fail(`serverUid ${JSON.stringify(config.serverUid)} is not a uid`)
    }
  }
  if (config.tokenFile === undefined) return {}
  let text: string
  try {
    text = readFileSync(config.tokenFile, 'utf8')
  } catch (error: any) {
    return fail(`cannot read tokenFile ${config.tokenFile}: ${error?.message ?? error}`)
  }
  if (!text.replace(/[\r\n ]+$/, '')) return fail(`tokenFile ${config.tokenFile} is empty`)
  const token = tokenOf(text)
  if (!token) {
    return fail(`tokenFile ${config.tokenFile} does not hold one token alone on its first line (devflow-gate serve ` +
      'takes the whole file but its trailing newline: a second line, a blank first line, a leading space, a tab or a ' +
      'non-ASCII character makes a token it answers 401 to); write the token, visible ASCII only, and one newline')
  }
  return { token }
}

const PARK_ACTOR: DevActor = { kind: 'command', name: 'devflow-gate-cordis' }
/** What a fail-closed veto says of its park (the server's kParkClaim, host/waterfall.h). */
const PARK_CLAIM = '; the card is parked blocked until the deployment recovers'
/**
 * What a veto says of its park when the server could not decide: the park goes through this
 * same gate, which needs the server too, so it is only queued (docs21 F2: PARK_CLAIM said the
 * card was parked while the park was then vetoed; docs/decisions.md "never parks a park").
 */
const PARK_QUEUED = '; a park to blocked is queued, but it needs the admission server too: until the server ' +
  'answers again the card stays where it is and every move of it is vetoed'
/** What a fail-closed veto of a park says instead: no park of the park is queued. */
const NO_PARK = 'this attempt is itself a park, so no further park is queued and the card stays where it is'

/** Why the plugin did not ask, or the server would not decide yet: veto, never park. */
interface Refusal {
  refused: string
}

interface ServerDecision {
  allowed: boolean
  reason?: string
  checks?: GateCheck[]
  approvedBy?: DevActor
  park?: { by: DevActor, reason: string }
  decisionId?: string
}

function isActor(v: unknown): v is DevActor {
  const a = v as DevActor
  return !!a && typeof a === 'object' && ['human', 'agent', 'command'].includes(a.kind)
}

// The server's answer, or a description of what is wrong with it.
function decode(status: number, body: string, retryAfter?: string): ServerDecision | string | Refusal {
  if (status !== 200) {
    let detail = body.slice(0, 200)
    try {
      const parsed = JSON.parse(body)
      if (typeof parsed?.error === 'string') detail = parsed.error
    } catch {}
    // The server's queue is full, or it is draining for a stop: it asks for a retry, and
    // nothing about the card failed (trial20 3a). Closed, not parked.
    if (status === 503) {
      const after = !retryAfter ? '' : /^\d+$/.test(retryAfter) ? `, Retry-After ${retryAfter}s` : `, Retry-After ${retryAfter.slice(0, 40)}`
      return { refused: `the admission server is busy (HTTP 503${after}): ${detail}; nothing is parked: try the move again` }
    }
    return `the admission server answered HTTP ${status}: ${detail}`
  }
  let d: any
  try {
    d = JSON.parse(body)
  } catch {
    return 'the admission server answered something that is not JSON'
  }
  if (!d || typeof d !== 'object' || typeof d.allowed !== 'boolean') {
    return 'the admission server answered without a boolean "allowed"'
  }
  if (d.allowed) {
    if (d.checks !== undefined && (!Array.isArray(d.checks) ||
      !d.checks.every((c: any) => c && isActor(c.by) && c.verdict === 'allowed'))) {
      return 'the admission server answered malformed "checks"'
    }
    if (d.approvedBy !== undefined && !isActor(d.approvedBy)) {
      return 'the admission server answered a malformed "approvedBy"'
    }
  } else {
    if (typeof d.reason !== 'string' || !d.reason) {
      return 'the admission server vetoed without a reason'
    }
    if (d.park !== undefined && (!d.park || !isActor(d.park.by) || typeof d.park.reason !== 'string')) {
      return 'the admission server answered a malformed "park"'
    }
  }
  return d as ServerDecision
}

/**
 * Where the socket at `path` really is, or why it may not be the server's: its directory (after
 * symlinks) must be owned by `uid` or root and writable by no one else, every directory above
 * owned by `uid` or root and writable by no one else unless sticky, and the socket, when there,
 * owned by `uid` or root. A socket that is not there is left to connect(), which says so.
 */
export async function socketPlaceProblem(path: string, uid: number | undefined): Promise<string | { path: string }> {
  if (uid === undefined) return { path }
  const ours = (owner: number) => owner === uid || owner === 0
  // The socket itself after symlinks (connect() would follow them), or, when nothing is there,
  // its real directory and its name.
  // A symlink that leads nowhere is refused: connect() would follow it to wherever its target
  // is created, a place this check never saw (trial20b: a dangling link into /tmp, 37 of 300).
  let real: string
  try {
    real = await realpath(path)
  } catch {
    const link = await lstat(path).then((s) => s.isSymbolicLink(), () => false)
    if (link) {
      return `the unix socket ${path} is a symbolic link to nothing, which connect() would follow to a place ` +
        'not checked here, so it may not be devflow-gate serve'
    }
    try {
      real = join(await realpath(dirname(resolve(path))), basename(path))
    } catch (e: any) {
      return `the directory of the unix socket ${path} cannot be resolved (${e?.code ?? e})`
    }
  }
  const dir = dirname(real)
  for (let d = dir, first = true; ; first = false) {
    const s = await stat(d)
    const othersWrite = (s.mode & 0o022) !== 0
    const sticky = (s.mode & 0o1000) !== 0
    if (!ours(s.uid) || (othersWrite && (first || !sticky))) {
      return `the unix socket ${path} lies in ${d}, which ${ours(s.uid) ? 'group or others may write' : `belongs to uid ${s.uid}`}` +
        `, so another uid could put its own socket there before the connect, not only devflow-gate serve (uid ${uid})`
    }
    const up = dirname(d)
    if (up === d) break
    d = up
  }
  let owner: number | undefined
  try {
    owner = (await lstat(real)).uid
  } catch {
    return { path: real }
  }
  if (!ours(owner)) {
    return `the unix socket ${path} belongs to uid ${owner}, not to uid ${uid}, so it may not be devflow-gate serve`
  }
  return { path: real }
}

/**
 * POST /v1/admit; resolves with the decision or a fault text. An exception on the way (a
 * request node cannot make) rejects; the listener turns that into a fault too.
 */
async function admit(config: Config, token: string | undefined, attempt: TransitionAttempt): Promise<ServerDecision | string | Refusal> {
  const body = JSON.stringify({
    id: attempt.id,
    from: attempt.from,
    to: attempt.to,
    expectedRevision: attempt.expectedRevision,
    by: attempt.by,
    ...(attempt.reason !== undefined ? { reason: attempt.reason } : {}),
    root: attempt.root,
    at: attempt.at,
  })
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    // The server does not start a check that cannot finish within what is left of this, and
    // answers an attempt still queued when it passes; a margin below our own wait (deadlineFor).
    'X-Devflow-Deadline-Ms': deadlineFor(config.timeoutMs),
  }
  if (token) headers.Authorization = `Bearer ${token}`
  const where = config.socket ? `unix:${config.socket}` : config.url!
  let socketPath = config.socket
  if (config.socket) {
    // Whoever binds the path while the server is down would get the token and decide every
    // move (trial20 3c). Checking the socket's owner before connecting is not enough: another
    // uid that may write its directory can rename its own socket in between (trial20: 32 of
    // 300 attempts). So the socket's real directory must be writable only by the server's uid
    // or root, and every directory above it too (or sticky, like /tmp, where no one renames
    // another's entry); then only they can put a socket there, and the owner check holds until
    // the connect, which goes to the real path checked (no symlink is read again).
    const expected = config.serverUid ?? process.getuid?.()
    const problem = await socketPlaceProblem(config.socket, expected)
    if (typeof problem === 'string') {
      return {
        refused: `${problem}: neither the attempt nor the token was sent; nothing is parked: put the socket in a ` +
          'directory only the server\'s uid (or root) can write, e.g. devflow-gate serve --listen unix:/run/devflow-gate/gate.sock ' +
          'with /run/devflow-gate owned by that uid and mode 0755, or set serverUid to the uid devflow-gate serve runs as',
      }
    }
    socketPath = problem.path
  }
  return new Promise((resolve) => {
    let settled = false
    const done = (v: ServerDecision | string | Refusal) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(v)
    }
    const options = config.socket
      ? { socketPath, path: '/v1/admit' }
      : (() => {
        const u = new URL('/v1/admit', config.url)
        return { host: u.hostname, port: u.port, path: u.pathname, protocol: u.protocol }
      })()
    // One connection per attempt (`agent: false`, `Connection: close`): a kept-alive connection
    // the server closes as idle just as an attempt reuses it fails with EPIPE or a reset, which
    // vetoed and parked a card 1 attempt in 60 (trial20 3e). A connect costs little next to a
    // decision, and a request that never reached the server is never ambiguous.
    const req = httpRequest({ ...options, method: 'POST', headers: { ...headers, Connection: 'close' }, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const retryAfter = res.headers['retry-after']
        done(decode(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), retryAfter))
      })
      res.on('error', (e) => done(`the admission server at ${where} broke off its answer: ${e.message}`))
    })
    const timer = setTimeout(() => {
      done(`the admission server at ${where} did not answer within timeoutMs (${config.timeoutMs}ms)`)
      req.destroy()
    }, config.timeoutMs)
    req.on('error', (e) => done(`the admission server at ${where} cannot be reached: ${e.message}`))
    req.end(body)
  })
}

export function apply(ctx: Context, config: Config) {
  const logger = ctx.logger('devflow-gate-cordis')
  const checked = configProblem(config ?? ({} as Config))
  if ('problem' in checked) {
    // Throwing here would leave the plugin unloaded and the waterfall ungated (trial20 3d): the
    // gate loads closed instead. Not parked: the fault is the deployment's config, not the card's.
    const problem = checked.problem
    logger.error(`devflow-gate-cordis: the config is unusable: ${problem}; every devflow transition is vetoed ` +
      'until it is fixed and the plugin reloaded')
    ctx.effect(() => ctx.on('devflow/transition', (attempt: TransitionAttempt) => ({
      allowed: false,
      reason: `devflow-gate admission for ${attempt.from}->${attempt.to} was not run: devflow-gate-cordis's config is ` +
        `unusable: ${problem}; nothing is parked: fix the plugin's config and reload it`,
    })), 'devflow-gate-cordis: devflow/transition (closed: unusable config)')
    return
  }
  const token = checked.token

  // Fire and forget, after the vetoed attempt has returned (deadlock rule).
  const queuePark = (attempt: TransitionAttempt, park: { by: DevActor, reason: string }) => {
    const request: TransitionRequest = {
      id: attempt.id,
      to: 'blocked',
      expectedRevision: attempt.expectedRevision,
      by: park.by,
      reason: park.reason,
      root: attempt.root,
    }
    Promise.resolve()
      .then(() => ctx.devflow.transition(request))
      .then((result) => {
        if (!result?.ok) logger.warn(`devflow-gate-cordis: failed to park card ${attempt.id} blocked: ${result?.message ?? result?.code}`)
      }, (error: any) => {
        logger.warn(`devflow-gate-cordis: failed to park card ${attempt.id} blocked: ${error?.message ?? error}`)
      })
  }

  ctx.effect(() => ctx.on('devflow/transition', async (attempt: TransitionAttempt, next) => {
    const edge = `${attempt.from}->${attempt.to}`
    // A park is an ordinary transition to `blocked` through this same waterfall (reference
    // §1.5, §4.10): parking it again would park the park, without end while the server is
    // down (trial15 W1). It is vetoed when the server cannot decide, and nothing is queued.
    const isPark = attempt.to === 'blocked'
    let answer: ServerDecision | string | Refusal
    try {
      answer = await admit(config, token, attempt)
    } catch (error: any) {
      // admit() resolves every fault it knows; anything else is a fault too, never a rejection
      // out of the waterfall (trial15 R4: the store took it for an infrastructure failure).
      answer = `the admission request failed: ${error?.message ?? String(error)}`
    }
    if (typeof answer === 'object' && 'refused' in answer) {
      return { allowed: false, reason: `devflow-gate admission for ${edge} was not run: ${answer.refused}` }
    }
    if (typeof answer === 'string') {
      if (isPark) {
        return {
          allowed: false,
          reason: `devflow-gate admission for ${edge} could not run: ${answer}; ${NO_PARK}`,
        }
      }
      queuePark(attempt, { by: PARK_ACTOR, reason: `devflow-gate admission for ${edge} failed closed: ${answer}` })
      return {
        allowed: false,
        reason: `devflow-gate admission for ${edge} could not run: ${answer}${PARK_QUEUED}`,
      }
    }
    if (!answer.allowed) {
      if (!answer.park) return { allowed: false, reason: answer.reason! }
      if (!isPark) {
        queuePark(attempt, answer.park)
        return { allowed: false, reason: answer.reason! }
      }
      // The server failed closed on a park (a check configured on an edge into `blocked`):
      // its reason claims a park that is not queued; say what happened instead.
      const reason = answer.reason!
      const at = reason.indexOf(PARK_CLAIM)
      return {
        allowed: false,
        reason: at < 0
          ? `${reason}; ${NO_PARK}`
          : `${reason.slice(0, at)}; ${NO_PARK}${reason.slice(at + PARK_CLAIM.length)}`,
      }
    }
    const downstream = await next()
    if (!downstream.allowed) return downstream // a downstream veto passes back unchanged
    const checks = [...(downstream.checks ?? []), ...(answer.checks ?? [])]
    const approvedBy = downstream.approvedBy ?? answer.approvedBy
    return {
      allowed: true,
      ...(approvedBy ? { approvedBy } : {}),
      ...(checks.length ? { checks } : {}),
    }
  }), 'devflow-gate-cordis: devflow/transition')
}
