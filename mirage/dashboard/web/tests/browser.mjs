// The dashboard in a real browser (Debian's chromium, driven by
// playwright-core) against a running `mirage serve` with real sessions:
// create a profile, edit its topology to 2 GPUs (and see the validator's
// error next to the field for 17), start a session, run a HIP program from
// the terminal and see its PASS, watch the wave chart move while a long
// kernel runs, stop the session and find none of its processes left; a
// session whose supervisor is killed is reported within a second.
//
//   node tests/browser.mjs --mirage PATH --programs DIR --out DIR
//
// Screenshots of each step go to --out. Exit status 0 when every check
// passed; each check prints one line, then a summary line.

import { chromium } from "playwright-core";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const mirage = path.resolve(args.mirage ?? "../../../target/release/mirage");
const programs = path.resolve(args.programs ?? "../../../build/hip/gfx90a");
const out = path.resolve(args.out ?? "../../../build/dashboard/screenshots");
const chromiumPath = args.chromium ?? "/usr/bin/chromium";
fs.mkdirSync(out, { recursive: true });

let passed = 0;
let failed = 0;
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  ok ? passed++ : failed++;
  return ok;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mirage-dash-"));
fs.chmodSync(tmp, 0o700);
const env = { ...process.env, MIRAGE_HOME: path.join(tmp, "home"), MIRAGE_RUNTIME_DIR: path.join(tmp, "rt") };
const sessionsDir = path.join(env.MIRAGE_RUNTIME_DIR, "sessions");

/// Processes whose environment carries the session directory's tag.
function processesOf(dir) {
  const found = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const e = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
      if (e.split("\0").includes(`MIRAGE_SESSION_DIR=${dir}`)) found.push(Number(pid));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return found;
}

