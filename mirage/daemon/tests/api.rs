//! The API through the application's router (no socket): the token, the
//! OpenAPI document against the routes, the stores with mirage's own
//! errors, names that are not names, closed CORS.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
// Linked for its inventory registration: the profile tests validate its options.
use mirage_backend_rocjitsu as _;
use mirage_daemon::{AppState, State, app};
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn state(tag: &str) -> State {
    let root = std::env::temp_dir().join(format!("mirage-api-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let paths = mirage_core::Paths {
        home: root.join("home"),
        runtime: root.join("rt"),
    };
    let catalog = mirage_core::Catalog::new(paths.home.clone(), mirage_builtin::builtins());
    Arc::new(AppState {
        paths,
        catalog,
        token: TOKEN.into(),
        exe: "/nonexistent/mirage".into(),
        cwd: None,
        client_env: vec![],
        executions: Default::default(),
    })
}

async fn call(
    s: &State,
    method: &str,
    uri: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> (StatusCode, Value, axum::http::HeaderMap) {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        b = b.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let req = match body {
        Some(v) => b
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(v.to_string()))
            .unwrap(),
        None => b.body(Body::empty()).unwrap(),
    };
    let r = app(s.clone()).oneshot(req).await.unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    let v = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    (status, v, headers)
}

#[tokio::test]
async fn every_request_needs_the_token() {
    let s = state("token");
    for (m, uri) in [
        ("GET", "/api/profiles"),
        ("GET", "/api/openapi.json"),
        ("POST", "/api/sessions"),
        ("GET", "/api/nothing-here"),
    ] {
        for t in [None, Some("wrong"), Some(&TOKEN[1..])] {
            let (st, body, _) = call(&s, m, uri, None, t).await;
            assert_eq!(st, StatusCode::UNAUTHORIZED, "{m} {uri} {t:?}");
            assert_eq!(body, Value::Null, "401 says nothing: {body}");
        }
    }
    let (st, _, _) = call(&s, "GET", "/", None, None).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, _, _) = call(&s, "GET", &format!("/?token={TOKEN}"), None, None).await;
    assert_eq!(st, StatusCode::OK);
    let (st, v, _) = call(&s, "GET", "/api/profiles", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::OK);
    assert!(
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "mi300x"),
        "{v}"
    );
}

