//! The token: 32 random bytes in hex, new at every start, written with
//! mode 0600 into a private directory (owned by the user, writable by
//! nobody else; [`rocjitsu_rpc::dir::PrivateDir`] checks it as it checks
//! the runtime directory), and required on every API request.

use crate::{ServeError, State};
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rocjitsu_rpc::dir::PrivateDir;
use std::path::Path;

/// The WebSocket subprotocol a page selects; it offers the token beside it
/// as `bearer.TOKEN` (browsers cannot give a handshake an Authorization
/// header).
pub const WS_PROTOCOL: &str = "mirage.v1";
const WS_TOKEN_PREFIX: &str = "bearer.";

/// A fresh token from the kernel's random pool.
pub fn new_token() -> String {
    let mut b = [0u8; 32];
    let mut filled = 0;
    while filled < b.len() {
        // SAFETY: getrandom writes at most the given length into `b`.
        let n = unsafe { libc::getrandom(b[filled..].as_mut_ptr().cast(), b.len() - filled, 0) };
        if n > 0 {
            filled += n as usize;
        } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // Without entropy there is no safe token: refuse to go on.
            panic!("getrandom failed: {}", std::io::Error::last_os_error());
        }
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Writes `token` to `file` (mode 0600, replaced atomically, never through
/// a symbolic link); its directory must be private to the user.
pub fn write_token_file(file: &Path, token: &str) -> Result<(), ServeError> {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(ServeError::Token(format!(
            "--token-file {}: name a file in a directory",
            file.display()
        )));
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Ok(m) = std::fs::symlink_metadata(dir) {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: getuid has no preconditions.
        let me = unsafe { libc::getuid() };
        let why = if !m.is_dir() {
            Some("it is not a directory".to_string())
        } else if m.uid() != me {
            Some(format!("it belongs to uid {}", m.uid()))
        } else if m.mode() & 0o022 != 0 {
            Some("others can write to it".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            return Err(ServeError::Token(format!(
                "--token-file {}: its directory {} is not private ({why}): name a file in a directory you own that only you can write to (the default is $MIRAGE_RUNTIME_DIR/serve.token)",
                file.display(),
                dir.display()
            )));
        }
    }
    let d = PrivateDir::ensure(dir, "--token-file")
        .map_err(|e| ServeError::Token(format!("--token-file {}: {e}", file.display())))?;
    d.replace_file(
        &name.to_string_lossy(),
        format!("{token}\n").as_bytes(),
        0o600,
    )
    .map_err(|e| ServeError::Token(format!("--token-file {}: {e}", file.display())))
}

/// Compares without an early exit, so timing tells nothing of the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether a request carries the token: the Authorization header, or for
/// a WebSocket handshake the `bearer.TOKEN` subprotocol.
pub fn authorized(req: &Request, token: &str) -> bool {
    let h = req.headers();
    if let Some(v) = h.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())
        && let Some(t) = v.strip_prefix("Bearer ")
    {
        return same(t.trim().as_bytes(), token.as_bytes());
    }
    let upgrade = h
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if upgrade
        && let Some(p) = h
            .get(header::SEC_WEBSOCKET_PROTOCOL)
            .and_then(|v| v.to_str().ok())
    {
        return p
            .split(',')
            .map(str::trim)
            .filter_map(|p| p.strip_prefix(WS_TOKEN_PREFIX))
            .any(|t| same(t.as_bytes(), token.as_bytes()));
    }
    false
}

/// The middleware in front of `/api`: 401 with an empty body without the
/// token.
pub async fn require_token(
    axum::extract::State(state): axum::extract::State<State>,
    req: Request,
    next: Next,
) -> Response {
    if authorized(&req, &state.token) {
        next.run(req).await
    } else {
        StatusCode::UNAUTHORIZED.into_response()
    }
}
