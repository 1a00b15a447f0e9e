// A session's page: its nodes, per-GPU live charts from the metrics
// WebSocket, a terminal (xterm.js) into it, and its executions.

import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { Terminal as XTerm } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import "@xterm/xterm/css/xterm.css";
import { api, socket, type Execution, type SessionInfo } from "./api";
import { Executions } from "./Executions";

const WINDOW = 120; // samples kept (30 s at 4 Hz)
const COLORS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324"];

interface GpuRates {
  gpu: number;
  waves_in_flight: number;
  dispatches_active: number;
  dispatches: number;
  wave_instructions: number;
  wave_instructions_per_s: number;
  by_family_per_s: Record<string, number>;
  bytes_read_per_s: number;
  bytes_written_per_s: number;
  vram_used: number;
  vram_size: number;
  queues: number;
}

interface NodeRates {
  node: number;
  gpus: GpuRates[];
  total: GpuRates;
  events: { id: number; gpu: number; event: string; kernel: string; wave_instructions?: number; wall_s?: number; error?: string }[];
}

type Series = { label: string; values: number[] };

function Chart({ title, unit, times, series, testid }: { title: string; unit: string; times: number[]; series: Series[]; testid: string }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const key = series.map((s) => s.label).join("|");
  useEffect(() => {
    if (!el.current) return;
    const opts: uPlot.Options = {
      width: 420,
      height: 180,
      title,
      scales: { x: { time: true } },
      axes: [{}, { label: unit, size: 90 }],
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2 }))],
    };
    plot.current = new uPlot(opts, [times, ...series.map((s) => s.values)] as uPlot.AlignedData, el.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [key]);
  useEffect(() => {
    plot.current?.setData([times, ...series.map((s) => s.values)] as uPlot.AlignedData);
  });
  const last = series.map((s) => s.values[s.values.length - 1] ?? 0);
  return (
    <div className="chart" data-testid={testid} data-last={JSON.stringify(last)}>
      <div ref={el} />
    </div>
  );
}

function human(n: number): string {
  const u = ["", "k", "M", "G", "T"];
  let i = 0;
  while (Math.abs(n) >= 1000 && i < u.length - 1) {
    n /= 1000;
    i++;
  }
  return `${n.toFixed(n < 10 && i > 0 ? 2 : 0)}${u[i]}`;
}

