//! The REST API (`/api/...`): the stores (profiles, topologies, agents),
//! sessions, executions and emulators, each handler documented for the
//! OpenAPI document (utoipa). Bodies of objects are parsed by mirage's own
//! strict parser and validators, so an error names the JSON path of the
//! offending value exactly as the command line does; names in URLs are
//! checked as names (no path can be smuggled through one), and the API
//! reads and writes nothing but mirage's stores and sessions.

use crate::executions::{Info, Spec};
use crate::{State, ws};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State as St};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mirage_core::catalog::{Entry, Kind};
use mirage_core::ipc::{Channel, Reply, Request};
use mirage_core::session::{Liveness, SessionDir};
use mirage_core::{Agent, Overrides, Profile, Topology};
use mirage_host::manage;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "mirage",
        description = "mirage's REST and WebSocket API: profiles, topologies, agents, sessions, executions of emulated AMD GPU machines. Every request needs `Authorization: Bearer TOKEN` (WebSocket handshakes offer the subprotocols `mirage.v1` and `bearer.TOKEN`); the token is in the file `mirage serve --token-file` names."
    ),
    components(schemas(ApiError, Info, Listed, Validation, SessionInfo, StartSession, RunRequest, ExecRequestBody, Stored, Emulator)),
    security(("bearer" = [])),
    modifiers(&Bearer)
)]
struct ApiDoc;

struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let c = openapi.components.get_or_insert_with(Default::default);
        c.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Every documented route of the API.
pub fn router() -> OpenApiRouter<State> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(list_profiles, create_profile))
        .routes(routes!(get_profile, put_profile, delete_profile))
        .routes(routes!(export_profile))
        .routes(routes!(import_profile))
        .routes(routes!(validate_profile))
        .routes(routes!(list_topologies, create_topology))
        .routes(routes!(get_topology, put_topology, delete_topology))
        .routes(routes!(validate_topology))
        .routes(routes!(list_agents, create_agent))
        .routes(routes!(get_agent, delete_agent))
        .routes(routes!(emulators))
        .routes(routes!(list_sessions, start_session))
        .routes(routes!(get_session))
        .routes(routes!(stop_session))
        .routes(routes!(session_logs))
        .routes(routes!(list_executions, create_execution))
        .routes(routes!(get_execution, delete_execution))
        .routes(routes!(stop_execution))
        .routes(routes!(execution_output))
        .routes(routes!(run))
        .routes(routes!(ws::execution_stream))
        .routes(routes!(ws::session_metrics))
        .routes(routes!(ws::session_terminal))
}

/// An error: `error` is the whole message (it names the object and what
/// would fix it); `path` the JSON path of the offending value, when one is.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiError {
    #[serde(skip)]
    pub status: u16,
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, error: impl Into<String>) -> ApiError {
        ApiError {
            status: status.as_u16(),
            error: error.into(),
            path: None,
            message: None,
        }
    }
    pub fn bad(e: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, e)
    }
}

impl From<mirage_core::Error> for ApiError {
    fn from(e: mirage_core::Error) -> ApiError {
        let status = match &e {
            mirage_core::Error::NotFound { .. } => StatusCode::NOT_FOUND,
            mirage_core::Error::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        let (path, message) = match &e {
            mirage_core::Error::Invalid { path, message, .. } => {
                (Some(path.clone()), Some(message.clone()))
            }
            _ => (None, None),
        };
        ApiError {
            status: status.as_u16(),
            error: e.to_string(),
            path,
            message,
        }
    }
}

impl From<manage::ManageError> for ApiError {
    fn from(e: manage::ManageError) -> ApiError {
        let status = if e.0.starts_with("no session") {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::BAD_REQUEST
        };
        ApiError::new(status, e.0)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let s = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (s, Json(self)).into_response()
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// Runs blocking work (files, sockets, waits) off the async threads.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// Any `/api` path that is not a route.
pub async fn no_route() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"error": "no such route: GET /api/openapi.json lists them"})),
    )
        .into_response()
}

