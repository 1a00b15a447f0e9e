// The topology editor: draws the nodes, their GPUs and the links between
// them (one XGMI hive per node: every pair of a node's GPUs linked; or each
// GPU on PCIe), lets the user add and remove nodes and GPUs, and checks
// every change with the server's validator (the one the command line
// uses), showing its message next to the field its JSON path names.

import { useEffect, useState } from "react";
import { api, type Topology, type Validation } from "./api";

const MAX_NODES = 64;
const MAX_GPUS = 16;

export function fieldOf(path: string | undefined, prefix = ""): string {
  if (!path) return "$";
  let p = path;
  if (prefix && p.startsWith(prefix)) p = p.slice(prefix.length);
  return p.split(/[.[]/)[0] || "$";
}

export function FieldError({ errors, field }: { errors: Record<string, string>; field: string }) {
  const e = errors[field];
  return e ? (
    <div className="field-error" data-field={field} role="alert">
      {e}
    </div>
  ) : null;
}

export function useValidation(kind: "topologies" | "profiles", value: unknown, prefix = "") {
  const [v, setV] = useState<Validation>({ ok: true });
  useEffect(() => {
    let live = true;
    const t = setTimeout(() => {
      api<Validation>("POST", `/api/${kind}/validate`, value)
        .then((r) => live && setV(r))
        .catch((e) => live && setV({ ok: false, error: String(e.message ?? e) }));
    }, 150);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [kind, JSON.stringify(value)]);
  const errors: Record<string, string> = {};
  if (!v.ok) errors[fieldOf(v.path, prefix)] = v.message ?? v.error ?? "invalid";
  return { validation: v, errors };
}

function Diagram({ t }: { t: Topology }) {
  const nodes = Math.max(0, Math.min(t.nodes || 0, 8));
  const gpus = Math.max(0, Math.min(t.gpus_per_node || 0, MAX_GPUS));
  const cols = Math.min(gpus, 4) || 1;
  const rows = Math.ceil(gpus / cols) || 1;
  const gw = 64,
    gh = 40,
    gap = 28;
  const nw = cols * (gw + gap) + gap;
  const nh = rows * (gh + gap) + gap + 40;
  const width = Math.max(nodes, 1) * (nw + 24) + 24;
  const pcie = t.gpu_link === "pcie";
  const pos = (i: number) => ({
    x: gap + (i % cols) * (gw + gap) + gw / 2,
    y: 40 + gap + Math.floor(i / cols) * (gh + gap) + gh / 2,
  });
  return (
    <svg className="topology" width={width} height={nh + 40} data-testid="topology-diagram">
      {Array.from({ length: nodes }, (_, n) => (
        <g key={n} transform={`translate(${24 + n * (nw + 24)}, 10)`} data-node={n}>
          <rect className="node" width={nw} height={nh} rx={10} />
          <text x={10} y={22} className="node-label">
            node{n}
          </text>
          {!pcie &&
            Array.from({ length: gpus }, (_, i) =>
              Array.from({ length: gpus }, (_, j) =>
                j > i ? (
                  <line
                    key={`${i}-${j}`}
                    className="xgmi"
                    data-link={`${i}-${j}`}
                    x1={pos(i).x}
                    y1={pos(i).y}
                    x2={pos(j).x}
                    y2={pos(j).y}
                  />
                ) : null,
              ),
            )}
          {pcie && <line className="pcie" x1={10} y1={32} x2={nw - 10} y2={32} />}
          {Array.from({ length: gpus }, (_, i) => (
            <g key={i} data-gpu={`${n}.${i}`}>
              {pcie && <line className="pcie" x1={pos(i).x} y1={32} x2={pos(i).x} y2={pos(i).y - gh / 2} />}
              <rect className="gpu" x={pos(i).x - gw / 2} y={pos(i).y - gh / 2} width={gw} height={gh} rx={4} />
              <text x={pos(i).x} y={pos(i).y + 5} textAnchor="middle" className="gpu-label">
                GPU {i}
              </text>
            </g>
          ))}
        </g>
      ))}
      {t.nodes > 8 && (
        <text x={24} y={nh + 35}>
          … and {t.nodes - 8} more nodes
        </text>
      )}
      {nodes > 1 && (
        <text x={24} y={nh + 28} className="net-label">
          nodes linked by the session's virtual Ethernet
        </text>
      )}
    </svg>
  );
}

/// Edits `value` (a topology) and reports every change; `errors` are
/// shown next to the fields (keys: name, agent, nodes, gpus_per_node,
/// gpu_link, description, $).
export function TopologyEditor({
  value,
  onChange,
  agents,
  errors,
  lockName,
}: {
  value: Topology;
  onChange: (t: Topology) => void;
  agents: string[];
  errors: Record<string, string>;
  lockName?: boolean;
}) {
  const t = value;
  const set = (p: Partial<Topology>) => onChange({ ...t, ...p });
  const agentName = typeof t.agent === "string" ? t.agent : String((t.agent as any)?.name ?? "");
  return (
    <div className="topology-editor">
      <div className="form">
        <label>
          name
          <input value={t.name} disabled={lockName} onChange={(e) => set({ name: e.target.value })} data-testid="topology-name" />
        </label>
        <FieldError errors={errors} field="name" />
        <label>
          agent (GPU model)
          <select value={agentName} onChange={(e) => set({ agent: e.target.value })} data-testid="topology-agent">
            {!agents.includes(agentName) && <option value={agentName}>{agentName || "(none)"}</option>}
            {agents.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <FieldError errors={errors} field="agent" />
        <label>
          nodes
          <span className="stepper">
            <button onClick={() => set({ nodes: t.nodes - 1 })} disabled={t.nodes <= 0} data-testid="remove-node">
              − node
            </button>
            <input
              type="number"
              value={t.nodes}
              onChange={(e) => set({ nodes: Number(e.target.value) })}
              data-testid="topology-nodes"
            />
            <button onClick={() => set({ nodes: t.nodes + 1 })} disabled={t.nodes >= MAX_NODES} data-testid="add-node">
              + node
            </button>
          </span>
        </label>
        <FieldError errors={errors} field="nodes" />
        <label>
          GPUs per node
          <span className="stepper">
            <button onClick={() => set({ gpus_per_node: t.gpus_per_node - 1 })} disabled={t.gpus_per_node <= 0} data-testid="remove-gpu">
              − GPU
            </button>
            <input
              type="number"
              value={t.gpus_per_node}
              onChange={(e) => set({ gpus_per_node: Number(e.target.value) })}
              data-testid="topology-gpus"
            />
            <button onClick={() => set({ gpus_per_node: t.gpus_per_node + 1 })} data-testid="add-gpu">
              + GPU
            </button>
          </span>
        </label>
        <FieldError errors={errors} field="gpus_per_node" />
        <label>
          GPU link
          <select value={t.gpu_link ?? "xgmi"} onChange={(e) => set({ gpu_link: e.target.value as "xgmi" | "pcie" })} data-testid="topology-link">
            <option value="xgmi">XGMI (one hive per node)</option>
            <option value="pcie">PCIe only</option>
          </select>
        </label>
        <FieldError errors={errors} field="gpu_link" />
        <label>
          description
          <input value={t.description ?? ""} onChange={(e) => set({ description: e.target.value || undefined })} />
        </label>
        <FieldError errors={errors} field="description" />
        <FieldError errors={errors} field="$" />
      </div>
      <Diagram t={t} />
    </div>
  );
}
