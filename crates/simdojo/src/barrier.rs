//! The epoch barrier: spins for a few microseconds, then blocks.
//!
//! `std::sync::Barrier` always blocks on a condition variable, which costs
//! a futex wake per waiter and 5-40 us per epoch with a few threads: at a
//! GPU model's epoch of ~100 ns of simulated time that is a large part of
//! each window. Threads that arrive close together (the common case when
//! partitions are balanced and every thread has a core) pass here without
//! a system call; a thread that waits longer than [`SPIN`] blocks as with
//! the std barrier, so an oversubscribed machine does not burn its cores.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a waiter spins before it blocks.
const SPIN: Duration = Duration::from_micros(50);

pub(crate) struct EpochBarrier {
    n: usize,
    /// Arrivals in the current generation.
    count: AtomicUsize,
    /// Bumped by the last arrival of each generation.
    generation: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl EpochBarrier {
    pub(crate) fn new(n: usize) -> EpochBarrier {
        EpochBarrier {
            n: n.max(1),
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Returns once all `n` threads have called `wait` for this generation.
    /// Everything a thread wrote before its `wait` is visible to every
    /// thread after theirs.
    pub(crate) fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // Reset before the new generation is visible: a thread that
            // sees it may arrive at the next barrier at once.
            self.count.store(0, Ordering::Relaxed);
            let guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.generation
                .store(generation.wrapping_add(1), Ordering::Release);
            drop(guard);
            self.cv.notify_all();
            return;
        }
        let start = Instant::now();
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(64) {
                if start.elapsed() > SPIN {
                    break;
                }
                std::thread::yield_now();
            }
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.generation.load(Ordering::Acquire) == generation {
            guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Every thread adds its phase number to a shared sum between barriers;
    /// after each barrier every thread must see all adds of that phase and
    /// none of the next.
    #[test]
    fn no_thread_runs_ahead() {
        for threads in [1, 2, 3, 8] {
            let b = EpochBarrier::new(threads);
            let sum = AtomicU64::new(0);
            let phases = 2000u64;
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        for p in 0..phases {
                            sum.fetch_add(1, Ordering::Relaxed);
                            b.wait();
                            assert_eq!(sum.load(Ordering::Relaxed), (p + 1) * threads as u64);
                            b.wait();
                        }
                    });
                }
            });
            assert_eq!(sum.load(Ordering::Relaxed), phases * threads as u64);
        }
    }
}
