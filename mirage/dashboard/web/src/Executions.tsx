// Executions: a form to run a command in a session, the list, and each
// one's output streamed over a WebSocket.

import { useEffect, useRef, useState } from "react";
import { api, socket, type Execution } from "./api";

function Output({ id }: { id: string }) {
  const [text, setText] = useState("");
  const [code, setCode] = useState<number | null>(null);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    setText("");
    setCode(null);
    const dec = new TextDecoder();
    const ws = socket(`/api/executions/${id}/stream`);
    ws.onmessage = (m) => {
      if (typeof m.data === "string") {
        const msg = JSON.parse(m.data);
        if (msg.type === "exit") setCode(msg.code);
      } else {
        setText((t) => t + dec.decode(new Uint8Array(m.data as ArrayBuffer), { stream: true }));
      }
    };
    return () => ws.close();
  }, [id]);
  useEffect(() => {
    if (pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text]);
  return (
    <div>
      <pre className="log" ref={pre} data-testid={`output-${id}`}>
        {text}
      </pre>
      {code !== null && <div data-testid={`exit-${id}`}>exit status {code}</div>}
    </div>
  );
}

export function Executions({ list, session }: { list: Execution[]; session?: string }) {
  const [open, setOpen] = useState<string | null>(null);
  const [cmd, setCmd] = useState("");
  const [node, setNode] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setError(null);
    const argv = cmd.trim().split(/\s+/).filter(Boolean);
    try {
      const e = await api<Execution>("POST", "/api/executions", { session, argv, node });
      setOpen(e.id);
    } catch (e: any) {
      setError(e.message);
    }
  };
  const act = async (method: string, path: string) => {
    setError(null);
    try {
      await api(method, path);
    } catch (e: any) {
      setError(e.message);
    }
  };
  return (
    <div className="executions">
      {session && (
        <div className="actions">
          <input placeholder="command, e.g. rocminfo" value={cmd} onChange={(e) => setCmd(e.target.value)} data-testid="exec-command" style={{ width: "24em" }} />
          <label>
            node <input type="number" min={0} value={node} onChange={(e) => setNode(Number(e.target.value))} style={{ width: "4em" }} />
          </label>
          <button onClick={run} disabled={!cmd.trim()} data-testid="exec-run">
            Run
          </button>
        </div>
      )}
      {error && <div className="banner error">{error}</div>}
      <table>
        <thead>
          <tr>
            <th>id</th>
            <th>session</th>
            <th>command</th>
            <th>status</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.map((e) => (
            <tr key={e.id} data-testid={`execution-${e.id}`}>
              <td>{e.id}</td>
              <td>{e.session}</td>
              <td>
                <code>{e.argv.join(" ")}</code>
              </td>
              <td>
                {e.status}
                {e.code != null && ` (${e.code})`}
                {e.error && ` — ${e.error}`}
              </td>
              <td>
                <button onClick={() => setOpen(open === e.id ? null : e.id)}>{open === e.id ? "hide" : "output"}</button>
                {e.status === "running" && <button onClick={() => act("POST", `/api/executions/${e.id}/stop`)}>stop</button>}
                {e.ended != null && <button onClick={() => act("DELETE", `/api/executions/${e.id}`)}>remove</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {open && <Output id={open} />}
    </div>
  );
}
