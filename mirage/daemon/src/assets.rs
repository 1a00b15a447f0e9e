//! The dashboard: the files Vite built into `mirage/dashboard/web/dist`,
//! embedded at build time (`rust-embed`). The Rust build does not need
//! npm: without a build the page says how to make one (`make dashboard`).
//!
//! The page (`/`, `/index.html`) is served only with the token in its
//! URL (`?token=`, as `mirage serve` prints it; the page keeps it and
//! sends it with every API request); the scripts and styles under
//! `/assets/` hold no data and are served to anyone who asks, as a
//! browser loads them without the token.

use crate::State;
use axum::extract::{Path, Query, State as AxState};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::collections::HashMap;

#[derive(rust_embed::Embed)]
#[folder = "../dashboard/web/dist/"]
#[allow_missing = true]
struct Dist;

const FALLBACK: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>mirage</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>mirage</h1>
<p>The API is up, but this <code>mirage</code> binary was built without the dashboard
(its build needs Node.js and npm).</p>
<p>Build it with <code>make dashboard</code> (<code>npm ci &amp;&amp; npm run build</code> in
<code>mirage/dashboard/web</code>), then rebuild mirage (<code>cargo build --release -p mirage-ctl</code>).</p>
<p>The API's description is at <code>/api/openapi.json</code> (it needs the token too).</p>
</body></html>"#;

/// Whether the dashboard was built into this binary.
pub fn embedded() -> bool {
    Dist::get("index.html").is_some()
}

pub fn router(state: State) -> axum::Router<State> {
    axum::Router::new()
        .route("/", axum::routing::get(index))
        .route("/index.html", axum::routing::get(index))
        .route("/assets/{*file}", axum::routing::get(asset))
        .with_state(state)
}

async fn index(AxState(s): AxState<State>, Query(q): Query<HashMap<String, String>>) -> Response {
    let ok = q.get("token").is_some_and(|t| {
        t.len() == s.token.len()
            && t.bytes()
                .zip(s.token.bytes())
                .fold(0u8, |a, (x, y)| a | (x ^ y))
                == 0
    });
    if !ok {
        return (
            StatusCode::UNAUTHORIZED,
            Html("<!doctype html><title>mirage</title><p>Open the URL <code>mirage serve</code> printed (it carries <code>?token=</code>).</p>"),
        )
            .into_response();
    }
    let page = match Dist::get("index.html") {
        Some(f) => Html(f.data.into_owned()).into_response(),
        None => Html(FALLBACK).into_response(),
    };
    ([(header::CACHE_CONTROL, "no-store")], page).into_response()
}

async fn asset(Path(file): Path<String>) -> Response {
    match Dist::get(&format!("assets/{file}")) {
        Some(f) => (
            [
                (header::CONTENT_TYPE, f.metadata.mimetype().to_string()),
                (
                    header::CACHE_CONTROL,
                    "public, max-age=31536000, immutable".to_string(),
                ),
            ],
            f.data.into_owned(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
