//! KFD events: signal events (with a slot in the process's event page that
//! the GPU writes before raising its interrupt), memory-exception events
//! (raised on a GPU VM fault, carrying the fault's address) and the other
//! types, and `WAIT_EVENTS`.

use crate::Errno;
use crate::abi::{get, kfd, put};
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A signal slot that has not fired (`UNSIGNALED_EVENT_SLOT`).
pub const UNSIGNALED: u64 = u64::MAX;

struct Event {
    kind: u32,
    auto_reset: bool,
    signaled: bool,
    /// KFD's `event_age`: 1 at creation, bumped every time the event fires
    /// (skipping 0, which means "no age" in a wait request).
    age: u64,
    /// `struct kfd_hsa_memory_exception_data` of the last fault.
    exception: Option<[u8; 32]>,
}

/// One event of one thread inside `WAIT_EVENTS`.
struct Watch {
    id: u32,
    activated: bool,
    /// The caller passed the age it last saw (`last_event_age`), so it gets
    /// the current age back.
    age_enabled: bool,
    /// The event was destroyed while waited on.
    gone: bool,
}

/// One thread inside `WAIT_EVENTS`: the events it waits for and which of
/// them have fired for it. As in the kernel, firing an event activates
/// every thread waiting on it at that moment; an auto-reset event is
/// consumed by those waiters (or, when nobody waits, by the next one).
struct Waiter {
    events: Vec<Watch>,
}

#[derive(Default)]
struct State {
    events: HashMap<u32, Event>,
    waiters: HashMap<u64, Waiter>,
    next_waiter: u64,
    /// Host address and size of the event page.
    page: Option<(u64, u64)>,
    next_other: u32,
    /// The process is gone: waits fail.
    closed: bool,
}

impl State {
    /// Fires event `id` (it exists): activates the threads waiting on it
    /// (KFD's `set_event`: waiters still queued, even those already
    /// activated, count), or leaves it signaled for the next one.
    fn fire(&mut self, id: u32) {
        let mut queued = false;
        for w in self.waiters.values_mut() {
            for e in &mut w.events {
                if e.id == id {
                    e.activated = true;
                    queued = true;
                }
            }
        }
        if let Some(e) = self.events.get_mut(&id) {
            e.signaled = !e.auto_reset || !queued;
            e.age = match e.age.wrapping_add(1) {
                0 => 2,
                a => a,
            };
        }
    }
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

/// `KFD_EVENT_TIMEOUT_INFINITE`.
const TIMEOUT_INFINITE: u32 = u32::MAX;

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

    /// The events' state for a checkpoint: the event page's host address
    /// and size, and every event (threads inside `WAIT_EVENTS` are not
    /// state: a waiter asks again, and an event's age tells it what it
    /// missed).
    pub fn snapshot(&self) -> (Option<(u64, u64)>, u32, Vec<crate::checkpoint::EventState>) {
        let s = self.lock();
        let mut events: Vec<crate::checkpoint::EventState> = s
            .events
            .iter()
            .map(|(&id, e)| crate::checkpoint::EventState {
                id,
                kind: e.kind,
                auto_reset: e.auto_reset,
                signaled: e.signaled,
                age: e.age,
                exception: e.exception.as_ref().map(|x| crate::checkpoint::hex(x)),
            })
            .collect();
        events.sort_by_key(|e| e.id);
        (s.page, s.next_other, events)
    }

