//! The file descriptors that stand for our device files. Each is a real
//! descriptor (a memfd), so the process can pass it around, poll it or
//! close it like any other; only its ioctls, mmaps and fstat are ours.

use rocjitsu_kmd::DeviceFile;
use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

static TABLE: RwLock<Option<HashMap<i32, DeviceFile>>> = RwLock::new(None);
/// Fast path: no device file was ever opened.
static ANY: AtomicBool = AtomicBool::new(false);

pub fn get(fd: i32) -> Option<DeviceFile> {
    if !ANY.load(Ordering::Relaxed) || fd < 0 {
        return None;
    }
    let t = TABLE.read().unwrap_or_else(|e| e.into_inner());
    t.as_ref().and_then(|m| m.get(&fd).copied())
}

pub fn insert(fd: i32, dev: DeviceFile) {
    let mut t = TABLE.write().unwrap_or_else(|e| e.into_inner());
    t.get_or_insert_with(HashMap::new).insert(fd, dev);
    ANY.store(true, Ordering::Relaxed);
}

pub fn remove(fd: i32) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    let mut t = TABLE.write().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = t.as_mut() {
        m.remove(&fd);
    }
}