fn check_name(kind: &str, name: &str) -> ApiResult<()> {
    mirage_core::check_name(name).map_err(|m| ApiError::bad(format!("{kind} {m}")))
}

/// One stored object and where it comes from.
#[derive(Debug, Serialize, ToSchema)]
pub struct Listed {
    pub name: String,
    /// `builtin` or the file it is stored in.
    pub source: String,
    #[schema(value_type = Object)]
    pub object: Value,
}

/// A list of objects; `problems` are files of the store that do not parse
/// (each message names the file and the JSON path).
#[derive(Debug, Serialize, ToSchema)]
pub struct ListOf {
    pub items: Vec<Listed>,
    pub problems: Vec<String>,
}

/// Where an object was stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct Stored {
    pub name: String,
    pub file: String,
}

/// A validation's answer: `ok`, or the first problem with its JSON path.
#[derive(Debug, Serialize, ToSchema)]
pub struct Validation {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Validation {
    fn of(r: ApiResult<()>) -> Validation {
        match r {
            Ok(()) => Validation {
                ok: true,
                error: None,
                path: None,
                message: None,
            },
            Err(e) => Validation {
                ok: false,
                error: Some(e.error),
                path: e.path,
                message: e.message,
            },
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct Force {
    /// Replace an object of the same name.
    #[serde(default)]
    pub force: bool,
    /// Store under this name instead (import).
    #[serde(default)]
    pub name: Option<String>,
}

fn listed<T: Kind>(e: &Entry<T>) -> Listed {
    Listed {
        name: e.item.name().to_string(),
        source: e.source.to_string(),
        object: serde_json::to_value(&e.item).unwrap_or(Value::Null),
    }
}

fn list_of<T: Kind>(s: &State) -> ListOf {
    let (all, problems) = s.catalog.list::<T>();
    ListOf {
        items: all.iter().map(listed).collect(),
        problems: problems.iter().map(|p| p.to_string()).collect(),
    }
}

fn parse<T: Kind>(body: &[u8]) -> ApiResult<T> {
    let text = std::str::from_utf8(body).map_err(|_| ApiError::bad("the body is not UTF-8"))?;
    if let Ok(v) = serde_json::from_str::<Value>(text)
        && v.get("file").is_some()
        && v.get("name").is_none()
    {
        return Err(ApiError::bad(
            "the API takes the object itself, never a file path: send the file's contents",
        ));
    }
    Ok(mirage_core::model::parse_valid(T::KIND, text, T::validate)?)
}

fn store<T: Kind>(s: &State, t: &T, force: bool) -> ApiResult<(StatusCode, Json<Stored>)> {
    let f = s.catalog.put(t, force).map_err(|e| {
        let mut a = ApiError::from(e);
        if a.error.contains("exists") {
            a.status = StatusCode::CONFLICT.as_u16();
        }
        a
    })?;
    Ok((
        StatusCode::CREATED,
        Json(Stored {
            name: t.name().to_string(),
            file: f.display().to_string(),
        }),
    ))
}

fn replace<T: Kind>(s: &State, name: &str, body: &[u8]) -> ApiResult<(StatusCode, Json<Stored>)> {
    check_name(T::KIND, name)?;
    let t: T = parse(body)?;
    if t.name() != name {
        return Err(ApiError {
            status: 400,
            error: format!(
                "{} '{name}': name: is '{}' in the body; a rename is a new object (POST) and a delete",
                T::KIND,
                t.name()
            ),
            path: Some("name".into()),
            message: Some(format!("must be '{name}'")),
        });
    }
    store(s, &t, true)
}

fn get<T: Kind>(s: &State, name: &str) -> ApiResult<Listed> {
    check_name(T::KIND, name)?;
    Ok(listed(&s.catalog.get::<T>(name)?))
}

fn delete<T: Kind>(s: &State, name: &str) -> ApiResult<Json<Value>> {
    check_name(T::KIND, name)?;
    let f = s.catalog.delete::<T>(name)?;
    Ok(Json(json!({"deleted": name, "file": f})))
}

/// List the profiles (builtin and stored).
#[utoipa::path(get, path = "/api/profiles", tag = "profiles", responses((status = 200, body = ListOf)))]
async fn list_profiles(St(s): St<State>) -> ApiResult<Json<ListOf>> {
    blocking(move || Ok(Json(list_of::<Profile>(&s)))).await
}

/// Store a new profile (the body is the profile; `?force=true` replaces).
#[utoipa::path(post, path = "/api/profiles", tag = "profiles", params(Force), request_body(content = Object, content_type = "application/json"),
    responses((status = 201, body = Stored), (status = 400, body = ApiError), (status = 409, body = ApiError)))]
async fn create_profile(
    St(s): St<State>,
    Query(q): Query<Force>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Stored>)> {
    blocking(move || store(&s, &parse::<Profile>(&body)?, q.force)).await
}

/// Show a profile.
#[utoipa::path(get, path = "/api/profiles/{name}", tag = "profiles", params(("name" = String, Path)), responses((status = 200, body = Listed), (status = 404, body = ApiError)))]
async fn get_profile(St(s): St<State>, Path(name): Path<String>) -> ApiResult<Json<Listed>> {
    blocking(move || get::<Profile>(&s, &name).map(Json)).await
}

/// Replace a stored profile (the body's name must be the URL's).
#[utoipa::path(put, path = "/api/profiles/{name}", tag = "profiles", params(("name" = String, Path)), request_body(content = Object, content_type = "application/json"),
    responses((status = 201, body = Stored), (status = 400, body = ApiError)))]
