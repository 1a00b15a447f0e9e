// mirage's dashboard: profiles and topologies (list, create, edit, import,
// export; the topology editor), sessions (start, stop, live metrics,
// terminal), executions with their output.

import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { api, download, token, type Execution, type ListOf, type Profile, type SessionInfo, type Topology } from "./api";
import { FieldError, TopologyEditor, fieldOf, useValidation } from "./TopologyEditor";
import { SessionView } from "./Session";
import { Executions } from "./Executions";
import "./style.css";

function useList<T>(path: string, every = 0) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    const load = () =>
      api<T>("GET", path)
        .then((d) => live && (setData(d), setError(null)))
        .catch((e) => live && setError(e.message));
    load();
    const t = every ? setInterval(load, every) : undefined;
    return () => {
      live = false;
      if (t) clearInterval(t);
    };
  }, [path, n]);
  return { data, error, reload: () => setN((x) => x + 1) };
}

function readFile(): Promise<string> {
  return new Promise((resolve, reject) => {
    const i = document.createElement("input");
    i.type = "file";
    i.accept = "application/json,.json";
    i.onchange = () => {
      const f = i.files?.[0];
      if (!f) return reject(new Error("no file"));
      f.text().then(resolve, reject);
    };
    i.click();
  });
}

function topoSummary(t: string | Topology, topos: ListOf<Topology> | null): string {
  const tt = typeof t === "string" ? topos?.items.find((x) => x.name === t)?.object : t;
  if (!tt) return typeof t === "string" ? `${t} (missing)` : "?";
  const agent = typeof tt.agent === "string" ? tt.agent : String((tt.agent as any).name);
  return `${typeof t === "string" ? t + ": " : ""}${tt.nodes} x ${tt.gpus_per_node} ${agent}`;
}

