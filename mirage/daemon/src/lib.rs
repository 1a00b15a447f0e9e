//! `mirage serve`: an HTTP server (axum on tokio) over the same stores
//! and session code as the `mirage` commands, for the dashboard and for
//! scripts.
//!
//! - REST under `/api`: profiles, topologies, agents, sessions,
//!   executions, emulators ([`api`]); its OpenAPI document at
//!   `/api/openapi.json` is generated from the handlers (utoipa), so a
//!   route cannot be served without being described.
//! - WebSockets: an execution's output, a session's live metrics, a
//!   terminal into a session ([`ws`]).
//! - The dashboard, built by Vite and embedded at build time ([`assets`]).
//!
//! Access: the server listens on loopback unless told otherwise, and
//! every API request must carry the token (`Authorization: Bearer T`;
//! WebSocket handshakes, which browsers cannot give headers, offer it as
//! the subprotocol `bearer.T`), else it is answered 401 with an empty
//! body. No CORS header is ever sent, so other origins cannot read
//! answers. Blocking work (files, control sockets, process waits) runs on
//! tokio's blocking pool under timeouts: a slow or stopped session never
//! holds up another request.

pub mod api;
pub mod assets;
pub mod auth;
pub mod executions;
pub mod ws;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// An error of the server's set-up, naming what would fix it.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Token(String),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

/// What the handlers share.
pub struct AppState {
    pub paths: mirage_core::Paths,
    pub catalog: mirage_core::Catalog,
    pub token: String,
    /// The `mirage` binary (sessions are started with its `supervise`).
    pub exe: PathBuf,
    /// Where executions start (the server's working directory).
    pub cwd: Option<PathBuf>,
    /// The server's environment: the base of executions on the host, as a
    /// command's is for `mirage exec`.
    pub client_env: Vec<(String, String)>,
    pub executions: executions::Executions,
}

pub type State = Arc<AppState>;

/// How to serve.
pub struct Options {
    pub listen: SocketAddr,
    /// Where the token is written (0600); a random one each start.
    pub token_file: PathBuf,
    pub exe: PathBuf,
}

/// The whole application: API, WebSockets, dashboard, behind the token.
pub fn app(state: State) -> axum::Router {
    let (router, openapi) = api::router().split_for_parts();
    let openapi = Arc::new(openapi);
    let doc = axum::routing::get(move || {
        let d = openapi.clone();
        async move { axum::Json((*d).clone()) }
    });
    router
        .route("/api/openapi.json", doc)
        .route("/api/{*rest}", axum::routing::any(api::no_route))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
        .merge(assets::router(state.clone()))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(4 << 20))
        .layer(tower_http::set_header::SetResponseHeaderLayer::overriding(
            axum::http::header::X_CONTENT_TYPE_OPTIONS,
            axum::http::HeaderValue::from_static("nosniff"),
        ))
        .layer(tower_http::set_header::SetResponseHeaderLayer::overriding(
            axum::http::header::REFERRER_POLICY,
            axum::http::HeaderValue::from_static("no-referrer"),
        ))
        .with_state(state)
}

/// The state of a server over the environment's stores.
pub fn state(token: String, exe: PathBuf) -> Result<State, ServeError> {
    let paths = mirage_core::Paths::from_env().map_err(|e| ServeError::Other(e.to_string()))?;
    paths
        .check_runtime()
        .map_err(|e| ServeError::Other(e.to_string()))?;
    let catalog = mirage_core::Catalog::new(paths.home.clone(), mirage_builtin::builtins());
    Ok(Arc::new(AppState {
        paths,
        catalog,
        token,
        exe,
        cwd: std::env::current_dir().ok(),
        client_env: std::env::vars().collect(),
        executions: executions::Executions::default(),
    }))
}

/// Serves until SIGINT or SIGTERM; `ready` gets the URL to open (it
/// carries the token).
pub fn serve(o: Options, ready: impl FnOnce(&str)) -> Result<(), ServeError> {
    let token = auth::new_token();
    auth::write_token_file(&o.token_file, &token)?;
    let state = state(token.clone(), o.exe)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .max_blocking_threads(64)
        .build()
        .map_err(|e| ServeError::Other(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(o.listen)
            .await
            .map_err(|source| ServeError::Listen {
                addr: o.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Listen {
            addr: o.listen,
            source,
        })?;
        let host = if addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else if addr.is_ipv6() {
            format!("[{}]", addr.ip())
        } else {
            addr.ip().to_string()
        };
        ready(&format!("http://{host}:{}/?token={token}", addr.port()));
        let executions = state.clone();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| ServeError::Other(format!("cannot handle SIGTERM: {e}")))?;
        // Open WebSockets would hold a graceful shutdown forever: on a
        // signal the server just stops, and the executions it started end.
        tokio::select! {
            r = axum::serve(listener, app(state)) => r.map_err(|e| ServeError::Other(e.to_string()))?,
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        executions.executions.end_all();
        Ok::<(), ServeError>(())
    })?;
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    let _ = std::fs::remove_file(&o.token_file);
    Ok(())
}