async fn put_profile(
    St(s): St<State>,
    Path(name): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Stored>)> {
    blocking(move || replace::<Profile>(&s, &name, &body)).await
}

/// Delete a stored profile (builtins cannot be deleted).
#[utoipa::path(delete, path = "/api/profiles/{name}", tag = "profiles", params(("name" = String, Path)), responses((status = 200, body = Object), (status = 400, body = ApiError), (status = 404, body = ApiError)))]
async fn delete_profile(St(s): St<State>, Path(name): Path<String>) -> ApiResult<Json<Value>> {
    blocking(move || delete::<Profile>(&s, &name)).await
}

/// A profile self-contained (topology and agent inline), to import
/// elsewhere (`mirage profile import`).
#[utoipa::path(get, path = "/api/profiles/{name}/export", tag = "profiles", params(("name" = String, Path)), responses((status = 200, body = Object), (status = 404, body = ApiError)))]
async fn export_profile(St(s): St<State>, Path(name): Path<String>) -> ApiResult<Json<Value>> {
    blocking(move || {
        check_name("profile", &name)?;
        let r = s.catalog.resolve_name(&name)?;
        Ok(Json(
            serde_json::to_value(&r.profile).unwrap_or(Value::Null),
        ))
    })
    .await
}

/// Import a profile (an exported one: topology and agent inline are kept
/// inline); `?name=` stores it under another name.
#[utoipa::path(post, path = "/api/profiles/import", tag = "profiles", params(Force), request_body(content = Object, content_type = "application/json"),
    responses((status = 201, body = Stored), (status = 400, body = ApiError), (status = 409, body = ApiError)))]
async fn import_profile(
    St(s): St<State>,
    Query(q): Query<Force>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Stored>)> {
    blocking(move || {
        let mut p = parse::<Profile>(&body)?;
        if let Some(n) = q.name {
            check_name("profile", &n)?;
            p.name = n;
        }
        store(&s, &p, q.force)
    })
    .await
}