#[tokio::test]
async fn every_route_is_in_the_openapi_document() {
    let s = state("openapi");
    let (st, doc, _) = call(&s, "GET", "/api/openapi.json", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::OK);
    let paths = doc["paths"].as_object().unwrap();
    // What the dashboard and the README use, each documented.
    for p in [
        "/api/profiles",
        "/api/profiles/{name}",
        "/api/profiles/{name}/export",
        "/api/profiles/import",
        "/api/profiles/validate",
        "/api/topologies",
        "/api/topologies/{name}",
        "/api/topologies/validate",
        "/api/agents",
        "/api/agents/{name}",
        "/api/emulators",
        "/api/sessions",
        "/api/sessions/{id}",
        "/api/sessions/{id}/stop",
        "/api/sessions/{id}/logs",
        "/api/sessions/{id}/metrics",
        "/api/sessions/{id}/terminal",
        "/api/executions",
        "/api/executions/{id}",
        "/api/executions/{id}/stop",
        "/api/executions/{id}/output",
        "/api/executions/{id}/stream",
        "/api/run",
    ] {
        assert!(paths.contains_key(p), "{p} is not in the OpenAPI document");
    }
    // Every documented operation is served (a route that is not answers the
    // catch-all's "no such route").
    let mut n = 0;
    for (p, ops) in paths {
        for m in ops.as_object().unwrap().keys() {
            let uri = p.replace("{name}", "mi300x").replace("{id}", "nosuch");
            let body = (m != "get" && m != "delete").then(|| json!({}));
            let (_, v, _) = call(&s, &m.to_uppercase(), &uri, body, Some(TOKEN)).await;
            assert!(
                !v.to_string().contains("no such route"),
                "{m} {p} is documented but not served: {v}"
            );
            n += 1;
        }
    }
    assert!(n >= 28, "{n} operations");
    let (st, v, _) = call(&s, "GET", "/api/profilez", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(v["error"].as_str().unwrap().contains("no such route"));
}

#[tokio::test]
async fn stores_answer_with_mirage_errors() {
    let s = state("stores");
    let t = json!({"name": "two", "agent": "MI300X", "nodes": 1, "gpus_per_node": 2, "gpu_link": "xgmi"});
    let (st, v, _) = call(&s, "POST", "/api/topologies", Some(t.clone()), Some(TOKEN)).await;
    assert_eq!(st, StatusCode::CREATED, "{v}");
    let (st, _, _) = call(&s, "POST", "/api/topologies", Some(t.clone()), Some(TOKEN)).await;
    assert_eq!(st, StatusCode::CONFLICT);
    // The validator's path, as the editor shows it next to the field.
    let mut bad = t.clone();
    bad["gpus_per_node"] = 17.into();
    let (_, v, _) = call(
        &s,
        "POST",
        "/api/topologies/validate",
        Some(bad),
        Some(TOKEN),
    )
    .await;
    assert_eq!(v["ok"], false);
    assert_eq!(v["path"], "gpus_per_node");
    assert!(v["message"].as_str().unwrap().contains("1 to 16"), "{v}");
    let mut bad = t.clone();
    bad["colour"] = "red".into();
    let (st, v, _) = call(&s, "POST", "/api/topologies", Some(bad), Some(TOKEN)).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(v["path"], "colour", "{v}");
    let mut bad = t.clone();
    bad["agent"] = "MI999".into();
    let (_, v, _) = call(
        &s,
        "POST",
        "/api/topologies/validate",
        Some(bad),
        Some(TOKEN),
    )
    .await;
    assert_eq!(v["path"], "agent");
    // A profile on it, its export self-contained, and a bad profile's path.
    let p = json!({"name": "mine", "backend": {"kind": "noop"}, "topology": "two"});
    let (st, v, _) = call(&s, "POST", "/api/profiles", Some(p), Some(TOKEN)).await;
    assert_eq!(st, StatusCode::CREATED, "{v}");
    let (_, v, _) = call(&s, "GET", "/api/profiles/mine/export", None, Some(TOKEN)).await;
    assert_eq!(v["topology"]["agent"]["name"], "MI300X", "{v}");
    let bad = json!({"name": "p2", "backend": {"kind": "rocjitsu", "options": {"thread": 2}}, "topology": "two"});
    let (_, v, _) = call(&s, "POST", "/api/profiles/validate", Some(bad), Some(TOKEN)).await;
    assert_eq!(v["path"], "backend.options.thread", "{v}");
    let (st, _, _) = call(&s, "DELETE", "/api/profiles/mi300x", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "builtins stay");
    let (st, _, _) = call(&s, "DELETE", "/api/profiles/mine", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::OK);
    let (st, _, _) = call(&s, "GET", "/api/profiles/mine", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn paths_outside_the_stores_are_refused() {
    let s = state("paths");
    for uri in [
        "/api/profiles/..%2F..%2Fetc%2Fpasswd",
        "/api/topologies/.hidden",
        "/api/sessions/..%2Fx",
    ] {
        let (st, v, _) = call(&s, "GET", uri, None, Some(TOKEN)).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{uri}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains("not a valid name"),
            "{uri}: {v}"
        );
    }
    let (st, v, _) = call(
        &s,
        "POST",
        "/api/profiles/import",
        Some(json!({"file": "/etc/passwd"})),
        Some(TOKEN),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        v["error"].as_str().unwrap().contains("never a file path"),
        "{v}"
    );
    let (st, _, _) = call(
        &s,
        "GET",
        &format!("/assets/..%2F..%2FCargo.toml?token={TOKEN}"),
        None,
        None,
    )
    .await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    // A profile whose name would be a path is refused by name.
    let p = json!({"name": "../x", "backend": {"kind": "noop"}, "topology": "mi300x"});
    let (st, v, _) = call(&s, "POST", "/api/profiles", Some(p), Some(TOKEN)).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(v["path"], "name");
}

#[tokio::test]
async fn cors_stays_closed() {
    let s = state("cors");
    let req = Request::builder()
        .method("OPTIONS")
        .uri("/api/profiles")
        .header(header::ORIGIN, "http://evil.example")
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "GET")
        .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "authorization")
        .body(Body::empty())
        .unwrap();
    let r = app(s.clone()).oneshot(req).await.unwrap();
    assert!(
        r.headers()
            .get(header::ACCESS_CONTROL_ALLOW_ORIGIN)
            .is_none()
    );
    let (_, _, h) = call(&s, "GET", "/api/profiles", None, Some(TOKEN)).await;
    assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    assert_eq!(h.get(header::X_CONTENT_TYPE_OPTIONS).unwrap(), "nosniff");
}

#[tokio::test]
async fn executions_and_sessions_that_do_not_exist() {
    let s = state("missing");
    let (st, _, _) = call(&s, "GET", "/api/executions/e99", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, v, _) = call(&s, "GET", "/api/sessions/abc", None, Some(TOKEN)).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{v}");
    let (st, v, _) = call(
        &s,
        "POST",
        "/api/executions",
        Some(json!({"session": "abc", "argv": ["true"]})),
        Some(TOKEN),
    )
    .await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{v}");
    let (st, v, _) = call(
        &s,
        "POST",
        "/api/sessions",
        Some(json!({"profile": "mi300x", "gpus": 2})),
        Some(TOKEN),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(v["path"], "gpus", "{v}");
}