function Metrics({ id, onEnded }: { id: string; onEnded: (why: string) => void }) {
  const [frames, setFrames] = useState<{ t: number; nodes: NodeRates[] }[]>([]);
  const [stalled, setStalled] = useState(false);
  const [events, setEvents] = useState<NodeRates["events"]>([]);
  useEffect(() => {
    const ws = socket(`/api/sessions/${id}/metrics?interval_ms=250`);
    ws.onmessage = (m) => {
      const msg = JSON.parse(m.data as string);
      if (msg.type === "metrics") {
        setStalled(false);
        setFrames((f) => [...f.slice(-WINDOW + 1), { t: msg.time, nodes: msg.nodes }]);
        const ev = (msg.nodes as NodeRates[]).flatMap((n) => n.events.map((e) => ({ ...e, node: n.node })));
        if (ev.length) setEvents((old) => [...ev.reverse(), ...old].slice(0, 30));
      } else if (msg.type === "stalled") {
        setStalled(true);
      } else if (msg.type === "ended") {
        onEnded(msg.reason);
      }
    };
    return () => ws.close();
  }, [id]);
  if (!frames.length) return <p>waiting for the first metrics…</p>;
  const last = frames[frames.length - 1];
  if (!last.nodes.length)
    return <p className="note">This session's emulator publishes no live counters (local mode, or live_metrics off).</p>;
  const times = frames.map((f) => f.t);
  const gpuKeys = last.nodes.flatMap((n) => n.gpus.map((g) => ({ node: n.node, gpu: g.gpu })));
  const per = (f: (g: GpuRates) => number): Series[] =>
    gpuKeys.map((k) => ({
      label: `node${k.node} GPU ${k.gpu}`,
      values: frames.map((fr) => {
        const g = fr.nodes.find((n) => n.node === k.node)?.gpus.find((g) => g.gpu === k.gpu);
        return g ? f(g) : 0;
      }),
    }));
  const fam = (names: string[]) => (fr: { nodes: NodeRates[] }) =>
    fr.nodes.reduce((a, n) => a + names.reduce((b, x) => b + (n.total.by_family_per_s[x] ?? 0), 0), 0);
  const mix: Series[] = [
    { label: "VALU", values: frames.map(fam(["valu"])) },
    { label: "MFMA", values: frames.map(fam(["mfma"])) },
    { label: "SALU", values: frames.map(fam(["salu", "branch", "wait", "barrier", "other"])) },
    { label: "memory", values: frames.map(fam(["vmem_load", "vmem_store", "vmem_atomic", "smem", "lds"])) },
  ];
  return (
    <div>
      {stalled && <div className="banner warn">The session's supervisor has not answered for 2 s.</div>}
      <div className="charts">
        <Chart title="waves in flight" unit="waves" times={times} series={per((g) => g.waves_in_flight)} testid="chart-waves" />
        <Chart title="wave-instructions/s" unit="inst/s" times={times} series={per((g) => g.wave_instructions_per_s)} testid="chart-ips" />
        <Chart title="instruction mix (all GPUs)" unit="inst/s" times={times} series={mix} testid="chart-mix" />
        <Chart title="VRAM used" unit="MiB" times={times} series={per((g) => g.vram_used / 1048576)} testid="chart-vram" />
      </div>
      <table className="gpus" data-testid="gpu-table">
        <thead>
          <tr>
            <th>node</th>
            <th>GPU</th>
            <th>waves</th>
            <th>inst/s</th>
            <th>dispatches (active)</th>
            <th>queues</th>
            <th>VRAM</th>
          </tr>
        </thead>
        <tbody>
          {last.nodes.flatMap((n) =>
            n.gpus.map((g) => (
              <tr key={`${n.node}.${g.gpu}`}>
                <td>{n.node}</td>
                <td>{g.gpu}</td>
                <td>{g.waves_in_flight}</td>
                <td>{human(g.wave_instructions_per_s)}</td>
                <td>
                  {g.dispatches} ({g.dispatches_active})
                </td>
                <td>{g.queues}</td>
                <td>
                  {(g.vram_used / 1048576).toFixed(0)} / {(g.vram_size / 1073741824).toFixed(0)} GiB
                </td>
              </tr>
            )),
          )}
        </tbody>
      </table>
      {events.length > 0 && (
        <details>
          <summary>recent dispatches</summary>
          <ul className="events">
            {events.map((e: any) => (
              <li key={`${e.node}.${e.id}`}>
                node{e.node} GPU {e.gpu} {e.event} {e.kernel}
                {e.event === "end" && ` — ${human(e.wave_instructions ?? 0)} wave-insts in ${(e.wall_s ?? 0).toFixed(3)} s`}
                {e.error && ` — ${e.error}`}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

function Terminal({ id, node }: { id: string; node: number }) {
  const el = useRef<HTMLDivElement>(null);
  const [state, setState] = useState("connecting");
  useEffect(() => {
    if (!el.current) return;
    const term = new XTerm({ convertEol: false, fontSize: 13, cursorBlink: true });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el.current);
    fit.fit();
    const ws = socket(`/api/sessions/${id}/terminal?node=${node}&rows=${term.rows}&cols=${term.cols}`);
    ws.onopen = () => {
      setState("open");
      fit.fit();
      ws.send(JSON.stringify({ type: "resize", rows: term.rows, cols: term.cols }));
    };
    ws.onmessage = (m) => {
      if (typeof m.data === "string") {
        const msg = JSON.parse(m.data);
        if (msg.type === "exit") {
          term.write(`\r\n[exited with status ${msg.code}]\r\n`);
          setState(`exited (${msg.code})`);
        } else if (msg.type === "error") {
          term.write(`\r\n[${msg.message}]\r\n`);
          setState("error");
        }
      } else {
        term.write(new Uint8Array(m.data as ArrayBuffer));
      }
    };
    ws.onclose = () => setState((s) => (s === "open" ? "closed" : s));
    const enc = new TextEncoder();
    const d1 = term.onData((d) => ws.readyState === WebSocket.OPEN && ws.send(enc.encode(d)));
    const d2 = term.onResize(({ rows, cols }) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: "resize", rows, cols })));
    const onWin = () => fit.fit();
    window.addEventListener("resize", onWin);
    (window as any).__mirageTerm = term;
    return () => {
      window.removeEventListener("resize", onWin);
      d1.dispose();
      d2.dispose();
      ws.close();
      term.dispose();
    };
  }, [id, node]);
  return (
    <div>
      <div className="note" data-testid="terminal-state">
        terminal on node {node}: {state}
      </div>
      <div className="terminal" ref={el} data-testid="terminal" />
    </div>
  );
}

export function SessionView({ id, onBack }: { id: string; onBack: () => void }) {
  const [info, setInfo] = useState<SessionInfo | null>(null);
  const [ended, setEnded] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [term, setTerm] = useState(false);
  const [node, setNode] = useState(0);
  const [execs, setExecs] = useState<Execution[]>([]);
  useEffect(() => {
    let live = true;
    const load = () => {
      api<SessionInfo>("GET", `/api/sessions/${id}`)
        .then((s) => {
          if (!live) return;
          setInfo(s);
          if (!s.alive) setEnded(`session ${id} died: its supervisor is gone (stop it to remove what it left)`);
        })
        .catch((e) => live && (e.status === 404 ? setEnded(`session ${id} stopped`) : setError(e.message)));
      api<Execution[]>("GET", "/api/executions")
        .then((x) => live && setExecs(x.filter((e) => e.session === id)))
        .catch(() => {});
    };
    load();
    const t = setInterval(load, 1000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [id]);
  const stop = async () => {
    setError(null);
    try {
      await api("POST", `/api/sessions/${id}/stop`);
      setEnded(`session ${id} stopped`);
    } catch (e: any) {
      setError(e.message);
    }
  };
  const st = info?.state;
  return (
    <div className="session">
      <button onClick={onBack}>← sessions</button>
      <h2>
        session <span data-testid="session-id">{id}</span>
      </h2>
      {ended && (
        <div className="banner error" data-testid="session-ended" role="alert">
          {ended}
        </div>
      )}
      {error && <div className="banner error">{error}</div>}
      {st && (
        <p>
          profile <b>{st.profile}</b>, backend {st.backend}, runs in {st.root}, status{" "}
          <b data-testid="session-status">{ended ? "gone" : st.status}</b>, supervisor pid {st.supervisor_pid}
        </p>
      )}
      {st?.nodes && (
        <ul>
          {st.nodes.map((n: any) => (
            <li key={n.index}>
              node {n.index} ({n.hostname}): {n.gpus} GPU(s) {n.emulator?.target ?? ""}, {n.emulator?.mode ?? ""} mode
            </li>
          ))}
        </ul>
      )}
      {!ended && (
        <div className="actions">
          <button onClick={stop} data-testid="stop-session">
            Stop session
          </button>
          <label>
            node{" "}
            <input type="number" min={0} value={node} onChange={(e) => setNode(Number(e.target.value))} style={{ width: "4em" }} />
          </label>
          <button onClick={() => setTerm((t) => !t)} data-testid="open-terminal">
            {term ? "Close terminal" : "Open terminal"}
          </button>
        </div>
      )}
      {term && !ended && <Terminal id={id} node={node} />}
      <h3>Live metrics</h3>
      {!ended && <Metrics id={id} onEnded={(why) => setEnded(why)} />}
      <h3>Executions</h3>
      <Executions list={execs} session={ended ? undefined : id} />
    </div>
  );
}