/// Check a profile without storing it: parsed strictly, validated, its
/// topology and agent resolved and its backend's checks run.
#[utoipa::path(post, path = "/api/profiles/validate", tag = "profiles", request_body(content = Object, content_type = "application/json"), responses((status = 200, body = Validation)))]
async fn validate_profile(St(s): St<State>, body: Bytes) -> Json<Validation> {
    let r = blocking(move || {
        let p = parse::<Profile>(&body)?;
        let r = s.catalog.resolve(&p)?;
        mirage_core::backend::check_profile(&r).map_err(|e| {
            let (path, message) = match &e {
                mirage_core::BackendError::Field { path, message } => {
                    (Some(path.clone()), Some(message.clone()))
                }
                _ => (None, None),
            };
            ApiError {
                status: 400,
                error: format!("profile '{}': {e}", p.name),
                path,
                message,
            }
        })?;
        Ok(())
    })
    .await;
    Json(Validation::of(r))
}

/// List the topologies.
#[utoipa::path(get, path = "/api/topologies", tag = "topologies", responses((status = 200, body = ListOf)))]
async fn list_topologies(St(s): St<State>) -> ApiResult<Json<ListOf>> {
    blocking(move || Ok(Json(list_of::<Topology>(&s)))).await
}

/// Store a new topology (`?force=true` replaces).
#[utoipa::path(post, path = "/api/topologies", tag = "topologies", params(Force), request_body(content = Object, content_type = "application/json"),
    responses((status = 201, body = Stored), (status = 400, body = ApiError), (status = 409, body = ApiError)))]
async fn create_topology(
    St(s): St<State>,
    Query(q): Query<Force>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Stored>)> {
    blocking(move || {
        let mut t = parse::<Topology>(&body)?;
        if let Some(n) = q.name {
            check_name("topology", &n)?;
            t.name = n;
        }
        s.catalog.resolve_topology(&t)?;
        store(&s, &t, q.force)
    })
    .await
}

/// Show a topology.
#[utoipa::path(get, path = "/api/topologies/{name}", tag = "topologies", params(("name" = String, Path)), responses((status = 200, body = Listed), (status = 404, body = ApiError)))]
async fn get_topology(St(s): St<State>, Path(name): Path<String>) -> ApiResult<Json<Listed>> {
    blocking(move || get::<Topology>(&s, &name).map(Json)).await
}

/// Replace a stored topology.
#[utoipa::path(put, path = "/api/topologies/{name}", tag = "topologies", params(("name" = String, Path)), request_body(content = Object, content_type = "application/json"),
    responses((status = 201, body = Stored), (status = 400, body = ApiError)))]
async fn put_topology(
    St(s): St<State>,
    Path(name): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Stored>)> {
    blocking(move || {
        let t = parse::<Topology>(&body)?;
        s.catalog.resolve_topology(&t)?;
        replace::<Topology>(&s, &name, &body)
    })
    .await
}

/// Delete a stored topology.
#[utoipa::path(delete, path = "/api/topologies/{name}", tag = "topologies", params(("name" = String, Path)), responses((status = 200, body = Object), (status = 400, body = ApiError), (status = 404, body = ApiError)))]
async fn delete_topology(St(s): St<State>, Path(name): Path<String>) -> ApiResult<Json<Value>> {
    blocking(move || delete::<Topology>(&s, &name)).await
}

/// Check a topology without storing it (the topology editor's check):
/// parsed strictly, validated, its agent resolved.
#[utoipa::path(post, path = "/api/topologies/validate", tag = "topologies", request_body(content = Object, content_type = "application/json"), responses((status = 200, body = Validation)))]
async fn validate_topology(St(s): St<State>, body: Bytes) -> Json<Validation> {
    let r = blocking(move || {
        let t = parse::<Topology>(&body)?;
        s.catalog.resolve_topology(&t).map_err(|e| ApiError {
            status: 400,
            error: e.to_string(),
            path: Some("agent".into()),
            message: Some(e.to_string()),
        })?;
        Ok(())
    })
    .await;
    Json(Validation::of(r))
}

