//! Private runtime directories: the one place rocjitsu and mirage create,
//! check and write their per-user directories (`/tmp/rocjitsu-<uid>`,
//! `/tmp/mirage-<uid>`, or what `ROCJITSU_RUNTIME_DIR` /
//! `MIRAGE_RUNTIME_DIR` name).
//!
//! Such a directory holds what a program is made to run (`bin/lsmod`,
//! first on its PATH) and read (the KFD sysfs tree), so a directory another
//! user made first, or could write to, would let that user run code as the
//! victim. [`PrivateDir::ensure`] creates a missing directory with mode
//! 0700 and accepts an existing one only when it is a real directory (not a
//! symbolic link, which is never followed: `O_NOFOLLOW`) owned by the
//! caller's effective uid, with neither group nor other write permission.
//! It never changes the mode of a directory it did not create. The checked
//! directory stays open, and everything written directly inside it goes
//! through that descriptor (`mkdirat`, `openat` with `O_NOFOLLOW` and
//! `O_EXCL`, `renameat`), so a symbolic link in it is never followed either.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A directory checked to be the caller's alone, held open.
#[derive(Debug)]
pub struct PrivateDir {
    fd: OwnedFd,
    path: PathBuf,
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} contains a NUL byte", p.display()),
        )
    })
}

