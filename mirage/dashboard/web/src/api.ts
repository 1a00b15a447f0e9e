// The API client: the token comes from the URL `mirage serve` printed
// (`?token=`), is kept for the tab's life (sessionStorage) and dropped from
// the address bar, and goes with every request.

const KEY = "mirage.token";

function initToken(): string {
  const url = new URL(window.location.href);
  const t = url.searchParams.get("token");
  if (t) {
    sessionStorage.setItem(KEY, t);
    url.searchParams.delete("token");
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    return t;
  }
  return sessionStorage.getItem(KEY) ?? "";
}

export const token = initToken();

export class ApiError extends Error {
  status: number;
  path?: string;
  detail?: string;
  constructor(status: number, message: string, path?: string, detail?: string) {
    super(message);
    this.status = status;
    this.path = path;
    this.detail = detail;
  }
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  let payload: string | undefined;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = typeof body === "string" ? body : JSON.stringify(body);
  }
  const r = await fetch(path, { method, headers, body: payload });
  const text = await r.text();
  if (!r.ok) {
    if (r.status === 401) {
      throw new ApiError(401, "not authorised: open the URL `mirage serve` printed (it carries ?token=)");
    }
    let msg = text || r.statusText;
    let p: string | undefined;
    let detail: string | undefined;
    try {
      const j = JSON.parse(text);
      msg = j.error ?? msg;
      p = j.path;
      detail = j.message;
    } catch {
      /* plain text */
    }
    throw new ApiError(r.status, msg, p, detail);
  }
  const type = r.headers.get("content-type") ?? "";
  return (type.includes("json") ? JSON.parse(text) : text) as T;
}

/// A WebSocket to the API: the token travels as the subprotocol
/// `bearer.TOKEN` beside `mirage.v1` (a handshake cannot carry headers).
export function socket(path: string): WebSocket {
  const proto = window.location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${window.location.host}${path}`, ["mirage.v1", `bearer.${token}`]);
  ws.binaryType = "arraybuffer";
  return ws;
}

export interface Listed<T = any> {
  name: string;
  source: string;
  object: T;
}

export interface ListOf<T = any> {
  items: Listed<T>[];
  problems: string[];
}

export interface Validation {
  ok: boolean;
  error?: string;
  path?: string;
  message?: string;
}

export interface Topology {
  name: string;
  description?: string;
  agent: string | Record<string, unknown>;
  nodes: number;
  gpus_per_node: number;
  gpu_link?: "xgmi" | "pcie";
}

export interface Profile {
  name: string;
  description?: string;
  backend: { kind: string; options?: Record<string, unknown> };
  topology: string | Topology;
  image?: string;
  sysroot?: string;
  plugins?: string[];
  env?: Record<string, string>;
  mounts?: { host: string; guest: string; read_only?: boolean }[];
}

export interface SessionInfo {
  id: string;
  alive: boolean;
  state: any;
  executions?: any[];
}

export interface Execution {
  id: string;
  session: string;
  argv: string[];
  node?: number;
  status: string;
  code?: number | null;
  error?: string | null;
  pids: number[];
  started: number;
  ended?: number | null;
  output_bytes: number;
  ephemeral: boolean;
}

export function download(name: string, value: unknown) {
  const blob = new Blob([JSON.stringify(value, null, 2) + "\n"], { type: "application/json" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
