// devflow-gate-cordis inside a real @deepseek-ai/cordis Context, against a real
// `devflow-gate serve` started here, with a fake devflow store that records transition calls.
// Responses of the real server are validated against docs/openapi.yaml (ajv, JSON Schema
// 2020-12).
import { Context } from '@deepseek-ai/cordis'
import { Ajv2020 } from 'ajv/dist/2020.js'
import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { request } from 'node:http'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'

import * as gate from '../src/index.js'
import type { TransitionAttempt, TransitionDecision, TransitionRequest } from '../src/index.js'

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, '../../../..')
const binary = process.env.DEVFLOW_GATE_BINARY ?? join(repo, 'build/devflow-gate')
const fixture = (rel: string) => join(repo, 'tests/fixtures', rel)

// ---- the OpenAPI file ----------------------------------------------------------------------

const openapi = parseYaml(readFileSync(join(repo, 'docs/openapi.yaml'), 'utf8'))
const ajv = new Ajv2020({ strict: false })
ajv.addSchema({ $id: 'openapi', components: openapi.components })
function conforms(schemaName: string, value: unknown) {
  const validate = ajv.getSchema(`openapi#/components/schemas/${schemaName}`)!
  assert.ok(validate(value), `${schemaName}: ${JSON.stringify(validate.errors)} for ${JSON.stringify(value)}`)
}

// ---- a workspace and a real server ---------------------------------------------------------

function run(cwd: string, ...args: string[]) {
  const r = spawnSync(binary, args, { cwd, encoding: 'utf8' })
  assert.equal(r.status, 0, `devflow-gate ${args.join(' ')}: ${r.stdout}${r.stderr}`)
  return r.stdout.trim()
}

// Four cards in designing with a design artifact; the edge designing->ready is gated by a
// provider per card kind, chosen by the card's title through DEVFLOW_GATE_CARD.
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'devflow-gate-cordis-'))
  const router = join(dir, 'router.sh')
  writeFileSync(router, `#!/bin/sh
case "$DEVFLOW_GATE_CARD" in
  *hold*) echo started > ${join(dir, 'started.fifo')}; cat ${join(dir, 'release.fifo')} > /dev/null; exec ${fixture('checkers/allow.sh')} ;;
  *allow*) exec ${fixture('checkers/allow.sh')} ;;
  *veto*) exec ${fixture('e2e/veto.sh')} ;;
  *) exec ${fixture('checkers/fail.sh')} ;;
esac
`, { mode: 0o755 })
  writeFileSync(join(dir, 'devflow-gate.yaml'), `providers:
  checker:
    command: ['${router}']
    sandbox: off
plugins:
  - id: devflow-agent-gate
    config:
      edges:
        'designing->ready':
          provider: checker
          inputs: [design]
          prompt: Check the design.
        'designing->blocked':
          provider: checker
          inputs: [design]
          prompt: Check the park.
      checkTimeoutMs: 10000
`)
  writeFileSync(join(dir, 'design.md'), '# Design\n\nFine.\n')
  const cards: Record<string, string> = {}
  for (const kind of ['allow', 'veto', 'fault', 'allow-then-veto', 'hold']) {
    const id = run(dir, 'card', 'create', '--title', `card ${kind}`)
    run(dir, 'move', id, 'designing')
    run(dir, 'artifact', 'add', id, 'design', 'design.md')
    cards[kind] = id
  }
  return { dir, root: join(dir, '.devflow'), cards }
}

function startServer(cwd: string, root: string, socket: string, ...args: string[]): Promise<ChildProcess> {
  const child = spawn(binary, ['--root', root, 'serve', '--listen', `unix:${socket}`, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  return new Promise((resolveReady, reject) => {
    let log = ''
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes('"msg":"ready"')) resolveReady(child)
    })
    child.on('exit', (code) => reject(new Error(`devflow-gate serve exited ${code}: ${log}`)))
  })
}

// A TCP listener on a free loopback port with --token-file; resolves with its base url.
function startTcpServer(cwd: string, root: string, tokenFile: string): Promise<{ child: ChildProcess, url: string }> {
  const child = spawn(binary, ['--root', root, 'serve', '--listen', '127.0.0.1:0', '--token-file', tokenFile], { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  return new Promise((resolveReady, reject) => {
    let log = ''
    let port = ''
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString()
      port ||= /"msg":"listening".*"port":(\d+)/.exec(log)?.[1] ?? ''
      if (port && log.includes('"msg":"ready"')) resolveReady({ child, url: `http://127.0.0.1:${port}` })
    })
    child.on('exit', (code) => reject(new Error(`devflow-gate serve exited ${code}: ${log}`)))
  })
}