function alive(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = st.slice(st.lastIndexOf(")") + 2, st.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

const server = spawn(mirage, ["serve", "--listen", "127.0.0.1:0", "--token-file", path.join(tmp, "token")], {
  env,
  cwd: path.resolve("../../.."),
  stdio: ["ignore", "pipe", "inherit"],
});
const url = await new Promise((resolve, reject) => {
  let buf = "";
  server.stdout.on("data", (d) => {
    buf += d;
    const m = buf.match(/^(http:\/\/\S+)$/m);
    if (m) resolve(m[1]);
  });
  server.on("exit", (c) => reject(new Error(`mirage serve exited with ${c}`)));
  setTimeout(() => reject(new Error("mirage serve printed no URL in 20 s")), 20000);
});
const base = url.slice(0, url.indexOf("/?"));
const token = fs.readFileSync(path.join(tmp, "token"), "utf8").trim();
const mode = fs.statSync(path.join(tmp, "token")).mode & 0o777;
check(mode === 0o600, `the token file has mode 0600 (${mode.toString(8)})`);
const api = async (method, p, body) => {
  const r = await fetch(base + p, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const t = await r.text();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${t}`);
  return JSON.parse(t);
};

process.on("exit", () => server.kill("SIGKILL"));
const context = await chromium.launchPersistentContext(path.join(tmp, "chromium"), {
  executablePath: chromiumPath,
  viewport: { width: 1400, height: 1000 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const page = context.pages()[0] ?? (await context.newPage());
const shot = (name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
const termText = () =>
  page.evaluate(() => {
    const t = window.__mirageTerm;
    if (!t) return "";
    const b = t.buffer.active;
    let s = "";
    for (let i = 0; i < b.length; i++) s += (b.getLine(i)?.translateToString(true) ?? "") + "\n";
    return s;
  });
const waitFor = async (f, ms, every = 100) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await f();
    if (v) return v;
    await new Promise((r) => setTimeout(r, every));
  }
  return null;
};

let sessionId = null;
try {
  // 0. Without the token: nothing.
  const r401 = await fetch(`${base}/api/profiles`);
  check(r401.status === 401 && (await r401.text()) === "", "GET /api/profiles without the token is 401 with an empty body");

  // 1. The profiles, a new profile from the builtin mi210 (host ROCm, gfx90a).
  await page.goto(url);
  await page.getByTestId("profile-mi210").waitFor();
  check(!page.url().includes("token="), "the page drops the token from the address bar");
  await shot("01-profiles");
  await page.getByTestId("new-profile-name").fill("dash-mi210");
  await page.getByTestId("new-profile-base").selectOption("mi210");
  await page.getByTestId("new-profile").click();
  await page.getByTestId("edit-topology").click();
  // 2. The topology editor: a bad value gets the validator's message next to its field.
  await page.getByTestId("topology-gpus").fill("17");
  const err = page.locator('.field-error[data-field="gpus_per_node"]');
  await err.waitFor({ timeout: 5000 });
  check((await err.textContent()).includes("1 to 16"), `17 GPUs: "${await err.textContent()}" shown next to the field`);
  await shot("02-topology-error");
  await page.getByTestId("topology-gpus").fill("1");
  await page.getByTestId("add-gpu").click();
  await page.getByTestId("topology-link").selectOption("xgmi");
  await page.locator('[data-gpu="0.1"]').waitFor();
  const links = await page.locator("line.xgmi").count();
  check(links === 1, `2 GPUs drawn with ${links} XGMI link`);
  await page.getByTestId("profile-validation").filter({ hasText: "valid" }).waitFor({ timeout: 5000 });
  await shot("03-topology-2gpus");
  await page.getByTestId("save-profile").click();
  await page.getByTestId("profile-dash-mi210").waitFor();
  const stored = await api("GET", "/api/profiles/dash-mi210");
  check(stored.object.topology.gpus_per_node === 2, "the stored profile has 2 GPUs per node");
  check(stored.object.topology.gpu_link === "xgmi", "linked by XGMI");
  check(typeof stored.object.topology.agent === "string" && stored.object.topology.agent === "MI210", "its topology names the MI210 agent");

  // 3. A session of it.
  await page.getByTestId("start-dash-mi210").click();
  await page.getByTestId("session-profile").selectOption("dash-mi210");
  await page.getByTestId("start-session").click();
  await page.getByTestId("session-id").waitFor({ timeout: 120000 });
  sessionId = await page.getByTestId("session-id").textContent();
  await page.getByTestId("session-status").filter({ hasText: "running" }).waitFor({ timeout: 10000 });
  const state = (await api("GET", `/api/sessions/${sessionId}`)).state;
  check(state.nodes.length === 1 && state.nodes[0].gpus === 2, "the session has one node with 2 GPUs");
  await page.getByTestId("chart-waves").waitFor({ timeout: 10000 });
  await shot("04-session");

  // 4. A HIP program from the terminal.
  await page.getByTestId("open-terminal").click();
  await page.getByTestId("terminal-state").filter({ hasText: "open" }).waitFor({ timeout: 10000 });
  await page.waitForTimeout(500);
  await page.locator(".xterm-helper-textarea").focus();
  await page.keyboard.type(`${programs}/vector_add && rocminfo | grep -c 'Name: *gfx90a'\n`);
  const pass = await waitFor(async () => /PASS vector_add/.test(await termText()), 90000, 250);
  check(!!pass, "the terminal shows PASS vector_add");
  const gpus = await waitFor(async () => (await termText()).match(/^\s*(\d+)\s*$/m)?.[1], 60000, 250);
  check(gpus === "2", `rocminfo in the terminal lists ${gpus} gfx90a agents`);
  await shot("05-terminal-pass");

  // 5. A long kernel: the wave chart moves.
  await page.keyboard.type(`${programs}/long_kernel 1\n`);
  const seen = new Set();
  const moved = await waitFor(async () => {
    const w = JSON.parse((await page.getByTestId("chart-waves").getAttribute("data-last")) ?? "[]");
    const ips = JSON.parse((await page.getByTestId("chart-ips").getAttribute("data-last")) ?? "[]");
    const total = ips.reduce((a, b) => a + b, 0);
    if (w.some((x) => x > 0) && total > 0) seen.add(Math.round(total));
    return seen.size >= 3;
  }, 120000, 250);
  check(!!moved, `waves in flight and wave-instructions/s move while the kernel runs (${seen.size} distinct rates)`);
  await shot("06-live-metrics");
  const done = await waitFor(async () => /PASS long_kernel/.test(await termText()), 300000, 500);
  check(!!done, "the long kernel passes");
  await shot("07-long-kernel-done");

  // 6. Stop: no process of the session is left.
  const dir = path.join(sessionsDir, sessionId);
  const supervisor = state.supervisor_pid;
  await page.getByTestId("stop-session").click();
  await page.getByTestId("session-ended").waitFor({ timeout: 60000 });
  await shot("08-stopped");
  const gone = await waitFor(async () => !alive(supervisor), 30000, 100);
  check(!!gone, `the supervisor (pid ${supervisor}) is gone`);
  const left = processesOf(dir);
  check(left.length === 0, `no process of the session is left (${left.join(" ") || "none"})`);
  check(!fs.existsSync(dir), "the session directory is removed");
  sessionId = null;

  // 7. A session that dies: the page says so within a second.
  const s2 = await api("POST", "/api/sessions", { profile: "dash-mi210" });
  sessionId = s2.id;
  await page.getByTestId("tab-sessions").click();
  await page.getByTestId(`session-${s2.id}`).getByRole("button", { name: "Open" }).click();
  await page.getByTestId("chart-waves").waitFor({ timeout: 10000 });
  const pid = (await api("GET", `/api/sessions/${s2.id}`)).state.supervisor_pid;
  const t0 = Date.now();
  process.kill(pid, "SIGKILL");
  await page.getByTestId("session-ended").waitFor({ timeout: 5000 });
  const dt = Date.now() - t0;
  check(dt < 1000, `a killed supervisor is reported in ${dt} ms`);
  check((await page.getByTestId("session-ended").textContent()).includes("died"), "the page says the session died");
  await shot("09-session-died");
  await api("POST", `/api/sessions/${s2.id}/stop`);
  sessionId = null;
} catch (e) {
  check(false, `the run went through: ${e.stack ?? e}`);
  await shot("error").catch(() => {});
} finally {
  if (sessionId) await api("POST", `/api/sessions/${sessionId}/stop`).catch(() => {});
  await context.close().catch(() => {});
  server.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`dashboard: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