/// List the agents (GPU models).
#[utoipa::path(get, path = "/api/agents", tag = "agents", responses((status = 200, body = ListOf)))]
async fn list_agents(St(s): St<State>) -> ApiResult<Json<ListOf>> {
    blocking(move || Ok(Json(list_of::<Agent>(&s)))).await
}

/// Store (import) an agent.
#[utoipa::path(post, path = "/api/agents", tag = "agents", params(Force), request_body(content = Object, content_type = "application/json"),
    responses((status = 201, body = Stored), (status = 400, body = ApiError), (status = 409, body = ApiError)))]
async fn create_agent(
    St(s): St<State>,
    Query(q): Query<Force>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Stored>)> {
    blocking(move || {
        let mut a = parse::<Agent>(&body)?;
        if let Some(n) = q.name {
            check_name("agent", &n)?;
            a.name = n;
        }
        store(&s, &a, q.force)
    })
    .await
}

/// Show an agent.
#[utoipa::path(get, path = "/api/agents/{name}", tag = "agents", params(("name" = String, Path)), responses((status = 200, body = Listed), (status = 404, body = ApiError)))]
async fn get_agent(St(s): St<State>, Path(name): Path<String>) -> ApiResult<Json<Listed>> {
    blocking(move || get::<Agent>(&s, &name).map(Json)).await
}

/// Delete a stored agent.
#[utoipa::path(delete, path = "/api/agents/{name}", tag = "agents", params(("name" = String, Path)), responses((status = 200, body = Object), (status = 400, body = ApiError), (status = 404, body = ApiError)))]
async fn delete_agent(St(s): St<State>, Path(name): Path<String>) -> ApiResult<Json<Value>> {
    blocking(move || delete::<Agent>(&s, &name)).await
}

/// An emulator backend and whether it can run here.
#[derive(Debug, Serialize, ToSchema)]
pub struct Emulator {
    pub kind: String,
    pub summary: String,
    #[schema(value_type = Object)]
    pub availability: Value,
}

/// The emulator backends (`mirage emulators`).
#[utoipa::path(get, path = "/api/emulators", tag = "emulators", responses((status = 200, body = Vec<Emulator>)))]
async fn emulators() -> ApiResult<Json<Vec<Emulator>>> {
    blocking(|| {
        Ok(Json(
            mirage_core::backend::all()
                .into_iter()
                .map(|b| Emulator {
                    kind: b.kind().into(),
                    summary: b.summary().into(),
                    availability: serde_json::to_value(b.availability()).unwrap_or(Value::Null),
                })
                .collect(),
        ))
    })
    .await
}

/// A session as listed: its state file (`mirage session show --json`), or
/// `alive: false` for one whose supervisor is gone.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionInfo {
    pub id: String,
    pub alive: bool,
    #[schema(value_type = Object)]
    pub state: Value,
    /// What runs (`null` when the supervisor did not answer in time).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub executions: Option<Value>,
}

/// List the sessions of this runtime directory (dead ones too: their
/// leftovers await a stop or `mirage cleanup`).
#[utoipa::path(get, path = "/api/sessions", tag = "sessions", responses((status = 200, body = Vec<SessionInfo>)))]
async fn list_sessions(St(s): St<State>) -> ApiResult<Json<Vec<SessionInfo>>> {
    blocking(move || {
        Ok(Json(
            mirage_core::session::scan(&s.paths.sessions())
                .into_iter()
                .map(|(d, l)| SessionInfo {
                    state: d
                        .read_state()
                        .ok()
                        .and_then(|st| serde_json::to_value(st).ok())
                        .unwrap_or_else(|| json!({"id": d.id, "status": "starting"})),
                    id: d.id,
                    alive: l == Liveness::Alive,
                    executions: None,
                })
                .collect(),
        ))
    })
    .await
}