function rawRequest(socket: string, method: string, path: string, body?: string): Promise<{ status: number, body: any }> {
  return new Promise((res, rej) => {
    const req = request({ socketPath: socket, method, path, headers: body ? { 'Content-Type': 'application/json' } : {} }, (r) => {
      let text = ''
      r.on('data', (c) => { text += c })
      r.on('end', () => res({ status: r.statusCode!, body: r.headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text }))
    })
    req.on('error', rej)
    req.end(body)
  })
}

// ---- a cordis deployment with a fake devflow store -----------------------------------------

interface Deployment {
  root: Context
  /** Ends the card's serial turn: queued parks may commit from now on. */
  release(): void
  calls: TransitionRequest[]
  events: string[]
  transition(attempt: TransitionAttempt, downstream?: () => TransitionDecision): Promise<TransitionDecision>
}

async function deploy(config: Partial<gate.Config>): Promise<Deployment> {
  const root = new Context()
  const calls: TransitionRequest[] = []
  const events: string[] = []
  // The store's per-card chain: a park queued during the waterfall commits only after the
  // turn ends; a plugin that awaited it would never return (upstream's deadlock).
  let release!: () => void
  const turn = new Promise<void>((r) => { release = r })
  const store = {
    async transition(req: TransitionRequest) {
      events.push('park')
      calls.push(req)
      await turn
      events.push('parked')
      return { ok: true }
    },
  }
  await root.plugin({ name: 'fake-devflow', apply(ctx: Context) { ctx.provide('devflow', store) } })
  await root.plugin(gate, { timeoutMs: 20000, ...config })
  return {
    root,
    release,
    calls,
    events,
    async transition(attempt, downstream = () => ({ allowed: true })) {
      const decision = await (root as any).waterfall('devflow/transition', attempt, () => {
        events.push('downstream')
        return downstream()
      })
      events.push('returned')
      return decision
    },
  }
}

// A deployment whose fake store RUNS the devflow/transition waterfall for every transition it
// is asked for, as the real store does (a park is an ordinary transition, reference §1.5), and
// commits when it allows. `settled()` waits for every transition asked for so far, and for the
// turn of the event loop after it, in which a listener would have queued the next one. It
// refuses to run more than `cap` transitions, so a looping plugin fails the test, not the run.
async function deployRunning(config: Partial<gate.Config>, cap = 20) {
  const root = new Context()
  const calls: TransitionRequest[] = []
  const results: { ok: boolean, code?: string, message?: string }[] = []
  const pending: Promise<unknown>[] = []
  const store = {
    transition(req: TransitionRequest) {
      calls.push(req)
      if (calls.length > cap) return Promise.resolve({ ok: false, code: 'test-cap', message: 'too many transitions' })
      const attempt: TransitionAttempt = {
        id: req.id, from: 'designing', to: req.to, expectedRevision: req.expectedRevision, by: req.by,
        ...(req.reason !== undefined ? { reason: req.reason } : {}), root: req.root!, at: '2026-12-04T00:00:00.000Z',
      }
      const done = Promise.resolve((root as any).waterfall('devflow/transition', attempt, () => ({ allowed: true })))
        .then((d: TransitionDecision) => {
          const result = d.allowed ? { ok: true } : { ok: false, code: 'vetoed', message: d.reason }
          results.push(result)
          return result
        })
      pending.push(done)
      return done
    },
  }
  await root.plugin({ name: 'fake-devflow', apply(ctx: Context) { ctx.provide('devflow', store) } })
  await root.plugin(gate, { timeoutMs: 20000, ...config })
  const settled = async () => {
    for (let seen = -1; seen !== pending.length;) {
      seen = pending.length
      await Promise.all(pending)
      await new Promise((r) => setImmediate(r)) // a park queued on the way back is asked for now
    }
  }
  return { root, calls, results, settled }
}