function ProfileEditor({
  initial,
  isNew,
  agents,
  topos,
  onDone,
}: {
  initial: Profile;
  isNew: boolean;
  agents: string[];
  topos: ListOf<Topology> | null;
  onDone: () => void;
}) {
  const [p, setP] = useState<Profile>(initial);
  const [json, setJson] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<{ msg: string; path?: string } | null>(null);
  const { validation, errors } = useValidation("profiles", p);
  const topoErrors: Record<string, string> = {};
  if (!validation.ok && validation.path?.startsWith("topology.")) {
    topoErrors[fieldOf(validation.path, "topology.")] = validation.message ?? validation.error ?? "";
  }
  if (saveError?.path) {
    const f = saveError.path.startsWith("topology.") ? fieldOf(saveError.path, "topology.") : fieldOf(saveError.path);
    (saveError.path.startsWith("topology.") ? topoErrors : errors)[f] = saveError.msg;
  }
  const set = (x: Partial<Profile>) => setP({ ...p, ...x });
  const inline = typeof p.topology !== "string";
  const editHere = () => {
    const named = topos?.items.find((t) => t.name === p.topology)?.object;
    const base: Topology = named ? { ...named } : { name: `${p.name}-topology`, agent: "MI300X", nodes: 1, gpus_per_node: 1, gpu_link: "xgmi" };
    set({ topology: { ...base, name: `${p.name}-topology` } });
  };
  const save = async () => {
    setSaveError(null);
    try {
      if (isNew) await api("POST", "/api/profiles", p);
      else await api("PUT", `/api/profiles/${encodeURIComponent(initial.name)}`, p);
      onDone();
    } catch (e: any) {
      setSaveError({ msg: e.detail ?? e.message, path: e.path });
    }
  };
  return (
    <div className="editor" data-testid="profile-editor">
      <h3>{isNew ? "New profile" : `Edit profile ${initial.name}`}</h3>
      <div className="form">
        <label>
          name
          <input value={p.name} disabled={!isNew} onChange={(e) => set({ name: e.target.value })} data-testid="profile-name" />
        </label>
        <FieldError errors={errors} field="name" />
        <label>
          description
          <input value={p.description ?? ""} onChange={(e) => set({ description: e.target.value || undefined })} />
        </label>
        <label>
          backend
          <input value={p.backend.kind} onChange={(e) => set({ backend: { ...p.backend, kind: e.target.value } })} data-testid="profile-backend" />
        </label>
        <FieldError errors={errors} field="backend" />
        <label>
          sysroot (chroot)
          <input value={p.sysroot ?? ""} onChange={(e) => set({ sysroot: e.target.value || undefined })} />
        </label>
        <FieldError errors={errors} field="sysroot" />
        <label>
          image (containers)
          <input value={p.image ?? ""} onChange={(e) => set({ image: e.target.value || undefined })} />
        </label>
        <FieldError errors={errors} field="image" />
        <label>
          topology
          {inline ? (
            <span>
              edited here{" "}
              <select value="" onChange={(e) => e.target.value && set({ topology: e.target.value })}>
                <option value="">(or use a stored one…)</option>
                {topos?.items.map((t) => (
                  <option key={t.name}>{t.name}</option>
                ))}
              </select>
            </span>
          ) : (
            <span>
              <select value={p.topology as string} onChange={(e) => set({ topology: e.target.value })} data-testid="profile-topology">
                {topos?.items.map((t) => (
                  <option key={t.name}>{t.name}</option>
                ))}
              </select>{" "}
              {topoSummary(p.topology, topos)}{" "}
              <button onClick={editHere} data-testid="edit-topology">
                Edit topology
              </button>
            </span>
          )}
        </label>
        {!inline && <FieldError errors={errors} field="topology" />}
      </div>
      {inline && (
        <TopologyEditor
          value={p.topology as Topology}
          onChange={(t) => set({ topology: t })}
          agents={agents}
          errors={topoErrors}
        />
      )}
      <details onToggle={(e) => setJson((e.target as HTMLDetailsElement).open ? JSON.stringify(p, null, 2) : null)}>
        <summary>JSON</summary>
        {json !== null && (
          <textarea
            className="json"
            value={json}
            onChange={(e) => {
              setJson(e.target.value);
              try {
                setP(JSON.parse(e.target.value));
              } catch {
                /* shown as invalid below */
              }
            }}
          />
        )}
      </details>
      <FieldError errors={errors} field="$" />
      <div className="actions">
        <span className={validation.ok ? "ok" : "bad"} data-testid="profile-validation">
          {validation.ok ? "valid" : validation.error}
        </span>
        <button onClick={save} disabled={!validation.ok} data-testid="save-profile">
          Save
        </button>
        <button onClick={onDone}>Cancel</button>
      </div>
      {saveError && !saveError.path && <div className="banner error">{saveError.msg}</div>}
    </div>
  );
}

