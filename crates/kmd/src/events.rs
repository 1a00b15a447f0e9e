//! KFD events: signal events (with a slot in the process's event page that
//! the GPU writes before raising its interrupt), memory-exception events
//! (raised on a GPU VM fault, carrying the fault's address) and the other
//! types, and `WAIT_EVENTS`.

use crate::Errno;
use crate::abi::{kfd, put_u32, put_u64};
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A signal slot that has not fired (`UNSIGNALED_EVENT_SLOT`).
pub const UNSIGNALED: u64 = u64::MAX;

struct Event {
    kind: u32,
    auto_reset: bool,
    signaled: bool,
    /// `struct kfd_hsa_memory_exception_data` of the last fault.
    exception: Option<[u8; 32]>,
}

#[derive(Default)]
struct State {
    events: HashMap<u32, Event>,
    /// Host address and size of the event page.
    page: Option<(u64, u64)>,
    next_other: u32,
}

/// A GPU VM fault as a memory-exception event reports it.
pub struct MemoryException {
    pub gpu_id: u32,
    pub va: u64,
    pub not_present: bool,
    pub read_only: bool,
    pub imprecise: bool,
    /// `ErrorType`: 0 none, 3 GPU hang.
    pub error_type: u32,
}

#[derive(Default)]
pub struct Events {
    state: Mutex<State>,
    cond: Condvar,
}

/// Result of `CREATE_EVENT`.
pub struct Created {
    pub id: u32,
    pub trigger_data: u32,
    pub slot: u32,
}