// A unix socket server that answers every request with `status` and counts them.
async function answering(path: string, status: number) {
  let requests = 0
  const server: Server = createServer((c) => {
    c.once('data', () => {
      requests++
      const body = '{"error":"the queue is full"}'
      c.end(`HTTP/1.1 ${status} Whatever\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)
    })
  })
  await new Promise<void>((r) => server.listen(path, r))
  return { server, requests: () => requests }
}

function attemptOf(id: string, root: string): TransitionAttempt {
  return { id, from: 'designing', to: 'ready', expectedRevision: 3, by: { kind: 'human' }, root, at: '2026-09-16T08:00:00.000Z' }
}

// Lets queued (not awaited) work run: the park is queued as a promise chain (microtasks, no
// I/O with the fake store), and every microtask runs before the next turn of the event loop.
// An event, not a sleep.
const settle = () => new Promise((r) => setImmediate(r))

describe('devflow-gate-cordis against a real devflow-gate serve', () => {
  let ws: ReturnType<typeof workspace>
  let server: ChildProcess
  let socket: string

  before(async () => {
    ws = workspace()
    socket = join(ws.dir, 'gate.sock')
    server = await startServer(ws.dir, ws.root, socket)
  })
  after(() => {
    server?.kill('SIGTERM')
    if (ws) rmSync(ws.dir, { recursive: true, force: true })
  })

  test('an allow delegates, and the server check is appended after the downstream ones', async () => {
    const d = await deploy({ socket })
    const human = { by: { kind: 'human' as const, name: 'reviewer' }, verdict: 'allowed' as const, summary: 'lgtm' }
    const decision = await d.transition(attemptOf(ws.cards.allow, ws.root), () => ({ allowed: true, checks: [human] }))
    assert.deepEqual(decision, { allowed: true, checks: [human, { by: { kind: 'agent' }, verdict: 'allowed', summary: 'ok' }] })
    assert.deepEqual(d.events, ['downstream', 'returned'])
    assert.equal(d.calls.length, 0)
  })

  test('a downstream veto passes back unchanged', async () => {
    const d = await deploy({ socket })
    const veto = { allowed: false as const, reason: 'a later gate says no' }
    assert.deepEqual(await d.transition(attemptOf(ws.cards['allow-then-veto'], ws.root), () => veto), veto)
  })

  test('a veto is returned unchanged without delegating and parks nothing', async () => {
    const d = await deploy({ socket })
    const decision = await d.transition(attemptOf(ws.cards.veto, ws.root))
    assert.equal(decision.allowed, false)
    assert.match((decision as any).reason, /^agent check vetoed designing->ready: design cites REQ-9; full report: \//)
    await settle()
    assert.deepEqual(d.events, ['returned'])
    assert.equal(d.calls.length, 0)
  })

  test('a fail-closed veto queues the park after the attempt returned, without awaiting it', async () => {
    const d = await deploy({ socket })
    const decision = await d.transition(attemptOf(ws.cards.fault, ws.root))
    assert.equal(decision.allowed, false)
    assert.match((decision as any).reason, /could not run: the checker ended with exit code 7: boom/)
    assert.ok(d.events.includes('returned') && !d.events.includes('parked'), 'returned before the park committed')
    d.release()
    await settle()
    assert.deepEqual(d.events.filter((e) => e !== 'returned'), ['park', 'parked'])
    assert.deepEqual(d.calls, [{
      id: ws.cards.fault,
      to: 'blocked',
      expectedRevision: 3,
      by: { kind: 'command', name: 'devflow-agent-gate' },
      reason: 'agent check for designing->ready failed closed: the checker ended with exit code 7: boom',
      root: ws.root,
    }])
  })

  test('an unreachable server vetoes naming the fault and parks', async () => {
    const d = await deploy({ socket: join(ws.dir, 'no-such.sock') })
    const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
    assert.equal(decision.allowed, false)
    assert.match((decision as any).reason, /^devflow-gate admission for designing->ready could not run: the admission server at unix:.*no-such\.sock cannot be reached: /)
    await settle()
    assert.equal(d.calls.length, 1)
    assert.deepEqual(d.calls[0].by, { kind: 'command', name: 'devflow-gate-cordis' })
    assert.equal(d.calls[0].to, 'blocked')
  })

  // trial20 3e: a kept-alive connection that the server closed as idle just as the next
  // attempt reused it failed with EPIPE, and the plugin vetoed and parked the card.
  test('each attempt opens its own connection and asks the server to close it', async () => {
    const path = join(ws.dir, 'keepalive.sock')
    const requests: string[] = []
    let connections = 0
    const body = '{"allowed":true,"checks":[]}'
    const server: Server = createServer((c) => {
      connections++
      c.on('data', (chunk) => {
        requests.push(chunk.toString('utf8'))
        // Offers to keep the connection: the plugin must not take it up.
        c.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`)
      })
    })
    await new Promise<void>((r) => server.listen(path, r))
    try {
      const d = await deploy({ socket: path })
      for (let i = 0; i < 3; i++) {
        const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
        assert.equal(decision.allowed, true)
      }
      assert.equal(connections, 3)
      for (const r of requests) assert.match(r, /\r\nconnection: close\r\n/i)
    } finally {
      server.close()
    }
  })

  test('a server slower than timeoutMs, or answering nonsense, vetoes and parks', async () => {
    const silent: Server = createServer(() => {}) // accepts, never answers
    const nonsense: Server = createServer((c) => c.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello'))
    const slowSock = join(ws.dir, 'slow.sock')
    const junkSock = join(ws.dir, 'junk.sock')
    await new Promise<void>((r) => silent.listen(slowSock, r))
    await new Promise<void>((r) => nonsense.listen(junkSock, r))
    try {
      const slow = await deploy({ socket: slowSock, timeoutMs: 200 })
      const d1 = await slow.transition(attemptOf(ws.cards.allow, ws.root))
      assert.match((d1 as any).reason, /did not answer within timeoutMs \(200ms\)/)
      const junk = await deploy({ socket: junkSock })
      const d2 = await junk.transition(attemptOf(ws.cards.allow, ws.root))
      assert.match((d2 as any).reason, /answered something that is not JSON/)
      await settle()
      assert.equal(slow.calls.length, 1)
      assert.equal(junk.calls.length, 1)
    } finally {
      silent.close()
      nonsense.close()
    }
  })

  // The server's deadline rule (docs/server.md "Limits and deadlines"): the plugin sends its
  // timeoutMs as X-Devflow-Deadline-Ms, and a check whose checkTimeoutMs (10000 here) does not
  // fit is not started. The caller's short budget is not a fault: vetoed, nothing parked.
  test('a timeoutMs below checkTimeoutMs: the real server vetoes unchecked and nothing is parked', async () => {
    const d = await deploy({ socket, timeoutMs: 5000 })
    const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
    assert.equal(decision.allowed, false)
    assert.match((decision as any).reason, /^agent check for designing->ready was not started: the caller's deadline leaves \d+ms, less than checkTimeoutMs \(10000ms\); .*devflow-gate-cordis's timeoutMs/)
    d.release()
    await settle()
    assert.deepEqual(d.events, ['returned'])
    assert.equal(d.calls.length, 0)
  })

  test('a real server that was stopped: the attempt is vetoed naming the fault, and parked', async () => {
    const stoppedSock = join(ws.dir, 'stopped.sock')
    const other = await startServer(ws.dir, ws.root, stoppedSock)
    const exited = new Promise((r) => other.once('exit', r))
    other.kill('SIGTERM')
    assert.equal(await exited, 0)
    const d = await deploy({ socket: stoppedSock })
    const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
    assert.equal(decision.allowed, false)
    assert.match((decision as any).reason, /^devflow-gate admission for designing->ready could not run: the admission server at unix:.*stopped\.sock cannot be reached: .*; a park to blocked is queued, but it needs the admission server too: until the server answers again the card stays where it is and every move of it is vetoed$/)
    assert.ok(!d.events.includes('parked'), 'returned before the park committed')
    d.release()
    await settle()
    assert.deepEqual(d.events.filter((e) => e !== 'returned'), ['park', 'parked'])
    assert.equal(d.calls.length, 1)
    assert.deepEqual(d.calls[0].by, { kind: 'command', name: 'devflow-gate-cordis' })
    assert.equal(d.calls[0].to, 'blocked')
  })

  // trial20 3d: a config refused at load left the plugin unloaded and the waterfall ungated
  // (the next move was allowed). Now the plugin loads closed: every attempt is vetoed naming the
  // problem, downstream is not asked, nothing is parked, and an error is logged.
  test('an unusable config loads a closed gate: every attempt vetoed naming the problem, nothing parked', async () => {
    const empty = join(ws.dir, 'empty.token')
    writeFileSync(empty, ' \r\n')
    const unusable: [Partial<gate.Config>, RegExp][] = [
      [{}, /set exactly one of "socket" or "url"/],
      [{ socket, url: 'http://127.0.0.1:1' }, /set exactly one of "socket" or "url"/],
      [{ url: 'https://127.0.0.1:1' }, /uses "https:"/],
      [{ socket, tokenFile: join(ws.dir, 'no-such.token') }, /cannot read tokenFile .*no-such\.token: ENOENT/],
      [{ socket, tokenFile: empty }, /tokenFile .*empty\.token is empty/],
      [{ socket, timeoutMs: 0 }, /timeoutMs 0 is not a whole number of ms from 1 to 2147483647/],
      [{ socket, timeoutMs: -1 }, /timeoutMs -1 is not/],
      [{ socket, timeoutMs: 1.5 }, /timeoutMs 1\.5 is not/],
      // trial20 3b: node fired such a timer at once, and every attempt was vetoed and parked.
      [{ socket, timeoutMs: 3000000000 }, /timeoutMs 3000000000 is not a whole number of ms from 1 to 2147483647/],
      [{ url: 'http://127.0.0.1:1', serverUid: 0 }, /serverUid applies to a "socket" only/],
      [{ socket, serverUid: -1 }, /serverUid -1 is not a uid/],
    ]
    for (const [config, why] of unusable) {
      const d = await deploy(config) // loads: no rejection
      const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
      assert.equal(decision.allowed, false, JSON.stringify(config))
      assert.match((decision as any).reason, /^devflow-gate admission for designing->ready was not run: devflow-gate-cordis's config is unusable: /)
      assert.match((decision as any).reason, why)
      assert.match((decision as any).reason, /; nothing is parked: fix the plugin's config and reload it$/)
      await settle()
      assert.deepEqual(d.events, ['returned'], 'downstream not asked')
      assert.equal(d.calls.length, 0, 'nothing parked')
      const logged = d.root.logger.buffer.filter((m: any) => m.type === 'error').map((m: any) => String(m.args[0]))
      assert.ok(logged.some((m: string) => why.test(m) && m.includes('every devflow transition is vetoed')), logged.join('\n'))
    }
    // The largest timeoutMs is still a usable one.
    const d = await deploy({ socket, timeoutMs: 2147483647 })
    assert.equal((await d.transition(attemptOf(ws.cards.allow, ws.root))).allowed, true)
  })

  // What cordis refuses before apply() runs cannot be closed by the plugin: only wrong TYPES
  // reach that far (the schema checks nothing else), and ctx.plugin() rejects (README).
  test('a config of the wrong types is still refused by cordis before the plugin runs', async () => {
    const root = new Context()
    await root.plugin({ name: 'fake-devflow', apply(ctx: Context) { ctx.provide('devflow', { transition: async () => ({ ok: true }) }) } })
    await assert.rejects(async () => { await root.plugin(gate, { socket: 'a', timeoutMs: '10' } as any) })
    await assert.rejects(async () => { await root.plugin(gate, { socket: 7 } as any) })
    // Everything else passes the schema, and apply() closes the gate on it.
    assert.deepEqual(gate.Config({ socket: 'a', url: 'https://x/y', timeoutMs: 0 }), { socket: 'a', url: 'https://x/y', timeoutMs: 0 })
  })

  // trial15 W1: the park is itself a transition through this waterfall; with the server down
  // the plugin vetoed the park and parked again, ~700 parks a second from one attempt.
  test('with the server down, one attempt makes exactly one park, and the park parks nothing', async () => {
    const d = await deployRunning({ socket: join(ws.dir, 'no-such.sock') })
    const decision = await d.root.waterfall('devflow/transition', attemptOf(ws.cards.allow, ws.root), () => ({ allowed: true }))
    assert.equal(decision.allowed, false)
    assert.match((decision as any).reason, /^devflow-gate admission for designing->ready could not run: the admission server at unix:.*no-such\.sock cannot be reached: .*; a park to blocked is queued, but it needs the admission server too: until the server answers again the card stays where it is and every move of it is vetoed$/)
    await d.settled()
    assert.equal(d.calls.length, 1, `park transitions asked for: ${d.calls.length}`)
    assert.deepEqual({ ...d.calls[0], reason: undefined }, {
      id: ws.cards.allow, to: 'blocked', expectedRevision: 3, by: { kind: 'command', name: 'devflow-gate-cordis' }, reason: undefined, root: ws.root,
    })
    // The park itself is vetoed (closed: no gate, no move), naming the fault, and queues nothing.
    assert.equal(d.results.length, 1)
    assert.equal(d.results[0].ok, false)
    assert.match(d.results[0].message!, /^devflow-gate admission for designing->blocked could not run: .*cannot be reached: .*; this attempt is itself a park, so no further park is queued and the card stays where it is$/)
  })

  // trial20 3a: the server answers 503 with Retry-After when its queue is full or it drains
  // for a stop; the plugin vetoed AND parked, so a burst or a restart sent cards to blocked.
  // Busy is not a fault of the card: vetoed (closed), nothing parked, the server asked once.
  // (Before, this test expected the park and its second request: docs/decisions.md.)
  test('with the server answering 503, the attempt is vetoed naming it, and nothing is parked', async () => {
    const busy = await answering(join(ws.dir, 'busy.sock'), 503)
    try {
      const d = await deployRunning({ socket: join(ws.dir, 'busy.sock') })
      const decision = await d.root.waterfall('devflow/transition', attemptOf(ws.cards.allow, ws.root), () => ({ allowed: true }))
      assert.equal(decision.allowed, false)
      assert.equal((decision as any).reason, 'devflow-gate admission for designing->ready was not run: the admission server is busy ' +
        '(HTTP 503, Retry-After 1s): the queue is full; nothing is parked: try the move again')
      await d.settled()
      assert.equal(busy.requests(), 1)
      assert.equal(d.calls.length, 0)
    } finally {
      busy.server.close()
    }
  })

  test('a real server at --max-checks 1 with --max-queue 0 answers 503: vetoed, nothing parked', async () => {
    // The hold card's checker says when it started (started.fifo) and runs until released.
    spawnSync('mkfifo', [join(ws.dir, 'started.fifo'), join(ws.dir, 'release.fifo')])
    const busySock = join(ws.dir, 'full.sock')
    const full = await startServer(ws.dir, ws.root, busySock, '--max-checks', '1', '--max-queue', '0')
    let released = false
    const release = () => {
      if (released) return
      released = true
      const fd = openSync(join(ws.dir, 'release.fifo'), constants.O_RDWR | constants.O_NONBLOCK)
      writeSync(fd, 'go\n')
      closeSync(fd)
    }
    try {
      const held = rawRequest(busySock, 'POST', '/v1/admit', JSON.stringify({ ...attemptOf(ws.cards.hold, ws.root), dryRun: true }))
      await readFile(join(ws.dir, 'started.fifo')) // resolves once the checker has started and written
      const d = await deploy({ socket: busySock })
      const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
      assert.equal(decision.allowed, false)
      assert.match((decision as any).reason, /^devflow-gate admission for designing->ready was not run: the admission server is busy \(HTTP 503, Retry-After 1s\): the server is at --max-checks 1 with --max-queue 0 attempts waiting; .*; nothing is parked: try the move again$/)
      d.release()
      await settle()
      assert.deepEqual(d.events, ['returned'])
      assert.equal(d.calls.length, 0)
      release()
      assert.equal((await held).status, 200)
    } finally {
      release() // whether or not the checker reads yet: O_RDWR opens a FIFO without waiting
      const exited = new Promise((r) => full.once('exit', r))
      full.kill('SIGTERM')
      await exited
    }
  })

  // trial20b 1b-3: an attempt queued behind the card's attempt in flight was answered only when
  // it left the queue, and the plugin sent its own timeoutMs as the deadline, so its timer fired
  // first: vetoed AND parked, while the server's row said "not parked". Now the server answers
  // at the deadline, which the plugin sends a margin below its own wait.
  test('an attempt queued behind a busy card is vetoed at the server\'s deadline: nothing parked', async () => {
    spawnSync('mkfifo', [join(ws.dir, 'started.fifo'), join(ws.dir, 'release.fifo')])
    let released = false
    const release = () => {
      if (released) return
      released = true
      const fd = openSync(join(ws.dir, 'release.fifo'), constants.O_RDWR | constants.O_NONBLOCK)
      writeSync(fd, 'go\n')
      closeSync(fd)
    }
    try {
      const held = rawRequest(socket, 'POST', '/v1/admit', JSON.stringify({ ...attemptOf(ws.cards.hold, ws.root), dryRun: true }))
      await readFile(join(ws.dir, 'started.fifo')) // the card's check runs, and is held
      const d = await deploy({ socket, timeoutMs: 1000 })
      const decision = await d.transition(attemptOf(ws.cards.hold, ws.root))
      assert.equal(decision.allowed, false)
      assert.match((decision as any).reason, /^the caller's deadline passed while the attempt waited in the server's queue \(\d+ms since it arrived\); nothing was checked or committed and the card is not parked/)
      d.release()
      await settle()
      assert.deepEqual(d.events, ['returned'])
      assert.equal(d.calls.length, 0)
      release()
      assert.equal((await held).status, 200)
    } finally {
      release()
    }
  })

  test('the deadline sent is a margin below timeoutMs', () => {
    assert.equal(gate.deadlineFor(610000), 609000)
    assert.equal(gate.deadlineFor(5000), 4500)
    assert.equal(gate.deadlineFor(200), 150)
    assert.equal(gate.deadlineFor(30), 1)
    assert.equal(gate.deadlineFor(1), 1)
    assert.equal(gate.deadlineFor(gate.MAX_TIMEOUT_MS), gate.MAX_TIMEOUT_MS - 1000)
  })

  test('another status than 503 is still a fault: vetoed and parked', async () => {
    const broken = await answering(join(ws.dir, 'broken.sock'), 500)
    try {
      const d = await deployRunning({ socket: join(ws.dir, 'broken.sock') })
      const decision = await d.root.waterfall('devflow/transition', attemptOf(ws.cards.allow, ws.root), () => ({ allowed: true }))
      assert.match((decision as any).reason, /could not run: the admission server answered HTTP 500: the queue is full; a park to blocked is queued/)
      await d.settled()
      assert.equal(broken.requests(), 2)
      assert.equal(d.calls.length, 1)
    } finally {
      broken.server.close()
    }
  })

  test('a park the real server fails closed on is vetoed without queuing another park', async () => {
    // The workspace gates designing->blocked too (reference §4.12: a check on an edge into
    // blocked also runs on the gate's own park); the fault card's checker fails there.
    const d = await deployRunning({ socket })
    const attempt = { ...attemptOf(ws.cards.fault, ws.root), to: 'blocked', by: { kind: 'command' as const, name: 'devflow-gate-cordis' } }
    const decision = await d.root.waterfall('devflow/transition', attempt, () => ({ allowed: true }))
    assert.equal(decision.allowed, false)
    const reason = (decision as any).reason as string
    assert.match(reason, /^agent check for designing->blocked could not run: the checker ended with exit code 7: boom; this attempt is itself a park, so no further park is queued and the card stays where it is/)
    assert.ok(!reason.includes('the card is parked'), reason)
    await d.settled()
    assert.equal(d.calls.length, 0)
  })

  test('an exception on the way to the server is a veto naming it, with its park, never a rejection', async () => {
    const d = await deploy({ socket })
    // JSON.stringify throws on a BigInt: the request cannot even be written.
    const attempt = { ...attemptOf(ws.cards.allow, ws.root), expectedRevision: 3n as unknown as number }
    const decision = await d.transition(attempt)
    assert.equal(decision.allowed, false)
    assert.match((decision as any).reason, /^devflow-gate admission for designing->ready could not run: the admission request failed: .*BigInt.*; a park to blocked is queued/)
    d.release()
    await settle()
    assert.equal(d.calls.length, 1)
    assert.equal(d.calls[0].to, 'blocked')
  })

  test('a url the plugin cannot use closes the gate when the config is loaded, naming the problem', async () => {
    const refused: [string, RegExp][] = [
      ['https://127.0.0.1:1', /uses "https:"; devflow-gate serve speaks plain http:\/\//],
      ['unix:/tmp/x.sock', /uses "unix:".*"socket"/],
      ['http://[::1', /is not a URL/],
      ['http://127.0.0.1:8417/gate/', /has a path, query or fragment/],
      ['http://127.0.0.1:8417/?a=1', /has a path, query or fragment/],
      ['http://me:pw@127.0.0.1:8417', /user or password.*tokenFile/],
    ]
    for (const [url, why] of refused) {
      const d = await deploy({ url, timeoutMs: 10 })
      const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
      assert.equal(decision.allowed, false, url)
      assert.match((decision as any).reason, why, url)
      assert.match((decision as any).reason, /config is unusable: .*nothing is parked/, url)
      assert.equal(d.calls.length, 0, url)
      assert.match((gate.configProblem({ url, timeoutMs: 10 }) as any).problem, why, `${url} (configProblem)`)
    }
    for (const url of ['http://127.0.0.1:8417', 'http://127.0.0.1:8417/', 'http://localhost:1']) {
      assert.equal(gate.urlProblem(url), undefined, url)
    }
  })

  // trial20 3c: whoever holds the socket's path gets the token and decides every move. The
  // socket must belong to serverUid (default: the plugin's own uid, as the server's default
  // --allow-uid is its own); otherwise nothing is sent, the attempt is vetoed, nothing parked.
  test('a socket not owned by serverUid is not asked: vetoed naming the owner, nothing sent or parked', async () => {
    const squatPath = join(ws.dir, 'squat.sock')
    const squat = await answering(squatPath, 200)
    try {
      const uid = process.getuid!()
      // Run as root, the squatter is another uid (a root-owned socket is always accepted).
      const owner = uid === 0 ? 65534 : uid
      if (uid === 0) chownSync(squatPath, owner, owner)
      const d = await deploy({ socket: squatPath, serverUid: owner + 1 })
      const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
      assert.equal(decision.allowed, false)
      assert.match((decision as any).reason, new RegExp(`^devflow-gate admission for designing->ready was not run: the unix socket .*squat\\.sock (belongs to uid ${owner}, not to uid ${owner + 1}, so it may not be devflow-gate serve|lies in .*, which belongs to uid ${owner}, so another uid could put its own socket there before the connect, not only devflow-gate serve \\(uid ${owner + 1}\\)): neither the attempt nor the token was sent; nothing is parked`))
      await settle()
      assert.equal(squat.requests(), 0)
      assert.equal(d.calls.length, 0)
      assert.deepEqual(d.events, ['returned'])
      // The real server's socket is owned by this process's uid: the default admits.
      const ok = await deploy({ socket })
      assert.equal((await ok.transition(attemptOf(ws.cards.allow, ws.root))).allowed, true)
      if (uid === 0) {
        // Another uid's socket, reached through a symlink (connect() follows it, so does the check).
        symlinkSync(squatPath, join(ws.dir, 'link.sock'))
        const other = await deploy({ socket: join(ws.dir, 'link.sock') })
        const refused = await other.transition(attemptOf(ws.cards.allow, ws.root))
        assert.match((refused as any).reason, /link\.sock belongs to uid 65534, not to uid 0, so it may not be devflow-gate serve/)
        assert.equal(squat.requests(), 0)
      }
    } finally {
      squat.server.close()
    }
  })

  // trial20 3c residual: the owner was checked before the connect, and a uid that could write
  // the socket's directory renamed its own socket over the path in between (32 of 300). A
  // socket in a directory others may write is refused before anything is sent.
  test('a socket in a directory others may write is not asked: vetoed, nothing sent or parked', async () => {
    const open = join(ws.dir, 'open')
    mkdirSync(open)
    chmodSync(open, 0o777)
    const server = await answering(join(open, 'gate.sock'), 200)
    try {
      const d = await deploy({ socket: join(open, 'gate.sock') })
      const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
      assert.equal(decision.allowed, false)
      assert.match((decision as any).reason, /was not run: the unix socket .*open\/gate\.sock lies in .*open, which group or others may write, so another uid could put its own socket there before the connect.*neither the attempt nor the token was sent; nothing is parked/)
      await settle()
      assert.equal(server.requests(), 0)
      assert.equal(d.calls.length, 0)
      // Writable by its owner alone (and sticky above, as /tmp): the same socket is asked.
      chmodSync(open, 0o755)
      await d.transition(attemptOf(ws.cards.allow, ws.root))
      assert.equal(server.requests(), 1)
      // trial20b: a link that leads nowhere is refused, whoever may create its target later.
      symlinkSync(join(ws.dir, 'not-yet.sock'), join(open, 'dangling.sock'))
      const dangling = await deploy({ socket: join(open, 'dangling.sock') })
      const refused = await dangling.transition(attemptOf(ws.cards.allow, ws.root))
      assert.match((refused as any).reason, /was not run: the unix socket .*dangling\.sock is a symbolic link to nothing, which connect\(\) would follow to a place not checked here.*nothing is parked/)
      await settle()
      assert.equal(dangling.calls.length, 0)
    } finally {
      server.server.close()
    }
  })

  // trial20 4d: the server takes the whole token file but its trailing CR, LF and spaces; the
  // plugin took the whole file .trim()-ed, so a leading space, a blank first line or a trailing
  // tab made a token the server answered 401 to, and every attempt was vetoed AND parked. Now,
  // for each file, the plugin either sends the token the real server accepts, or closes.
  test('a token file: the plugin sends what the real server accepts, or both refuse it naming the file', async () => {
    const files: [string, boolean][] = [
      ['secret123\n', true], ['secret123', true], ['secret123\r\n', true], ['secret123  \n', true],
      [' secret123\n', false], ['\nsecret123\n', false], ['secret123\nsecond\n', false], ['secret123\t\n', false],
      ['s\u00e9cret\n', false],
    ]
    for (const [text, usable] of files) {
      const tokenFile = join(ws.dir, 'tcp.token')
      writeFileSync(tokenFile, text)
      if (!usable) {
        // Both read the file by one rule: the server refuses to start on it, and the plugin
        // closes the gate naming it (neither answers 401 to everything).
        await assert.rejects(startTcpServer(ws.dir, ws.root, tokenFile), /does not hold one token alone on its first line/, JSON.stringify(text))
        const d = await deploy({ url: 'http://127.0.0.1:1', tokenFile })
        const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
        assert.equal(decision.allowed, false, JSON.stringify(text))
        assert.match((decision as any).reason, /config is unusable: tokenFile .*tcp\.token does not hold one token alone on its first line/, JSON.stringify(text))
        await settle()
        assert.equal(d.calls.length, 0, JSON.stringify(text))
        continue
      }
      const tcp = await startTcpServer(ws.dir, ws.root, tokenFile)
      try {
        const d = await deploy({ url: tcp.url, tokenFile })
        const decision = await d.transition(attemptOf(ws.cards.allow, ws.root))
        assert.equal(decision.allowed, true, `${JSON.stringify(text)}: ${JSON.stringify(decision)}`)
      } finally {
        const exited = new Promise((r) => tcp.child.once('exit', r))
        tcp.child.kill('SIGTERM')
        await exited
      }
    }
  })

  test('disposing the plugin removes its listener', async () => {
    const d = await deploy({ socket: join(ws.dir, 'no-such.sock') })
    await d.root.fiber.dispose()
    const root = new Context()
    const decision = await (root as any).waterfall('devflow/transition', attemptOf(ws.cards.allow, ws.root), () => ({ allowed: true }))
    assert.deepEqual(decision, { allowed: true })
  })

  test('the real server answers as docs/openapi.yaml says', async () => {
    conforms('Ready', (await rawRequest(socket, 'GET', '/readyz')).body)
    const attempt = { ...attemptOf(ws.cards.allow, ws.root), dryRun: true }
    conforms('AdmitRequest', attempt)
    const allowed = await rawRequest(socket, 'POST', '/v1/admit', JSON.stringify(attempt))
    assert.equal(allowed.status, 200)
    conforms('AdmitDecision', allowed.body)
    const parked = await rawRequest(socket, 'POST', '/v1/admit', JSON.stringify({ ...attemptOf(ws.cards.fault, ws.root), dryRun: true }))
    conforms('AdmitDecision', parked.body)
    assert.ok(parked.body.park)
    const moved = await rawRequest(socket, 'POST', '/v1/moves', JSON.stringify({ id: ws.cards.veto, to: 'ready', dryRun: true }))
    conforms('MoveOutcome', moved.body)
    const card = await rawRequest(socket, 'GET', `/v1/cards/${ws.cards.allow}`)
    conforms('Card', card.body)
    const explained = await rawRequest(socket, 'GET', `/v1/explain?id=${ws.cards.allow}&to=ready`)
    conforms('Explanation', explained.body)
    const bad = await rawRequest(socket, 'POST', '/v1/admit', '{"id":"x","colour":1}')
    assert.equal(bad.status, 400)
    conforms('Error', bad.body)
    const reload = await rawRequest(socket, 'POST', '/v1/reload')
    conforms('Reload', reload.body)
    const health = await rawRequest(socket, 'GET', '/healthz')
    assert.deepEqual(health.body, { ok: true })
  })
})