/// A control connection that gives up after `secs` on a silent
/// supervisor (the API never waits on a stuck session).
pub fn connect(d: &SessionDir, secs: u64) -> ApiResult<Channel> {
    let ch = Channel::connect(&d.socket()).map_err(|e| {
        ApiError::new(
            StatusCode::CONFLICT,
            format!("session {}: cannot reach its supervisor: {e}", d.id),
        )
    })?;
    let tv = libc::timeval {
        tv_sec: secs as libc::time_t,
        tv_usec: 0,
    };
    for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: setsockopt reads one timeval from the pointer given with
        // its size, on a socket this process owns.
        unsafe {
            libc::setsockopt(
                ch.raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&raw const tv).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            );
        }
    }
    Ok(ch)
}

/// Show a session: its state, and what runs if the supervisor answers
/// within 2 s.
#[utoipa::path(get, path = "/api/sessions/{id}", tag = "sessions", params(("id" = String, Path)), responses((status = 200, body = SessionInfo), (status = 404, body = ApiError)))]
async fn get_session(St(s): St<State>, Path(id): Path<String>) -> ApiResult<Json<SessionInfo>> {
    blocking(move || {
        let d = manage::find(&s.paths, &id)?;
        let alive = d.liveness() == Liveness::Alive;
        let mut state = d
            .read_state()
            .ok()
            .and_then(|st| serde_json::to_value(st).ok())
            .unwrap_or_else(|| json!({"id": d.id, "status": "starting"}));
        state["dir"] = json!(d.dir);
        let executions = if alive {
            connect(&d, 2).ok().and_then(|ch| {
                ch.send(&Request::Status, &[]).ok()?;
                match ch.recv::<Reply>().ok()?? {
                    (Reply::Status { executions }, _) => serde_json::to_value(executions).ok(),
                    _ => None,
                }
            })
        } else {
            None
        };
        Ok(Json(SessionInfo {
            id: d.id,
            alive,
            state,
            executions,
        }))
    })
    .await
}

/// What `POST /api/sessions` boots: a profile and the overrides of
/// `mirage session start`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartSession {
    pub profile: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub num_nodes: Option<u32>,
    #[serde(default)]
    pub gpus_per_node: Option<u32>,
    #[serde(default)]
    pub backend: Option<String>,
    /// Variables of every execution.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
}

impl StartSession {
    fn overrides(&self) -> ApiResult<Overrides> {
        let mut env = vec![];
        for (k, v) in &self.env {
            env.push(mirage_core::model::parse_env(&format!("{k}={v}")).map_err(ApiError::bad)?);
        }
        Ok(Overrides {
            num_nodes: self.num_nodes,
            gpus_per_node: self.gpus_per_node,
            backend: self.backend.clone(),
            env,
            ..Default::default()
        })
    }
}

fn json_body<T: serde::de::DeserializeOwned>(what: &str, body: &[u8]) -> ApiResult<T> {
    let text = std::str::from_utf8(body).map_err(|_| ApiError::bad("the body is not UTF-8"))?;
    Ok(mirage_core::model::parse(what, text)?)
}

fn start(s: &State, req: &StartSession) -> ApiResult<SessionDir> {
    check_name("profile", &req.profile)?;
    let r = manage::resolve(&s.catalog, &req.profile, &req.overrides()?)?;
    Ok(manage::start_detached(manage::Start {
        paths: &s.paths,
        resolved: &r,
        id: req.id.clone(),
        cwd: s.cwd.clone(),
        exe: s.exe.clone(),
        verbose: 0,
    })?)
}

/// Boot a session (`mirage session start`); answers when it runs.
#[utoipa::path(post, path = "/api/sessions", tag = "sessions", request_body = StartSession, responses((status = 201, body = Object), (status = 400, body = ApiError)))]
async fn start_session(St(s): St<State>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    blocking(move || {
        let req: StartSession = json_body("session request", &body)?;
        let d = start(&s, &req)?;
        Ok((StatusCode::CREATED, Json(json!({"id": d.id, "dir": d.dir}))))
    })
    .await
}