    /// Restores a checkpoint's events into this (new) process: the event
    /// page at host address `page` (its slots are the restored memory's,
    /// not reset), the events with their state and ages.
    pub fn restore(
        &self,
        page: Option<(u64, u64)>,
        next_other: u32,
        events: &[crate::checkpoint::EventState],
    ) -> Result<(), String> {
        let mut s = self.lock();
        if !s.events.is_empty() || s.page.is_some() {
            return Err("events are restored into a new process only".into());
        }
        for e in events {
            let exception = match &e.exception {
                None => None,
                Some(h) => Some(
                    crate::checkpoint::unhex(h)
                        .and_then(|b| <[u8; 32]>::try_from(b).ok())
                        .ok_or_else(|| {
                            format!("event {}: exception data is not 32 bytes of hex", e.id)
                        })?,
                ),
            };
            let signal_range = e.id != 0 && e.id < kfd::SIGNAL_EVENT_LIMIT;
            let other_range =
                e.id >= kfd::SIGNAL_EVENT_LIMIT && e.id - kfd::SIGNAL_EVENT_LIMIT < next_other;
            let fits = if e.kind == kfd::EVENT_SIGNAL {
                signal_range
            } else {
                other_range
            };
            if !fits || e.kind > kfd::EVENT_MEMORY || s.events.contains_key(&e.id) {
                return Err(format!(
                    "event {} of type {} cannot be restored (an id outside its type's range, an unknown type, or a duplicate)",
                    e.id, e.kind
                ));
            }
            s.events.insert(
                e.id,
                Event {
                    kind: e.kind,
                    auto_reset: e.auto_reset,
                    signaled: e.signaled,
                    age: e.age,
                    exception,
                },
            );
        }
        s.page = page;
        s.next_other = next_other;
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
            // Id 0 is reserved, as in KFD (its event page slot is unused).
            (1..slots)
                .find(|i| !s.events.contains_key(i))
                .ok_or(Errno::ENOSPC)?
        } else {
            // Other events take ids above the signal-slot range.
            // Ids are never reused: once they run out, ENOSPC.
            let id = kfd::SIGNAL_EVENT_LIMIT
                .checked_add(s.next_other)
                .ok_or(Errno::ENOSPC)?;
            s.next_other = s.next_other.checked_add(1).ok_or(Errno::ENOSPC)?;
            id
        };
        s.events.insert(
            id,
            Event {
                kind,
                auto_reset,
                signaled: false,
                age: 1,
                exception: None,
            },
        );
        tracing::trace!("event {id} created: type {kind}, auto-reset {auto_reset}");
        Ok(Created {
            id,
            trigger_data: id,
            slot: if kind == kfd::EVENT_SIGNAL { id } else { 0 },
        })
    }

    /// `DESTROY_EVENT`: threads waiting on the event wake, and their wait
    /// fails (EIO), as in the kernel.
    pub fn destroy(&self, id: u32) -> Result<(), Errno> {
        let mut s = self.lock();
        s.events.remove(&id).ok_or(Errno::EINVAL)?;
        for w in s.waiters.values_mut() {
            for e in &mut w.events {
                if e.id == id {
                    e.gone = true;
                }
            }
        }
        drop(s);
        self.cond.notify_all();
        Ok(())
    }

    /// The process ends: every thread inside `WAIT_EVENTS` returns EIO, as
    /// do later waits.
    pub fn shutdown(&self) {
        let mut s = self.lock();
        s.closed = true;
        for w in s.waiters.values_mut() {
            for e in &mut w.events {
                e.gone = true;
            }
        }
        drop(s);
        self.cond.notify_all();
    }

    /// `SET_EVENT` (and the GPU's interrupt for a signal event).
    pub fn set(&self, id: u32) -> Result<(), Errno> {
        tracing::trace!("event {id} set");
        let mut s = self.lock();
        if !s.events.contains_key(&id) {
            return Err(Errno::EINVAL);
        }
        s.fire(id);
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

    /// An end-of-pipe interrupt with context id `ctx` (a PM4 RELEASE_MEM),
    /// as KFD's `kfd_signal_event_interrupt` takes it with 32 valid id
    /// bits: the signal event of that id if its slot in the event page was
    /// written (is not UNSIGNALED); otherwise, the id being no event's,
    /// every signal event whose slot was written. Each event set has its
    /// slot reset to UNSIGNALED (KFD's `acknowledge_signal`). Without an
    /// event page, nothing is set.
    pub fn eop_interrupt(&self, ctx: u32) {
        let mut s = self.lock();
        let Some((host, size)) = s.page else {
            return;
        };
        let slots = (size / 8).min(u64::from(kfd::SIGNAL_EVENT_LIMIT));
        let slot = |id: u32| (host + u64::from(id) * 8) as *mut u64;
        let written = |id: u32| {
            // SAFETY: `host` is the driver's mapping of the event page,
            // `size` bytes long, and `id` is below its slot count.
            u64::from(id) < slots && unsafe { std::ptr::read_volatile(slot(id)) } != UNSIGNALED
        };
        let signal = |e: &Event| e.kind == kfd::EVENT_SIGNAL;
        let ids: Vec<u32> = if s.events.get(&ctx).is_some_and(signal) && written(ctx) {
            vec![ctx]
        } else {
            let mut ids: Vec<u32> = s
                .events
                .iter()
                .filter(|&(&id, e)| signal(e) && written(id))
                .map(|(&id, _)| id)
                .collect();
            ids.sort_unstable();
            ids
        };
        tracing::trace!("EOP interrupt, context id {ctx}: events {ids:?}");
        for &id in &ids {
            // SAFETY: as above (`written` checked the bound).
            unsafe { std::ptr::write_volatile(slot(id), UNSIGNALED) };
            s.fire(id);
        }
        drop(s);
        self.cond.notify_all();
    }

    /// Signals every memory-exception event with the fault's data.
    pub fn memory_exception(&self, x: &MemoryException) -> usize {
        use kfd::memory_exception_data as m;
        let mut data = [0u8; m::SIZE];
        put(&mut data, m::NOT_PRESENT, u32::from(x.not_present));
        put(&mut data, m::READ_ONLY, u32::from(x.read_only));
        put(&mut data, m::NO_EXECUTE, 0);
        put(&mut data, m::IMPRECISE, u32::from(x.imprecise));
        put(&mut data, m::VA, x.va);
        put(&mut data, m::GPU_ID, x.gpu_id);
        put(&mut data, m::ERROR_TYPE, x.error_type);
        let mut s = self.lock();
        let mut ids = Vec::new();
        for (id, e) in s.events.iter_mut() {
            if e.kind == kfd::EVENT_MEMORY {
                e.exception = Some(data);
                ids.push(*id);
            }
        }
        for &id in &ids {
            s.fire(id);
        }
        let n = ids.len();
        drop(s);
        self.cond.notify_all();
        n
    }

    /// `WAIT_EVENTS`: `list` is the caller's array of `kfd_event_data`;
    /// returns the wait result, filling in the exception data of fired
    /// memory events and the current age of fired signal events whose
    /// caller passed an age.
    pub fn wait(&self, list: &mut [u8], all: bool, timeout_ms: u32) -> Result<u32, Errno> {
        use kfd::event_data as d;
        let ids: Vec<u32> = list
            .chunks_exact(d::SIZE)
            .map(|e| get(e, d::EVENT_ID))
            .collect();
        tracing::trace!("wait events {ids:?} all={all} timeout={timeout_ms}");
        let deadline = match timeout_ms {
            TIMEOUT_INFINITE => None,
            ms => Some(Instant::now() + Duration::from_millis(u64::from(ms.min(0x7fff_ffff)))),
        };
        let mut s = self.lock();
        if s.closed {
            return Err(Errno::EIO);
        }
        if ids.iter().any(|id| !s.events.contains_key(id)) {
            return Err(Errno::EINVAL);
        }
        // Register (KFD's init_event_waiter): an event already signaled
        // counts as fired for this waiter and, if auto-reset, is consumed
        // by it; a signal event whose age moved past the caller's
        // `last_event_age` has fired since the caller last looked.
        let mut events = Vec::with_capacity(ids.len());
        for (entry, &id) in list.chunks_exact(d::SIZE).zip(&ids) {
            let e = s.events.get_mut(&id).expect("checked above");
            let mut activated = e.signaled;
            e.signaled = e.signaled && !e.auto_reset;
            let last_age = get(entry, d::LAST_EVENT_AGE);
            let age_enabled = e.kind == kfd::EVENT_SIGNAL && last_age != 0;
            if age_enabled && e.age != last_age {
                activated = true;
            }
            events.push(Watch {
                id,
                activated,
                age_enabled,
                gone: false,
            });
        }
        let me = s.next_waiter;
        s.next_waiter += 1;
        s.waiters.insert(me, Waiter { events });
        let result = loop {
            let w = &s.waiters[&me];
            if w.events.iter().any(|e| e.gone) {
                break Err(Errno::EIO);
            }
            let done = if all {
                w.events.iter().all(|e| e.activated)
            } else {
                w.events.iter().any(|e| e.activated)
            };
            if done {
                break Ok(kfd::WAIT_COMPLETE);
            }
            let wait = match deadline {
                None => Duration::from_secs(3600),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break Ok(kfd::WAIT_TIMEOUT);
                    }
                    d - now
                }
            };
            s = self
                .cond
                .wait_timeout(s, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        let w = s.waiters.remove(&me).expect("registered above");
        if result == Ok(kfd::WAIT_COMPLETE) {
            for (entry, watch) in list.chunks_exact_mut(d::SIZE).zip(&w.events) {
                let Some(e) = s.events.get_mut(&watch.id) else {
                    continue;
                };
                if !watch.activated {
                    continue;
                }
                if e.kind == kfd::EVENT_MEMORY {
                    let data = e.exception.unwrap_or_default();
                    put(entry, d::MEMORY_EXCEPTION_DATA, data);
                } else if watch.age_enabled {
                    put(entry, d::LAST_EVENT_AGE, e.age);
                }
            }
        }
        tracing::trace!(
            "wait events {ids:?} -> {result:?}, fired {:?}",
            w.events.iter().map(|e| e.activated).collect::<Vec<_>>()
        );
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn list(ids: &[u32]) -> Vec<u8> {
        let mut v = vec![0u8; ids.len() * kfd::event_data::SIZE];
        for (e, id) in v.chunks_exact_mut(kfd::event_data::SIZE).zip(ids) {
            put(e, kfd::event_data::EVENT_ID, *id);
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
        // Wait-for-all needs both (a waiter that times out has consumed
        // what fired for it, as in the kernel).
        ev.set(a.id).unwrap();
        assert_eq!(ev.wait(&mut l, true, 10).unwrap(), kfd::WAIT_TIMEOUT);
        ev.set(a.id).unwrap();
        ev.set(b.id).unwrap();
        assert_eq!(ev.wait(&mut l, true, 10).unwrap(), kfd::WAIT_COMPLETE);
        assert_eq!(ev.wait(&mut list(&[999]), false, 0), Err(Errno::EINVAL));
    }

    #[test]
    fn every_thread_waiting_on_an_event_wakes_when_it_fires() {
        // ROCr waits on one signal's event from two threads at once (the
        // caller and its async-handler thread); both must wake, as KFD
        // activates every waiter.
        let ev = Arc::new(Events::default());
        let a = ev.create(kfd::EVENT_SIGNAL, true).unwrap();
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let e = ev.clone();
                std::thread::spawn(move || e.wait(&mut list(&[a.id]), false, 5000).unwrap())
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        ev.interrupt(a.id);
        for w in waiters {
            assert_eq!(w.join().unwrap(), kfd::WAIT_COMPLETE);
        }
        // Consumed by its waiters: a later wait does not see it.
        assert_eq!(
            ev.wait(&mut list(&[a.id]), false, 0).unwrap(),
            kfd::WAIT_TIMEOUT
        );
        // Fired with nobody waiting: the next waiter sees it, once.
        ev.interrupt(a.id);
        assert_eq!(
            ev.wait(&mut list(&[a.id]), false, 0).unwrap(),
            kfd::WAIT_COMPLETE
        );
        assert_eq!(
            ev.wait(&mut list(&[a.id]), false, 0).unwrap(),
            kfd::WAIT_TIMEOUT
        );
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
        use kfd::memory_exception_data as m;
        assert_eq!(get(&l, m::VA), 0xdead_0000);
        assert_eq!(get(&l, m::NOT_PRESENT), 1);
        assert_eq!(get(&l, m::GPU_ID), 7);
    }

    #[test]
    fn destroying_an_event_fails_its_waiters() {
        // KFD clears the waiter's event and the wait ends with EIO.
        let ev = Arc::new(Events::default());
        let a = ev.create(kfd::EVENT_SIGNAL, true).unwrap();
        let e2 = ev.clone();
        let t = std::thread::spawn(move || e2.wait(&mut list(&[a.id]), false, 5000));
        std::thread::sleep(Duration::from_millis(50));
        ev.destroy(a.id).unwrap();
        assert_eq!(t.join().unwrap(), Err(Errno::EIO));
        assert_eq!(ev.destroy(a.id), Err(Errno::EINVAL));
    }

    #[test]
    fn eop_interrupts_set_events_whose_slot_was_written() {
        // KFD's kfd_signal_event_interrupt: the context id's event if its
        // slot was written, else every event whose slot was; slots are
        // reset to UNSIGNALED when their event is set.
        let mut page = vec![0u64; 64];
        let ev = Events::default();
        ev.set_page(page.as_mut_ptr() as u64, 8 * 64).unwrap();
        let (a, b, c) = (
            ev.create(kfd::EVENT_SIGNAL, false).unwrap(),
            ev.create(kfd::EVENT_SIGNAL, false).unwrap(),
            ev.create(kfd::EVENT_SIGNAL, false).unwrap(),
        );
        let slot = |id: u32| page.as_ptr().wrapping_add(id as usize) as *mut u64;
        // SAFETY: the ids are below 64, inside `page`, which outlives them.
        let write = |id: u32| unsafe { std::ptr::write_volatile(slot(id), u64::from(id)) };
        // SAFETY: as above.
        let read = |id: u32| unsafe { std::ptr::read_volatile(slot(id)) };
        let fired = |id: u32| {
            let r = ev.wait(&mut list(&[id]), false, 0).unwrap() == kfd::WAIT_COMPLETE;
            ev.reset(id).unwrap();
            r
        };
        // The context id's slot was not written: nothing is set.
        ev.eop_interrupt(a.id);
        assert!(!fired(a.id) && !fired(b.id) && !fired(c.id));
        // It was: only that event.
        write(a.id);
        write(b.id);
        ev.eop_interrupt(a.id);
        assert!(fired(a.id) && !fired(b.id) && !fired(c.id));
        assert_eq!(read(a.id), UNSIGNALED);
        assert_eq!(read(b.id), u64::from(b.id));
        // A context id of no event (tinygrad on gfx9 sends 0): every
        // event whose slot was written.
        write(c.id);
        ev.eop_interrupt(0);
        assert!(!fired(a.id) && fired(b.id) && fired(c.id));
        assert_eq!((read(b.id), read(c.id)), (UNSIGNALED, UNSIGNALED));
    }
}