impl Events {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the event page (host address of the thunk's buffer). Slots
    /// start unsignaled, as the kernel initialises them.
    pub fn set_page(&self, host: u64, size: u64) -> Result<(), Errno> {
        let mut s = self.lock();
        if s.page.is_some() {
            return Err(Errno::EINVAL);
        }
        let slots = (size / 8).min(u64::from(kfd::SIGNAL_EVENT_LIMIT));
        for i in 0..slots {
            // SAFETY: `host` is the driver's mapping of the event-page
            // buffer, `size` bytes long; slot i lies inside it.
            unsafe { std::ptr::write_volatile((host + i * 8) as *mut u64, UNSIGNALED) };
        }
        s.page = Some((host, size));
        Ok(())
    }

    pub fn has_page(&self) -> bool {
        self.lock().page.is_some()
    }

    pub fn create(&self, kind: u32, auto_reset: bool) -> Result<Created, Errno> {
        let mut s = self.lock();
        let id = if kind == kfd::EVENT_SIGNAL {
            let slots = s
                .page
                .map_or(kfd::SIGNAL_EVENT_LIMIT, |(_, size)| (size / 8) as u32)
                .min(kfd::SIGNAL_EVENT_LIMIT);
            (0..slots)
                .find(|i| !s.events.contains_key(i))
                .ok_or(Errno::ENOSPC)?
        } else {
            // Other events take ids above the signal-slot range.
            let id = kfd::SIGNAL_EVENT_LIMIT + s.next_other;
            s.next_other += 1;
            id
        };
        s.events.insert(
            id,
            Event {
                kind,
                auto_reset,
                signaled: false,
                exception: None,
            },
        );
        Ok(Created {
            id,
            trigger_data: if kind == kfd::EVENT_SIGNAL { id } else { 0 },
            slot: if kind == kfd::EVENT_SIGNAL { id } else { 0 },
        })
    }

    pub fn destroy(&self, id: u32) -> Result<(), Errno> {
        self.lock()
            .events
            .remove(&id)
            .map(|_| ())
            .ok_or(Errno::EINVAL)
    }

    /// `SET_EVENT` (and the GPU's interrupt for a signal event).
    pub fn set(&self, id: u32) -> Result<(), Errno> {
        let mut s = self.lock();
        let e = s.events.get_mut(&id).ok_or(Errno::EINVAL)?;
        e.signaled = true;
        drop(s);
        self.cond.notify_all();
        Ok(())
    }

    pub fn reset(&self, id: u32) -> Result<(), Errno> {
        let mut s = self.lock();
        let e = s.events.get_mut(&id).ok_or(Errno::EINVAL)?;
        e.signaled = false;
        Ok(())
    }

    /// A GPU interrupt for signal event `id`: like the kernel, an unknown
    /// id is ignored.
    pub fn interrupt(&self, id: u32) {
        let _ = self.set(id);
    }

    /// Signals every memory-exception event with the fault's data.
    pub fn memory_exception(&self, x: &MemoryException) -> usize {
        let mut data = [0u8; 32];
        put_u32(&mut data, 0, u32::from(x.not_present));
        put_u32(&mut data, 4, u32::from(x.read_only));
        put_u32(&mut data, 8, 0);
        put_u32(&mut data, 12, u32::from(x.imprecise));
        put_u64(&mut data, 16, x.va);
        put_u32(&mut data, 24, x.gpu_id);
        put_u32(&mut data, 28, x.error_type);
        let mut s = self.lock();
        let mut n = 0;
        for e in s.events.values_mut() {
            if e.kind == kfd::EVENT_MEMORY {
                e.exception = Some(data);
                e.signaled = true;
                n += 1;
            }
        }
        drop(s);
        self.cond.notify_all();
        n
    }

    /// `WAIT_EVENTS`: `list` is the caller's array of `kfd_event_data`;
    /// returns the wait result, filling exception data of fired events.
    pub fn wait(&self, list: &mut [u8], all: bool, timeout_ms: u32) -> Result<u32, Errno> {
        let n = list.len() / kfd::EVENT_DATA_SIZE;
        let ids: Vec<u32> = (0..n)
            .map(|i| {
                let o = i * kfd::EVENT_DATA_SIZE + 40;
                u32::from_le_bytes([list[o], list[o + 1], list[o + 2], list[o + 3]])
            })
            .collect();
        let deadline = match timeout_ms {
            u32::MAX => None,
            ms => Some(Instant::now() + Duration::from_millis(u64::from(ms))),
        };
        let mut s = self.lock();
        for id in &ids {
            if !s.events.contains_key(id) {
                return Err(Errno::EINVAL);
            }
        }
        loop {
            let fired = |s: &State, id: &u32| s.events.get(id).is_some_and(|e| e.signaled);
            let done = if all {
                ids.iter().all(|id| fired(&s, id))
            } else {
                ids.iter().any(|id| fired(&s, id))
            };
            if done {
                for (i, id) in ids.iter().enumerate() {
                    if let Some(e) = s.events.get_mut(id)
                        && e.signaled
                    {
                        if let Some(x) = e.exception.take() {
                            let o = i * kfd::EVENT_DATA_SIZE;
                            list[o..o + 32].copy_from_slice(&x);
                        }
                        if e.auto_reset {
                            e.signaled = false;
                        }
                    }
                }
                return Ok(kfd::WAIT_COMPLETE);
            }
            let wait = match deadline {
                None => Duration::from_secs(3600),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Ok(kfd::WAIT_TIMEOUT);
                    }
                    d - now
                }
            };
            s = self
                .cond
                .wait_timeout(s, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn list(ids: &[u32]) -> Vec<u8> {
        let mut v = vec![0u8; ids.len() * kfd::EVENT_DATA_SIZE];
        for (i, id) in ids.iter().enumerate() {
            put_u32(&mut v, i * kfd::EVENT_DATA_SIZE + 40, *id);
        }
        v
    }

    #[test]
    fn wait_returns_when_another_thread_signals() {
        let ev = Arc::new(Events::default());
        let a = ev.create(kfd::EVENT_SIGNAL, true).unwrap();
        let b = ev.create(kfd::EVENT_SIGNAL, true).unwrap();
        assert_ne!(a.id, b.id);
        let mut l = list(&[a.id, b.id]);
        assert_eq!(ev.wait(&mut l, false, 0).unwrap(), kfd::WAIT_TIMEOUT);
        let e2 = ev.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            e2.interrupt(b.id);
        });
        assert_eq!(ev.wait(&mut l, false, 5000).unwrap(), kfd::WAIT_COMPLETE);
        t.join().unwrap();
        // Auto-reset: the event fired once.
        assert_eq!(ev.wait(&mut l, false, 0).unwrap(), kfd::WAIT_TIMEOUT);
        // Wait-for-all needs both.
        ev.set(a.id).unwrap();
        assert_eq!(ev.wait(&mut l, true, 10).unwrap(), kfd::WAIT_TIMEOUT);
        ev.set(b.id).unwrap();
        assert_eq!(ev.wait(&mut l, true, 10).unwrap(), kfd::WAIT_COMPLETE);
        assert_eq!(ev.wait(&mut list(&[999]), false, 0), Err(Errno::EINVAL));
    }

    #[test]
    fn memory_exception_carries_the_address() {
        let ev = Events::default();
        let m = ev.create(kfd::EVENT_MEMORY, true).unwrap();
        assert!(m.id >= kfd::SIGNAL_EVENT_LIMIT);
        let n = ev.memory_exception(&MemoryException {
            gpu_id: 7,
            va: 0xdead_0000,
            not_present: true,
            read_only: false,
            imprecise: false,
            error_type: 0,
        });
        assert_eq!(n, 1);
        let mut l = list(&[m.id]);
        assert_eq!(ev.wait(&mut l, false, 0).unwrap(), kfd::WAIT_COMPLETE);
        assert_eq!(
            u64::from_le_bytes(l[16..24].try_into().unwrap()),
            0xdead_0000
        );
        assert_eq!(u32::from_le_bytes(l[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(l[24..28].try_into().unwrap()), 7);
    }
}
