// Opens a page in headless Chromium over the DevTools protocol, waits WAIT_MS
// of real time (the trace viewer imports after the page has loaded) and saves
// a screenshot: node --experimental-websocket screenshot.mjs URL OUT.png WAIT_MS
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const [url, out, wait] = process.argv.slice(2);
const port = 9333;
const chrome = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
  `--remote-debugging-port=${port}`, '--window-size=1400,820', 'about:blank'], { stdio: 'ignore' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let targets;
for (let i = 0; i < 50; i++) {
  try { targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json(); break; } catch { await sleep(200); }
}
const page = targets.find((t) => t.type === 'page');
const ws = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((r) => ws.addEventListener('open', r));
let id = 0; const pending = new Map();
ws.addEventListener('message', (e) => { const m = JSON.parse(e.data); if (pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); } });
const send = (method, params = {}) => new Promise((r) => { id += 1; pending.set(id, r); ws.send(JSON.stringify({ id, method, params })); });
await send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 820, deviceScaleFactor: 1, mobile: false });
await send('Page.navigate', { url });
await sleep(Number(wait));
const shot = await send('Page.captureScreenshot', { format: 'png' });
writeFileSync(out, Buffer.from(shot.result.data, 'base64'));
chrome.kill();
process.exit(0);