/// Stop a session: every process and container it started ends (a dead
/// session's leftovers are removed).
#[utoipa::path(post, path = "/api/sessions/{id}/stop", tag = "sessions", params(("id" = String, Path)), responses((status = 200, body = Object), (status = 404, body = ApiError)))]
async fn stop_session(St(s): St<State>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    blocking(move || {
        let d = manage::find(&s.paths, &id)?;
        Ok(Json(match manage::stop(&d) {
            manage::Stopped::Stopped => json!({"id": id, "stopped": true}),
            manage::Stopped::Cleaned(r) => json!({"id": id, "stopped": false, "cleaned": r}),
        }))
    })
    .await
}

/// The supervisor's log (its last 256 KiB).
#[utoipa::path(get, path = "/api/sessions/{id}/logs", tag = "sessions", params(("id" = String, Path)), responses((status = 200, body = String, content_type = "text/plain"), (status = 404, body = ApiError)))]
async fn session_logs(St(s): St<State>, Path(id): Path<String>) -> ApiResult<String> {
    blocking(move || {
        let d = manage::find(&s.paths, &id)?;
        let b = std::fs::read(d.log_file()).unwrap_or_default();
        let from = b.len().saturating_sub(256 << 10);
        Ok(String::from_utf8_lossy(&b[from..]).into_owned())
    })
    .await
}

/// What `POST /api/executions` runs.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecRequestBody {
    pub session: String,
    pub argv: Vec<String>,
    #[serde(default)]
    pub node: Option<u32>,
    /// Ranks on every node instead of one process.
    #[serde(default)]
    pub nproc_per_node: Option<u32>,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
}

fn env_list(env: &std::collections::BTreeMap<String, String>) -> ApiResult<Vec<(String, String)>> {
    env.iter()
        .map(|(k, v)| mirage_core::model::parse_env(&format!("{k}={v}")).map_err(ApiError::bad))
        .collect()
}

/// List the executions this server started.
#[utoipa::path(get, path = "/api/executions", tag = "executions", responses((status = 200, body = Vec<Info>)))]
async fn list_executions(St(s): St<State>) -> Json<Vec<Info>> {
    Json(s.executions.list().iter().map(|e| e.info()).collect())
}

/// Run a command in a running session (`mirage exec`); its output is
/// kept and streamed (`/api/executions/{id}/stream`).
#[utoipa::path(post, path = "/api/executions", tag = "executions", request_body = ExecRequestBody, responses((status = 201, body = Info), (status = 400, body = ApiError), (status = 404, body = ApiError)))]
async fn create_execution(St(s): St<State>, body: Bytes) -> ApiResult<(StatusCode, Json<Info>)> {
    blocking(move || {
        let req: ExecRequestBody = json_body("execution request", &body)?;
        if req.argv.is_empty() {
            return Err(ApiError::bad("argv: name the command to run"));
        }
        let d = manage::find(&s.paths, &req.session)?;
        manage::require_alive(&d)?;
        let e = s.executions.start(
            &d,
            Spec {
                argv: req.argv,
                node: req.node,
                nproc_per_node: req.nproc_per_node,
                env: env_list(&req.env)?,
                client_env: s.client_env.clone(),
                cwd: s.cwd.clone(),
                ephemeral: false,
            },
            |_| {},
        );
        Ok((StatusCode::CREATED, Json(e.info())))
    })
    .await
}

fn execution(s: &State, id: &str) -> ApiResult<std::sync::Arc<crate::executions::Execution>> {
    s.executions
        .get(id)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("no execution '{id}'")))
}