function Profiles({ onStart }: { onStart: (profile: string) => void }) {
  const profiles = useList<ListOf<Profile>>("/api/profiles");
  const topos = useList<ListOf<Topology>>("/api/topologies");
  const agents = useList<ListOf>("/api/agents");
  const [edit, setEdit] = useState<{ p: Profile; isNew: boolean } | null>(null);
  const [base, setBase] = useState("mi300x");
  const [newName, setNewName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const agentNames = agents.data?.items.map((a) => a.name) ?? [];
  const done = () => {
    setEdit(null);
    profiles.reload();
  };
  const act = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
      profiles.reload();
    } catch (e: any) {
      setError(e.message);
    }
  };
  if (edit) return <ProfileEditor initial={edit.p} isNew={edit.isNew} agents={agentNames} topos={topos.data} onDone={done} />;
  return (
    <div>
      <h2>Profiles</h2>
      {profiles.error && <div className="banner error">{profiles.error}</div>}
      {error && <div className="banner error">{error}</div>}
      {profiles.data?.problems.map((p) => (
        <div key={p} className="banner warn">
          {p}
        </div>
      ))}
      <div className="actions">
        <input placeholder="new profile name" value={newName} onChange={(e) => setNewName(e.target.value)} data-testid="new-profile-name" />
        from
        <select value={base} onChange={(e) => setBase(e.target.value)} data-testid="new-profile-base">
          {profiles.data?.items.map((p) => (
            <option key={p.name}>{p.name}</option>
          ))}
        </select>
        <button
          data-testid="new-profile"
          onClick={() => {
            const b = profiles.data?.items.find((p) => p.name === base)?.object;
            if (b) setEdit({ p: { ...b, name: newName || `${b.name}-copy` }, isNew: true });
          }}
        >
          New profile
        </button>
        <button onClick={() => act(async () => api("POST", "/api/profiles/import", await readFile()))}>Import…</button>
      </div>
      <table data-testid="profiles">
        <thead>
          <tr>
            <th>name</th>
            <th>backend</th>
            <th>topology</th>
            <th>runs in</th>
            <th>source</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {profiles.data?.items.map((e) => (
            <tr key={e.name} data-testid={`profile-${e.name}`}>
              <td>{e.name}</td>
              <td>{e.object.backend.kind}</td>
              <td>{topoSummary(e.object.topology, topos.data)}</td>
              <td>{e.object.image ? `image ${e.object.image}` : e.object.sysroot ? `sysroot ${e.object.sysroot}` : "host"}</td>
              <td className="source">{e.source}</td>
              <td>
                <button onClick={() => onStart(e.name)} data-testid={`start-${e.name}`}>
                  Start session
                </button>
                {e.source !== "builtin" && (
                  <button onClick={() => setEdit({ p: e.object, isNew: false })} data-testid={`edit-${e.name}`}>
                    Edit
                  </button>
                )}
                <button onClick={() => act(async () => download(`${e.name}.json`, await api("GET", `/api/profiles/${e.name}/export`)))}>Export</button>
                {e.source !== "builtin" && <button onClick={() => act(() => api("DELETE", `/api/profiles/${e.name}`))}>Delete</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function TopologyPage({ initial, isNew, agents, onDone }: { initial: Topology; isNew: boolean; agents: string[]; onDone: () => void }) {
  const [t, setT] = useState<Topology>(initial);
  const { validation, errors } = useValidation("topologies", t);
  const [saveError, setSaveError] = useState<string | null>(null);
  const save = async () => {
    setSaveError(null);
    try {
      if (isNew) await api("POST", "/api/topologies", t);
      else await api("PUT", `/api/topologies/${encodeURIComponent(initial.name)}`, t);
      onDone();
    } catch (e: any) {
      setSaveError(e.message);
    }
  };
  return (
    <div className="editor">
      <h3>{isNew ? "New topology" : `Edit topology ${initial.name}`}</h3>
      <TopologyEditor value={t} onChange={setT} agents={agents} errors={errors} lockName={!isNew} />
      <div className="actions">
        <span className={validation.ok ? "ok" : "bad"}>{validation.ok ? "valid" : validation.error}</span>
        <button onClick={save} disabled={!validation.ok} data-testid="save-topology">
          Save
        </button>
        <button onClick={() => download(`${t.name}.json`, t)}>Export</button>
        <button onClick={onDone}>Cancel</button>
      </div>
      {saveError && <div className="banner error">{saveError}</div>}
    </div>
  );
}

function Topologies() {
  const topos = useList<ListOf<Topology>>("/api/topologies");
  const agents = useList<ListOf>("/api/agents");
  const [edit, setEdit] = useState<{ t: Topology; isNew: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const agentNames = agents.data?.items.map((a) => a.name) ?? [];
  const act = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
      topos.reload();
    } catch (e: any) {
      setError(e.message);
    }
  };
  if (edit)
    return (
      <TopologyPage
        initial={edit.t}
        isNew={edit.isNew}
        agents={agentNames}
        onDone={() => {
          setEdit(null);
          topos.reload();
        }}
      />
    );
  return (
    <div>
      <h2>Topologies</h2>
      {error && <div className="banner error">{error}</div>}
      <div className="actions">
        <button onClick={() => setEdit({ t: { name: "my-topology", agent: agentNames[0] ?? "MI300X", nodes: 1, gpus_per_node: 2, gpu_link: "xgmi" }, isNew: true })}>
          New topology
        </button>
        <button onClick={() => act(async () => api("POST", "/api/topologies", await readFile()))}>Import…</button>
      </div>
      <table>
        <thead>
          <tr>
            <th>name</th>
            <th>shape</th>
            <th>link</th>
            <th>source</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {topos.data?.items.map((e) => (
            <tr key={e.name}>
              <td>{e.name}</td>
              <td>{topoSummary(e.object, null)}</td>
              <td>{e.object.gpu_link ?? "xgmi"}</td>
              <td className="source">{e.source}</td>
              <td>
                <button onClick={() => setEdit({ t: e.object, isNew: e.source === "builtin" })}>{e.source === "builtin" ? "Copy" : "Edit"}</button>
                <button onClick={() => download(`${e.name}.json`, e.object)}>Export</button>
                {e.source !== "builtin" && <button onClick={() => act(() => api("DELETE", `/api/topologies/${e.name}`))}>Delete</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Sessions({ open, startWith }: { open: (id: string) => void; startWith: string | null }) {
  const sessions = useList<SessionInfo[]>("/api/sessions", 1000);
  const profiles = useList<ListOf<Profile>>("/api/profiles");
  const [profile, setProfile] = useState(startWith ?? "mi300x");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ id: string }>("POST", "/api/sessions", { profile });
      open(r.id);
    } catch (e: any) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <h2>Sessions</h2>
      <div className="actions">
        <select value={profile} onChange={(e) => setProfile(e.target.value)} data-testid="session-profile">
          {profiles.data?.items.map((p) => (
            <option key={p.name}>{p.name}</option>
          ))}
        </select>
        <button onClick={start} disabled={busy} data-testid="start-session">
          {busy ? "Booting…" : "Start session"}
        </button>
      </div>
      {error && (
        <div className="banner error" data-testid="start-error">
          {error}
        </div>
      )}
      <table data-testid="sessions">
        <thead>
          <tr>
            <th>id</th>
            <th>profile</th>
            <th>nodes x GPUs</th>
            <th>runs in</th>
            <th>status</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {sessions.data?.map((s) => (
            <tr key={s.id} className={s.alive ? "" : "dead"} data-testid={`session-${s.id}`}>
              <td>{s.id}</td>
              <td>{s.state.profile}</td>
              <td>{s.state.nodes ? `${s.state.nodes.length} x ${s.state.nodes[0]?.gpus ?? 0}` : "-"}</td>
              <td>{s.state.root}</td>
              <td>{s.alive ? s.state.status : "died (supervisor gone)"}</td>
              <td>
                <button onClick={() => open(s.id)}>Open</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AllExecutions() {
  const execs = useList<Execution[]>("/api/executions", 1000);
  return (
    <div>
      <h2>Executions</h2>
      <Executions list={execs.data ?? []} />
    </div>
  );
}

function App() {
  const [tab, setTab] = useState("profiles");
  const [session, setSession] = useState<string | null>(null);
  const [startWith, setStartWith] = useState<string | null>(null);
  if (!token)
    return (
      <div className="banner error">
        No token: open the URL <code>mirage serve</code> printed (it carries <code>?token=</code>).
      </div>
    );
  const go = (t: string) => {
    setSession(null);
    setTab(t);
  };
  return (
    <div className="app">
      <header>
        <b>mirage</b>
        {["profiles", "topologies", "sessions", "executions"].map((t) => (
          <button key={t} className={tab === t && !session ? "active" : ""} onClick={() => go(t)} data-testid={`tab-${t}`}>
            {t}
          </button>
        ))}
      </header>
      <main>
        {session ? (
          <SessionView id={session} onBack={() => go("sessions")} />
        ) : tab === "profiles" ? (
          <Profiles
            onStart={(p) => {
              setStartWith(p);
              go("sessions");
            }}
          />
        ) : tab === "topologies" ? (
          <Topologies />
        ) : tab === "sessions" ? (
          <Sessions open={setSession} startWith={startWith} />
        ) : (
          <AllExecutions />
        )}
      </main>
    </div>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