/// One path component (no `/`, not `.` or `..`): the only names the `*at`
/// methods take, so nothing escapes the directory.
fn name_cstr(name: &str) -> io::Result<CString> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        ));
    }
    Ok(CString::new(name).expect("checked for NUL"))
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: a zeroed `stat` is a valid value for fstat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes one `stat` into `st`.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// What is wrong with a directory, or `None` when it is private enough:
/// owned by the caller, not writable by group or others.
fn problem(st: &libc::stat) -> Option<String> {
    let me = euid();
    if st.st_uid != me {
        return Some(format!(
            "it is owned by uid {}, not by you (uid {me})",
            st.st_uid
        ));
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o022 != 0 {
        return Some(format!(
            "its mode {mode:04o} lets others write to it (it must not be group- or other-writable)"
        ));
    }
    None
}

/// Opens `at`/`name` (or the path `name` when `at` is `AT_FDCWD`) as a
/// directory without following a symbolic link in its last component.
fn open_dir_nofollow(at: RawFd, name: &CString) -> io::Result<OwnedFd> {
    // SAFETY: openat on a NUL-terminated name; the result is a new
    // descriptor or -1.
    let fd = unsafe {
        libc::openat(
            at,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor openat just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Why `at`/`name` could not be opened as a directory, in words: a
/// symbolic link or something else that is not a directory.
fn explain_open_failure(at: RawFd, name: &CString, e: &io::Error) -> String {
    // SAFETY: a zeroed `stat` is a valid value for fstatat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat writes one `stat`; AT_SYMLINK_NOFOLLOW looks at the
    // link itself.
    let r = unsafe { libc::fstatat(at, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r == 0 {
        match st.st_mode & libc::S_IFMT {
            libc::S_IFLNK => return "it is a symbolic link (never followed there)".into(),
            libc::S_IFDIR => {}
            _ => return "it is not a directory".into(),
        }
    }
    format!("it cannot be opened: {e}")
}

impl PrivateDir {
    /// The directory at `path`, created (mode 0700, and any missing parent
    /// too) when it does not exist; an existing one must be a real
    /// directory owned by the caller with no group or other write
    /// permission. `env` names the variable that chooses another directory,
    /// for the error message.
    pub fn ensure(path: &Path, env: &str) -> io::Result<PrivateDir> {
        let c = cstr(path)?;
        let refuse = |why: String| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a safe runtime directory: {why}; remove it, or set {env} to a directory you own that only you can write to",
                    path.display()
                ),
            )
        };
        // SAFETY: mkdir on a NUL-terminated path.
        if unsafe { libc::mkdir(c.as_ptr(), 0o700) } != 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EEXIST) => {}
                Some(libc::ENOENT) => {
                    // Missing parents are ours to create too (mode 0700);
                    // existing ones are left as they are.
                    use std::os::unix::fs::DirBuilderExt;
                    std::fs::DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(path)
                        .map_err(|e| {
                            io::Error::new(
                                e.kind(),
                                format!(
                                    "cannot create {}: {e}; set {env} to a directory you own",
                                    path.display()
                                ),
                            )
                        })?;
                }
                _ => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "cannot create {}: {e}; set {env} to a directory you own",
                            path.display()
                        ),
                    ));
                }
            }
        }
        let fd = open_dir_nofollow(libc::AT_FDCWD, &c)
            .map_err(|e| refuse(explain_open_failure(libc::AT_FDCWD, &c, &e)))?;
        let st = fstat(fd.as_raw_fd())?;
        if let Some(why) = problem(&st) {
            return Err(refuse(why));
        }
        Ok(PrivateDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The subdirectory `name`, created with `mode` when missing; an
    /// existing one must pass the same checks as [`PrivateDir::ensure`].
    pub fn subdir(&self, name: &str, mode: u32) -> io::Result<PrivateDir> {
        let c = name_cstr(name)?;
        let path = self.path.join(name);
        // SAFETY: mkdirat relative to our directory descriptor.
        if unsafe { libc::mkdirat(self.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) } != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create {}: {e}", path.display()),
                ));
            }
        }
        self.checked_subdir(&c, path)
    }

    /// The existing subdirectory `name`, with the checks of
    /// [`PrivateDir::ensure`].
    pub fn existing_subdir(&self, name: &str) -> io::Result<PrivateDir> {
        let c = name_cstr(name)?;
        self.checked_subdir(&c, self.path.join(name))
    }

    fn checked_subdir(&self, c: &CString, path: PathBuf) -> io::Result<PrivateDir> {
        let c = c.clone();
        let refuse = |why: String| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not safe to use: {why}; remove it (it is rebuilt)",
                    path.display()
                ),
            )
        };
        let fd = open_dir_nofollow(self.as_raw_fd(), &c)
            .map_err(|e| refuse(explain_open_failure(self.as_raw_fd(), &c, &e)))?;
        let st = fstat(fd.as_raw_fd())?;
        if let Some(why) = problem(&st) {
            return Err(refuse(why));
        }
        Ok(PrivateDir { fd, path })
    }

    /// Creates the directory `name` (mode `mode`, less the umask); fails
    /// when anything of that name exists.
    pub fn create_dir_new(&self, name: &str, mode: u32) -> io::Result<()> {
        let c = name_cstr(name)?;
        // SAFETY: mkdirat relative to our directory descriptor.
        if unsafe { libc::mkdirat(self.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Whether an entry `name` exists (a symbolic link counts as itself).
    pub fn exists(&self, name: &str) -> bool {
        let Ok(c) = name_cstr(name) else {
            return false;
        };
        // SAFETY: a zeroed `stat` is a valid value for fstatat to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat relative to our descriptor, not following links.
        unsafe {
            libc::fstatat(
                self.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            ) == 0
        }
    }

    /// The contents of the regular file `name` (a symbolic link is not
    /// followed: ELOOP).
    pub fn read(&self, name: &str) -> io::Result<Vec<u8>> {
        let c = name_cstr(name)?;
        // SAFETY: openat relative to our descriptor; a new fd or -1.
        let fd = unsafe {
            libc::openat(
                self.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor openat just returned, owned by nobody else.
        let f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let mut out = Vec::new();
        io::Read::read_to_end(&mut &f, &mut out)?;
        Ok(out)
    }

    /// Replaces the file `name` with `contents` and mode `mode`,
    /// atomically: a new file (`O_CREAT | O_EXCL | O_NOFOLLOW`) renamed over
    /// it, so a symbolic link of that name is replaced, never written
    /// through.
    pub fn replace_file(&self, name: &str, contents: &[u8], mode: u32) -> io::Result<()> {
        name_cstr(name)?;
        let tmp = format!(
            ".{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        );
        let ct = name_cstr(&tmp)?;
        // SAFETY: openat relative to our descriptor; a new fd or -1.
        let fd = unsafe {
            libc::openat(
                self.as_raw_fd(),
                ct.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor openat just returned, owned by nobody else.
        let f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let written = io::Write::write_all(&mut &f, contents).and_then(|_| {
            // The umask narrowed the mode at creation; set it as asked.
            // SAFETY: fchmod on our own descriptor.
            if unsafe { libc::fchmod(f.as_raw_fd(), mode as libc::mode_t) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
        drop(f);
        let r = written.and_then(|_| self.rename(&tmp, name));
        if r.is_err() {
            // SAFETY: unlinkat relative to our descriptor.
            unsafe { libc::unlinkat(self.as_raw_fd(), ct.as_ptr(), 0) };
        }
        r
    }

    /// Renames the entry `from` to `to`, both in this directory.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (f, t) = (name_cstr(from)?, name_cstr(to)?);
        // SAFETY: renameat within our directory descriptor.
        if unsafe { libc::renameat(self.as_raw_fd(), f.as_ptr(), self.as_raw_fd(), t.as_ptr()) }
            != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("rocjitsu-dir-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }

    fn refusal(path: &Path) -> String {
        PrivateDir::ensure(path, "ROCJITSU_RUNTIME_DIR")
            .expect_err("a hostile directory must be refused")
            .to_string()
    }

    #[test]
    fn a_missing_directory_is_created_0700() {
        let base = scratch("create");
        let p = base.join("a/b/rt");
        let d = PrivateDir::ensure(&p, "ROCJITSU_RUNTIME_DIR").unwrap();
        assert_eq!(d.path(), p);
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o700);
        // An existing one of ours keeps its (safe) mode.
        let q = base.join("mine");
        std::fs::create_dir(&q).unwrap();
        std::fs::set_permissions(&q, std::fs::Permissions::from_mode(0o755)).unwrap();
        PrivateDir::ensure(&q, "ROCJITSU_RUNTIME_DIR").unwrap();
        assert_eq!(std::fs::metadata(&q).unwrap().mode() & 0o777, 0o755);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_world_writable_directory_is_refused_and_left_alone() {
        let base = scratch("0777");
        let p = base.join("rt");
        std::fs::create_dir(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = refusal(&p);
        assert!(e.contains(&p.display().to_string()), "{e}");
        assert!(e.contains("mode 0777"), "{e}");
        assert!(e.contains("set ROCJITSU_RUNTIME_DIR"), "{e}");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o777);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o770)).unwrap();
        assert!(refusal(&p).contains("mode 0770"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_symlink_is_refused_even_to_a_good_directory() {
        let base = scratch("link");
        let good = base.join("good");
        std::fs::create_dir(&good).unwrap();
        let p = base.join("rt");
        std::os::unix::fs::symlink(&good, &p).unwrap();
        let e = refusal(&p);
        assert!(e.contains("symbolic link"), "{e}");
        assert!(e.contains(&p.display().to_string()), "{e}");
        // A file is refused too.
        let f = base.join("file");
        std::fs::write(&f, "").unwrap();
        assert!(refusal(&f).contains("not a directory"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        if euid() != 0 {
            eprintln!("skipped: chown to another user needs root");
            return;
        }
        let base = scratch("owner");
        let p = base.join("rt");
        std::fs::create_dir(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
        let e = refusal(&p);
        assert!(e.contains("owned by uid 65534, not by you (uid 0)"), "{e}");
        // A subdirectory of another user inside one of ours, too.
        let mine = base.join("mine");
        let d = PrivateDir::ensure(&mine, "ROCJITSU_RUNTIME_DIR").unwrap();
        std::fs::create_dir(mine.join("bin")).unwrap();
        std::os::unix::fs::chown(mine.join("bin"), Some(65534), None).unwrap();
        let e = d.subdir("bin", 0o755).unwrap_err().to_string();
        assert!(e.contains("owned by uid 65534"), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn files_replace_symlinks_instead_of_writing_through_them() {
        let base = scratch("files");
        let d = PrivateDir::ensure(&base.join("rt"), "ROCJITSU_RUNTIME_DIR").unwrap();
        let victim = base.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, base.join("rt/lsmod")).unwrap();
        assert!(
            d.read("lsmod").is_err(),
            "a symlink must not be read through"
        );
        d.replace_file("lsmod", b"#!/bin/sh\n", 0o755).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let m = std::fs::symlink_metadata(base.join("rt/lsmod")).unwrap();
        assert!(m.file_type().is_file());
        assert_eq!(m.mode() & 0o777, 0o755);
        assert_eq!(d.read("lsmod").unwrap(), b"#!/bin/sh\n");
        assert!(d.subdir("../x", 0o700).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
