//! State files are written atomically: a temporary file beside the target,
//! flushed to disk, then renamed over it, so a reader sees the old or the
//! new content and never a torn one, whenever the writer dies.

use std::io::Write;
use std::path::Path;

/// Writes `data` to `path` atomically (same directory temporary, fsync, rename).
pub fn write(path: &Path, data: &[u8]) -> crate::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(crate::Error::io(path, e));
    }
    Ok(())
}

/// Writes a value as pretty JSON (with a final newline), atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> crate::Result<()> {
    let mut text = serde_json::to_vec_pretty(value)
        .map_err(|e| crate::Error::Other(format!("{}: {e}", path.display())))?;
    text.push(b'\n');
    write(path, &text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("mirage-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("state.json");
        super::write(&p, b"one").unwrap();
        super::write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state.json")]);
        assert!(
            super::write(&dir.join("missing/x"), b"x")
                .unwrap_err()
                .to_string()
                .contains("missing/x")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