/// Show an execution.
#[utoipa::path(get, path = "/api/executions/{id}", tag = "executions", params(("id" = String, Path)), responses((status = 200, body = Info), (status = 404, body = ApiError)))]
async fn get_execution(St(s): St<State>, Path(id): Path<String>) -> ApiResult<Json<Info>> {
    Ok(Json(execution(&s, &id)?.info()))
}

/// Remove a finished execution's record.
#[utoipa::path(delete, path = "/api/executions/{id}", tag = "executions", params(("id" = String, Path)), responses((status = 200, body = Object), (status = 404, body = ApiError), (status = 409, body = ApiError)))]
async fn delete_execution(St(s): St<State>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    match s.executions.remove(&id) {
        Ok(()) => Ok(Json(json!({"deleted": id}))),
        Err("running") => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("execution '{id}' still runs: stop it first"),
        )),
        Err(_) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no execution '{id}'"),
        )),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct SignalQuery {
    /// The signal number (default 15, SIGTERM).
    #[serde(default)]
    pub signal: Option<i32>,
}

/// Signal a running execution (default SIGTERM).
#[utoipa::path(post, path = "/api/executions/{id}/stop", tag = "executions", params(("id" = String, Path), SignalQuery), responses((status = 200, body = Object), (status = 404, body = ApiError), (status = 409, body = ApiError)))]
async fn stop_execution(
    St(s): St<State>,
    Path(id): Path<String>,
    Query(q): Query<SignalQuery>,
) -> ApiResult<Json<Value>> {
    let e = execution(&s, &id)?;
    let sig = q.signal.unwrap_or(libc::SIGTERM);
    if !(1..=64).contains(&sig) {
        return Err(ApiError::bad(format!(
            "signal {sig} is not a signal number (1 to 64)"
        )));
    }
    if !e.is_running() || !e.signal(sig) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("execution '{id}' is not running"),
        ));
    }
    Ok(Json(json!({"id": id, "signal": sig})))
}

/// An execution's output so far (its last 4 MiB).
#[utoipa::path(get, path = "/api/executions/{id}/output", tag = "executions", params(("id" = String, Path)), responses((status = 200, body = String, content_type = "text/plain"), (status = 404, body = ApiError)))]
async fn execution_output(St(s): St<State>, Path(id): Path<String>) -> ApiResult<String> {
    Ok(String::from_utf8_lossy(&execution(&s, &id)?.output()).into_owned())
}

/// What `POST /api/run` runs: a session of its own for one command.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    #[serde(flatten)]
    pub session: StartSession,
    pub argv: Vec<String>,
    #[serde(default)]
    pub nproc_per_node: Option<u32>,
}

/// Boot a session, run a command on it (ranks on every node), stop it when
/// the command ends (`mirage run`).
#[utoipa::path(post, path = "/api/run", tag = "executions", request_body = RunRequest, responses((status = 201, body = Info), (status = 400, body = ApiError)))]
async fn run(St(s): St<State>, body: Bytes) -> ApiResult<(StatusCode, Json<Info>)> {
    blocking(move || {
        let text =
            std::str::from_utf8(&body).map_err(|_| ApiError::bad("the body is not UTF-8"))?;
        let req: RunRequest =
            serde_json::from_str(text).map_err(|e| ApiError::bad(format!("run request: {e}")))?;
        if req.argv.is_empty() {
            return Err(ApiError::bad("argv: name the command to run"));
        }
        let d = start(&s, &req.session)?;
        let dir = d.clone();
        let e = s.executions.start(
            &d,
            Spec {
                argv: req.argv,
                node: None,
                nproc_per_node: Some(req.nproc_per_node.unwrap_or(1)),
                env: vec![],
                client_env: s.client_env.clone(),
                cwd: s.cwd.clone(),
                ephemeral: true,
            },
            move |_| {
                manage::stop(&dir);
            },
        );
        Ok((StatusCode::CREATED, Json(e.info())))
    })
    .await
}
